// The control plane: fixed-size, versioned messages on one SOCK_SEQPACKET socketpair per worker.
// Every message is one Msg: a header (who sent it, when, and its type) and the body of its type,
// one struct per type with named fields, so that every fact the supervisor acts on travels as a
// field, never as text to be parsed. Text is only what a person reads: a path, an error, a
// timeline event's keys. A datagram of another size, magic, version or type is dropped and counted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

namespace cuzk::shm {

constexpr uint32_t kMsgMagic = 0x4b5a5543;  // "CUZK"
constexpr uint16_t kMsgVersion = 4;

enum class MsgType : uint16_t {
  Hello = 1,       // worker -> supervisor: initialised (keys loaded, ring mapped), ready for work
  Heartbeat = 2,   // worker -> supervisor, every heartbeat_interval_ms, from its own thread
  Synthesize = 3,  // supervisor -> synth: a partition to synthesize into its slot
  SynthDone = 4,   // synth -> supervisor: the synthesis's outcome; the slot is READY when Ok
  Prove = 5,       // supervisor -> gpu: a READY slot to prove
  ProveDone = 6,   // gpu -> supervisor: the proof's outcome; its result files are written when Ok
  Event = 7,       // worker -> supervisor: a timeline event
  Shutdown = 8,    // supervisor -> worker: finish the current task, then exit 0
  Key = 9,         // gpu -> supervisor: a key became resident on the worker's device, or left it
};
const char* to_string(MsgType t);

enum MsgStatus : int32_t {
  kOk = 0,
  kCancelled = 1,   // the slot's cancel flag was seen; the slot is FREE again
  kBadInput = 2,    // the job's input is wrong (witness unreadable, wrong circuit, unsatisfied), or its
                    // circuit's files cannot be used (malformed, or not of one circuit): do not retry
  kFailed = 3,      // this attempt failed (I/O, device error): retry elsewhere/later
};

// Which witness engine computed a partition's w from its inputs (none for a .wtns).
enum class WitnessEngine : uint32_t {
  None = 0,
  Program = 1,   // the compiled witness program
  Fallback = 2,  // the native generator, the program having refused this input
  Native = 3,    // the native generator: the circuit runs without a program
};

constexpr size_t kMsgTextBytes = 1016;  // a path, an error or an event's keys, NUL-terminated

// The partition a work message and its report are about, and where its work is: the slot of the
// device's ring, and the circuit (an index every process agrees on).
struct SlotWork {
  uint64_t job;
  uint32_t partition, slot, circuit;
  int32_t device;
};

// Bodies, one per type. Heartbeat and Shutdown have none.
struct Hello {
  int32_t device;        // a GPU worker's device
  uint32_t threads;      // the threads it works with
  uint64_t key_budget;   // a GPU worker: the bytes one key may take on its device (0: not known)
  char backend[16];      // a GPU worker's backend
  char cpus[64];         // the CPUs it runs on, as "0-3,8"
};
struct Synthesize {
  SlotWork work;
  uint32_t from_inputs;       // 1: input names circuit inputs (JSON) to compute w from; 0: a .wtns
  char input[kMsgTextBytes];  // the input's path
};
struct SynthDone {
  SlotWork work;
  int32_t status;  // MsgStatus
  WitnessEngine engine;
  uint32_t traced;  // 1: with Fallback, the input is being traced into a further program of the circuit
  double synth_ms, witness_ms, eval_ms;  // the whole synthesis; w; a, b, c
  char error[kMsgTextBytes];             // why, when not Ok
};
struct Prove {
  SlotWork work;
};
struct ProveDone {
  SlotWork work;
  int32_t status;  // MsgStatus; Ok: the result files are under the job's results folder
  double prove_ms;
  char error[kMsgTextBytes];  // why, when not Ok
};
struct Event {
  uint64_t job;
  char name[32];           // the event's name (timeline/events.hpp)
  char kv[kMsgTextBytes];  // its keys, "k=v,..."
};
struct Key {
  uint32_t circuit;
  uint32_t resident;  // 1: loaded onto the device; 0: evicted
  uint64_t bytes;     // what it takes where it proves, as last loaded
  double load_ms;     // a load's time
};

struct Msg {
  uint32_t magic;
  uint16_t version;
  uint16_t type;    // MsgType: which member of body is the message's
  uint32_t worker;  // sender's (or addressee's) worker id
  uint32_t epoch;   // the worker's epoch; the supervisor drops messages from older epochs
  uint32_t pid;
  uint32_t reserved;
  uint64_t t_ns;  // CLOCK_MONOTONIC stamp of the event or completion
  union Body {
    Hello hello;
    Synthesize synthesize;
    SynthDone synth_done;
    Prove prove;
    ProveDone prove_done;
    Event event;
    Key key;
  } body;

