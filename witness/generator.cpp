// The caller's side of a witness generator process (see witness/driver/driver.cpp for the other).
#include "witness/generator.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace cuzk::witness {

namespace {

// The wire format shared with the driver (fixed-size, native byte order: both run on one host).
constexpr char kReqMagic[8] = {'C', 'Z', 'K', 'W', 'R', 'E', 'Q', '1'};
constexpr char kRepMagic[8] = {'C', 'Z', 'K', 'W', 'R', 'E', 'P', '1'};
struct Request {
  char magic[8];
  uint64_t n_inputs, offset, n_witness;
  uint32_t path_len, reserved;
};
struct Reply {
  char magic[8];
  int32_t status, detail;
  double ms;
  uint32_t msg_len, reserved;
};
static_assert(sizeof(Request) == 40 && sizeof(Reply) == 32, "the driver's wire format");

std::string fmt_seconds(uint32_t ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", ms / 1000.0);
  return b;
}

bool send_all(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n) {
    ssize_t r = ::send(fd, b, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

bool recv_all(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::recv(fd, b, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

}  // namespace

Generator::Generator(Manifest m) : m_(std::move(m)) {}

Generator::~Generator() { stop(); }

void Generator::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw WitnessError(std::string("socketpair: ") + std::strerror(errno));
  if (sv[1] == 3) {  // dup2 onto itself would keep close-on-exec
    int d = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 4);
    ::close(sv[1]);
    sv[1] = d;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  const std::string exe = m_.generator_path(), dat = m_.dat_path(), parent = std::to_string(::getpid());
  char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("--serve"), const_cast<char*>(dat.c_str()),
                  const_cast<char*>(parent.c_str()), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    throw WitnessError(exe + ": cannot start: " + std::strerror(rc));
  }
  pid_ = pid;
  fd_ = sv[0];
}

void Generator::stop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

GenResult Generator::compute(const std::vector<Value>& inputs, const std::string& dest, uint64_t offset,
                             uint32_t timeout_ms, const std::function<bool()>& cancelled) {
  const auto began = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  };
  GenResult res;
  auto finish = [&](GenResult::Kind k, std::string msg) {
    res.kind = k;
    res.message = std::move(msg);
    res.ms = elapsed_ms();
    return res;
  };
  if (inputs.size() != m_.n_inputs)
    throw WitnessError("expected " + std::to_string(m_.n_inputs) + " input values, got " + std::to_string(inputs.size()));
  Request rq{};
  std::memcpy(rq.magic, kReqMagic, 8);
  rq.n_inputs = inputs.size();
  rq.offset = offset;
  rq.n_witness = m_.n_witness;
  rq.path_len = uint32_t(dest.size());
  auto send_request = [&] {
    return send_all(fd_, &rq, sizeof rq) && send_all(fd_, dest.data(), dest.size()) &&
           send_all(fd_, inputs.data(), inputs.size() * sizeof(Value));
  };
  if (pid_ < 0) start();
  if (!send_request()) {  // the process died since the last witness: start a fresh one, once
    stop();
    start();
    if (!send_request()) {
      stop();
      return finish(GenResult::Crashed, "the witness generator process exited at start (" + m_.generator_path() + ")");
    }
  }
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, 20);
    if (r < 0 && errno != EINTR) {
      stop();
      return finish(GenResult::Crashed, std::string("poll: ") + std::strerror(errno));
    }
    if (r > 0) break;
    if (cancelled && cancelled()) {
      stop();
      return finish(GenResult::Cancelled, "cancelled");
    }
    if (timeout_ms && elapsed_ms() >= timeout_ms) {
      stop();
      return finish(GenResult::Timeout,
                    "the witness generator ran longer than " + fmt_seconds(timeout_ms) + " and was killed");
    }
  }
  Reply rp{};
  std::string msg;
  if (!recv_all(fd_, &rp, sizeof rp) || std::memcmp(rp.magic, kRepMagic, 8) != 0 || rp.msg_len > (1u << 20) ||
      !(msg.resize(rp.msg_len), recv_all(fd_, msg.data(), msg.size()))) {
    int st = 0;
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    ::close(fd_);
    fd_ = -1;
    return finish(GenResult::Crashed, "the witness generator process died" +
                                          (WIFSIGNALED(st) ? " (signal " + std::to_string(WTERMSIG(st)) + ")"
                                                           : std::string()));
  }
  switch (rp.status) {
    case 0: return finish(GenResult::Ok, "");
    case 1: return finish(GenResult::Assert, msg);
    default: return finish(GenResult::Crashed, "the generated code " + msg);
  }
}

std::string wtns_header(const Manifest& m) {
  // snarkjs's layout: "wtns", version 2, 2 sections; section 1 = n8, prime, nWitness; section 2 = values.
  std::string hdr;
  auto u32 = [&](uint32_t v) { hdr.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { hdr.append(reinterpret_cast<const char*>(&v), 8); };
  hdr.append("wtns", 4);
  u32(2);
  u32(2);
  u32(1);
  u64(4 + 32 + 4);
  u32(32);
  hdr.append(reinterpret_cast<const char*>(m.prime.data()), 32);
  u32(m.n_witness);
  u32(2);
  u64(uint64_t(m.n_witness) * 32);
  return hdr;
}

}  // namespace cuzk::witness
