// Message framing on SOCK_SEQPACKET: one send is one message, so no stream reassembly is needed.
#include "shm/messages.hpp"

#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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
    case MsgType::Key: return "KEY";
  }
  return "UNKNOWN";
}

Msg Msg::hello(int32_t device, uint32_t threads, uint64_t key_budget, const std::string& backend,
               const std::string& cpus) {
  Msg m(MsgType::Hello);
  Hello& h = m.body.hello;
  h.device = device, h.threads = threads, h.key_budget = key_budget;
  set_text(h.backend, backend);
  set_text(h.cpus, cpus);
  return m;
}

Msg Msg::synthesize(const SlotWork& w, bool from_inputs, const std::string& input) {
  Msg m(MsgType::Synthesize);
  m.body.synthesize.work = w;
  m.body.synthesize.from_inputs = from_inputs;
  set_text(m.body.synthesize.input, input);
  return m;
}

Msg Msg::synth_done(const SlotWork& w, int32_t status, WitnessEngine engine, double synth_ms, double witness_ms,
                    double eval_ms, const std::string& error, bool traced) {
  Msg m(MsgType::SynthDone);
  SynthDone& d = m.body.synth_done;
  d.work = w, d.status = status, d.engine = engine, d.traced = traced;
  d.synth_ms = synth_ms, d.witness_ms = witness_ms, d.eval_ms = eval_ms;
  set_text(d.error, error);
  return m;
}

Msg Msg::prove(const SlotWork& w) {
  Msg m(MsgType::Prove);
  m.body.prove.work = w;
  return m;
}

Msg Msg::prove_done(const SlotWork& w, int32_t status, double prove_ms, const std::string& error) {
  Msg m(MsgType::ProveDone);
  ProveDone& d = m.body.prove_done;
  d.work = w, d.status = status, d.prove_ms = prove_ms;
  set_text(d.error, error);
  return m;
}

Msg Msg::event(uint64_t job, const std::string& name, const std::string& kv) {
  Msg m(MsgType::Event);
  m.body.event.job = job;
  set_text(m.body.event.name, name);
  set_text(m.body.event.kv, kv);
  return m;
}

Msg Msg::key(uint32_t circuit, bool resident, uint64_t bytes, double load_ms) {
  Msg m(MsgType::Key);
  Key& k = m.body.key;
  k.circuit = circuit, k.resident = resident, k.bytes = bytes, k.load_ms = load_ms;
  return m;
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

// A text field terminated within its bytes, then valid UTF-8.
template <size_t N>
void clean(char (&field)[N]) {
  field[N - 1] = 0;
  force_utf8(field);
}

}  // namespace

bool decode_msg(const void* data, size_t len, Msg& m) {
  if (len != sizeof(Msg)) return false;
  Msg tmp;
  std::memcpy(static_cast<void*>(&tmp), data, sizeof(Msg));
  if (tmp.magic != kMsgMagic || tmp.version != kMsgVersion) return false;
  switch (tmp.kind()) {
    case MsgType::Hello:
      clean(tmp.body.hello.backend);
      clean(tmp.body.hello.cpus);
      break;
    case MsgType::Synthesize: clean(tmp.body.synthesize.input); break;
    case MsgType::SynthDone: clean(tmp.body.synth_done.error); break;
    case MsgType::ProveDone: clean(tmp.body.prove_done.error); break;
    case MsgType::Event:
      clean(tmp.body.event.name);
      clean(tmp.body.event.kv);
      break;
    case MsgType::Heartbeat:
    case MsgType::Prove:
    case MsgType::Shutdown:
    case MsgType::Key: break;
    default: return false;
  }
  m = tmp;
  return true;
}

Channel::~Channel() {
  if (owned_ && fd_ >= 0) ::close(fd_);
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

Channel::Read Channel::try_recv(Msg& m) {
  alignas(8) char buf[sizeof(Msg) + 16];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Read::Empty;
    if (n <= 0) return Read::Closed;
    if (decode_msg(buf, size_t(n), m)) return Read::Got;
    dropped_++;
    return Read::Dropped;
  }
}

}  // namespace cuzk::shm