  // Every byte zero (no stray memory goes over the socket) but magic and version.
  Msg() {
    std::memset(static_cast<void*>(this), 0, sizeof *this);
    magic = kMsgMagic, version = kMsgVersion;
  }
  explicit Msg(MsgType t) : Msg() { type = uint16_t(t); }
  MsgType kind() const { return MsgType(type); }

  // The messages, each with its fields. Sender, epoch, pid and time are stamped where it is sent.
  static Msg hello(int32_t device, uint32_t threads, uint64_t key_budget, const std::string& backend,
                   const std::string& cpus);
  static Msg synthesize(const SlotWork& w, bool from_inputs, const std::string& input);
  static Msg synth_done(const SlotWork& w, int32_t status, WitnessEngine engine, double synth_ms, double witness_ms,
                        double eval_ms, const std::string& error, bool traced = false);
  static Msg prove(const SlotWork& w);
  static Msg prove_done(const SlotWork& w, int32_t status, double prove_ms, const std::string& error);
  static Msg event(uint64_t job, const std::string& name, const std::string& kv);
  static Msg key(uint32_t circuit, bool resident, uint64_t bytes, double load_ms);
};
static_assert(sizeof(Msg) == 1112, "Msg layout is part of the protocol; bump kMsgVersion when it changes");

// s into a NUL-terminated field, cut to fit.
template <size_t N>
void set_text(char (&field)[N], const std::string& s) {
  std::snprintf(field, N, "%s", s.c_str());
}

// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the host.
inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Creates a SOCK_SEQPACKET socketpair with close-on-exec on both ends; throws on failure.
void make_socketpair(int fds[2]);

// One end of a control socket, the same type on both sides: a worker's (fd 3, blocking) and the
// supervisor's of each worker (non-blocking, read as its loop finds it readable). Sending is
// thread-safe.
class Channel {
 public:
  // owned: the descriptor is closed with the channel.
  explicit Channel(int fd, bool owned = false) : fd_(fd), owned_(owned) {}
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  int fd() const { return fd_; }
  // Sends one message; false when the peer is gone (or, non-blocking, its socket is full).
  bool send(const Msg& m);
  // Blocks for the next valid message; false at EOF or error. Invalid datagrams are skipped.
  bool recv(Msg& m);
  // Without blocking: the next message, or what there is instead.
  enum class Read {
    Got,      // m holds the next valid message
    Empty,    // nothing more has arrived yet
    Closed,   // the peer closed its end (or the socket failed): nothing more will come
    Dropped,  // a datagram that is not a valid message was dropped; read again
  };
  Read try_recv(Msg& m);
  // Ends receiving: a recv() blocked on another thread, and every later one, returns false.
  // Sending still works, so that a worker can report what it finishes before it exits.
  void stop_receiving();
  uint64_t dropped() const { return dropped_; }

 private:
  int fd_;
  bool owned_;
  std::mutex send_mu_;
  uint64_t dropped_ = 0;
};

// Checks a received datagram; on success copies it into m, with the text fields of its type
// NUL-terminated and made valid UTF-8 (a byte outside a well-formed sequence becomes '?'). A
// datagram of another size, magic or version, or of an unknown type, is refused.
bool decode_msg(const void* data, size_t len, Msg& m);

}  // namespace cuzk::shm
