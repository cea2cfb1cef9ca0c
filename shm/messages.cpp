// Message framing on SOCK_SEQPACKET: one send is one message, so no stream reassembly is needed.
#include "shm/messages.hpp"

#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace cuzk::shm {

const char* to_string(MsgType t) {
  switch (t) {
    case MsgType::Hello: return "HELLO";
    case MsgType::Heartbeat: return "HEARTBEAT";
    case MsgType::Synthesize: return "SYNTHESIZE";
    case MsgType::SynthDone: return "SYNTH_DONE";
    case MsgType::Prove: return "PROVE";
    case MsgType::ProveDone: return "PROVE_DONE";
    case MsgType::Event: return "EVENT";
    case MsgType::Shutdown: return "SHUTDOWN";
  }
  return "UNKNOWN";
}

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void make_socketpair(int fds[2]) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
}

bool decode_msg(const void* data, size_t len, Msg& m) {
  if (len != sizeof(Msg)) return false;
  Msg tmp;
  std::memcpy(&tmp, data, sizeof(Msg));
  if (tmp.magic != kMsgMagic || tmp.version != kMsgVersion) return false;
  tmp.text[sizeof(tmp.text) - 1] = 0;
  tmp.name[sizeof(tmp.name) - 1] = 0;
  m = tmp;
  return true;
}

bool Channel::send(const Msg& m) {
  std::lock_guard<std::mutex> lock(send_mu_);
  for (;;) {
    ssize_t n = ::send(fd_, &m, sizeof(m), MSG_NOSIGNAL);
    if (n == ssize_t(sizeof(m))) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool Channel::recv(Msg& m) {
  alignas(8) char buf[sizeof(Msg) + 16];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (decode_msg(buf, size_t(n), m)) return true;
    dropped_++;
  }
}

}  // namespace cuzk::shm
