// The control plane: fixed-size, versioned messages on one SOCK_SEQPACKET socketpair per worker.
// Every message is one Msg; a datagram of another size, magic or version is dropped and counted.
#pragma once
#include <cstdint>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

namespace cuzk::shm {

constexpr uint32_t kMsgMagic = 0x4b5a5543;  // "CUZK"
constexpr uint16_t kMsgVersion = 2;

enum class MsgType : uint16_t {
  Hello = 1,       // worker -> supervisor: initialised (keys loaded, ring mapped), ready for work
  Heartbeat = 2,   // worker -> supervisor, every heartbeat_interval_ms, from its own thread
  Synthesize = 3,  // supervisor -> synth: job, partition, circuit, device, slot; text = input path;
                   // flags & kMsgFromInputs: the path is circuit inputs (JSON), else a .wtns
  SynthDone = 4,   // synth -> supervisor: status; slot is READY when status == Ok
  Prove = 5,       // supervisor -> gpu: job, partition, circuit, slot
  ProveDone = 6,   // gpu -> supervisor: status; text = result directory on Ok
  Event = 7,       // worker -> supervisor: a timeline event; name = EVENT, text = k=v,...
  Shutdown = 8,    // supervisor -> worker: finish the current task, then exit 0
};
const char* to_string(MsgType t);

enum MsgStatus : int32_t {
  kOk = 0,
  kCancelled = 1,   // the slot's cancel flag was seen; the slot is FREE again
  kBadInput = 2,    // the job's input is wrong (witness unreadable, wrong circuit, unsatisfied), or its
                    // circuit's files cannot be used (malformed, or not of one circuit): do not retry
  kFailed = 3,      // this attempt failed (I/O, device error): retry elsewhere/later
};

// Msg::flags bits.
constexpr uint32_t kMsgFromInputs = 1u << 0;  // Synthesize: text names circuit inputs to run the generator on
// SynthDone: which witness engine computed w from inputs (one of the three; none for a .wtns).
constexpr uint32_t kMsgWitnessProgram = 1u << 1;   // the compiled witness program
constexpr uint32_t kMsgWitnessFallback = 1u << 2;  // the native generator, the program having refused this input
constexpr uint32_t kMsgWitnessNative = 1u << 3;    // the native generator: the circuit runs without a program
constexpr uint32_t kMsgWitnessTraced = 1u << 4;    // with Fallback: the input is being traced as a further path

struct Msg {
  uint32_t magic = kMsgMagic;
  uint16_t version = kMsgVersion;
  uint16_t type = 0;
  uint32_t worker = 0;     // sender's (or addressee's) worker id
  uint32_t epoch = 0;      // the worker's epoch; the supervisor drops messages from older epochs
  uint64_t job = 0;
  uint32_t partition = 0;
  uint32_t slot = 0;
  uint32_t circuit = 0;
  int32_t device = 0;
  int32_t status = 0;
  uint32_t pid = 0;
  uint32_t flags = 0;      // kMsg* bits (meaning per type)
  uint64_t t_ns = 0;       // CLOCK_MONOTONIC stamp of the event/completion
  double ms[8] = {};       // stage durations (meaning per type, see the worker sources)
  char name[32] = {};      // Event: the event name
  char text[1016] = {};    // path, error message or k=v list; NUL-terminated
  void set_text(const std::string& s) { std::snprintf(text, sizeof(text), "%s", s.c_str()); }
  void set_name(const std::string& s) { std::snprintf(name, sizeof(name), "%s", s.c_str()); }
};
static_assert(sizeof(Msg) == 1176, "Msg layout is part of the protocol; bump kMsgVersion when it changes");

// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the host.
inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Creates a SOCK_SEQPACKET socketpair with close-on-exec on both ends; throws on failure.
void make_socketpair(int fds[2]);

// Sends one message; false when the peer is gone. Thread-safe per Channel.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  int fd() const { return fd_; }
  bool send(const Msg& m);
  // Blocks for the next valid message; false at EOF or error. Invalid datagrams are skipped.
  bool recv(Msg& m);
  // Ends receiving: a recv() blocked on another thread, and every later one, returns false.
  // Sending still works, so that a worker can report what it finishes before it exits.
  void stop_receiving();
  uint64_t dropped() const { return dropped_; }

 private:
  int fd_;
  std::mutex send_mu_;
  uint64_t dropped_ = 0;
};

// Checks a received datagram; on success copies it into m, with text and name NUL-terminated and
// made valid UTF-8 (a byte outside a well-formed sequence becomes '?').
bool decode_msg(const void* data, size_t len, Msg& m);

}  // namespace cuzk::shm
