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

void make_socketpair(int fds[2]) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
}

namespace {

// Replaces, in place, every byte of the NUL-terminated s that does not belong to a well-formed UTF-8
// sequence (stray continuation bytes, truncated or overlong sequences, surrogates, past U+10FFFF)
// with '?'. A message's text ends up in JSON answers, which take only UTF-8: set_text may cut a
// character in two, and a worker may pass on bytes from a file name or a generator.
void force_utf8(char* s) {
  auto* p = reinterpret_cast<unsigned char*>(s);
  while (*p) {
    const unsigned c = *p;
    const int more = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
    bool ok = more >= 0;
    uint32_t cp = c & (0x7fu >> (more > 0 ? more + 1 : 0));
    for (int i = 1; ok && i <= more; i++) {
      ok = (p[i] & 0xc0) == 0x80;  // the terminating NUL fails this too
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    static const uint32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    if (ok && (cp < kMin[more] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (!ok) {
      *p++ = '?';
      continue;
    }
    p += 1 + more;
  }
}

}  // namespace

bool decode_msg(const void* data, size_t len, Msg& m) {
  if (len != sizeof(Msg)) return false;
  Msg tmp;
  std::memcpy(&tmp, data, sizeof(Msg));
  if (tmp.magic != kMsgMagic || tmp.version != kMsgVersion) return false;
  tmp.text[sizeof(tmp.text) - 1] = 0;
  tmp.name[sizeof(tmp.name) - 1] = 0;
  force_utf8(tmp.text);
  force_utf8(tmp.name);
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

void Channel::stop_receiving() { ::shutdown(fd_, SHUT_RD); }

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
