// The data plane: one shared-memory segment per device holding a ring of K slots. A synthesis
// worker writes w, a, b, c into a slot; the device's GPU worker proves from them in place.
// No mutex lives in the segment (a process that dies holding one would wedge it): each slot's state
// is one atomic word moved by compare-and-swap, and only the slot's current owner moves it forward.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace cuzk::shm {

// Every vector element is one scalar-field element of 32 bytes: the ring is the same for every
// curve, and the circuit a slot holds says which field its bytes are.
constexpr size_t kElemBytes = 32;

// FREE -> SYNTHESIZING (supervisor assigns) -> READY (synth worker) -> PROVING (gpu worker)
// -> FREE (gpu worker). After a crash only the supervisor moves a slot back.
enum class SlotState : uint32_t { Free = 0, Synthesizing = 1, Ready = 2, Proving = 3 };
const char* to_string(SlotState s);

constexpr uint64_t kSegmentMagic = 0x676e69726b7a7563ull;  // "cuzkring" little-endian
constexpr uint32_t kSegmentVersion = 2;

// SegmentHeader::flags.
constexpr uint32_t kSegmentAbc = 1u << 0;  // each slot holds a, b, c after w (synthesis evaluates them);
                                           // without it the slots hold w only and the GPU worker evaluates

// Who may move a slot forward: a worker (the supervisor's id for it) in one epoch of its process.
struct Owner {
  uint32_t worker = 0, epoch = 0;
};

// One slot's header. Cache-line aligned so that two slots never share a line. Written for an
// assignment only through Segment's verbs (assign, hand_over, release).
struct alignas(64) SlotHeader {
  std::atomic<uint32_t> state;   // SlotState
  std::atomic<uint32_t> cancel;  // set by the supervisor; owners poll it at stage boundaries
  uint32_t owner_worker;         // worker id (see supervisor) of the current owner
  uint32_t owner_epoch;          // that worker's epoch: a restarted worker never owns its old slots
  uint64_t job;
  uint32_t partition;
  uint32_t circuit;              // index into the config's [[circuits]]
  uint64_t n_vars;               // filled by synthesis
  uint64_t domain_size;
  uint64_t generation;           // bumped by the supervisor on each assignment
  uint64_t synth_end_ns;         // CLOCK_MONOTONIC when the slot became READY
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "slot state must be a lock-free word");

struct SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t device;
  uint32_t n_slots;
  uint32_t header_bytes;         // offset of slot 0's data from the segment start
  uint64_t slot_bytes;           // bytes per slot's data (w, a, b, c, each page aligned)
  uint64_t max_vars;
  uint64_t max_domain;
  uint64_t total_bytes;
  uint64_t created_ns;
  uint32_t flags;                // kSegment* bits
  uint32_t reserved;
  char instance[40];
};

// The bytes a slot needs for a circuit of n_vars wires and domain size d: w, and a, b, c when `abc`.
uint64_t slot_bytes_for(uint64_t max_vars, uint64_t max_domain, bool abc = true);
// The whole segment's size for K such slots.
uint64_t segment_bytes_for(uint32_t n_slots, uint64_t max_vars, uint64_t max_domain, bool abc = true);
// The rings' names. /dev/shm is shared by every local user, so a name another user could guess
// could be made first by them: a daemon's rings are named "cuzk.<instance>.<random>.dev<device>",
// the random part new at each start (ring_prefix), and the supervisor gives the prefix to its
// workers. A name that exists already is never taken over, and a worker maps only a segment of its
// own user that no one else may open (owner and mode checked on the opened descriptor).
// A new prefix "cuzk.<instance>.<16 random hex digits>".
std::string ring_prefix(const std::string& instance);
// Whether s has the form ring_prefix makes (for a prefix read back from a file).
bool is_ring_prefix(const std::string& s);
// The POSIX shm name of a device's segment: "<prefix>.dev<device>".
std::string segment_name(const std::string& prefix, int device);

// Segment::create found the name taken: a segment that this call did not make (another user's,
// or a left-over one) is never used, whoever made it.
struct NameTaken : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Segment {
 public:
  // Supervisor only: creates a new segment (never an existing one: NameTaken), readable and
  // writable by its user only, sizes it and reserves its pages (fallocate) so that a full /dev/shm
  // is an error now, not a SIGBUS later. Throws NoRoom with the free space when /dev/shm cannot
  // hold it.
  static std::unique_ptr<Segment> create(const std::string& prefix, int device, uint32_t n_slots,
                                         uint64_t max_vars, uint64_t max_domain, bool abc = true);
  // Workers: maps an existing segment that this process's user owns and no other user may open,
  // and checks its magic, version and device.
  static std::unique_ptr<Segment> open(const std::string& prefix, int device);
  // Removes the named segment if it exists and is this process's user's; true if one was removed.
  // One of another user is left alone (and false).
  static bool remove(const std::string& prefix, int device);
  // The same, by the segment's name.
  static bool remove_name(const std::string& name);

  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  const SegmentHeader& header() const { return *hdr_; }
  uint32_t n_slots() const { return hdr_->n_slots; }
  const std::string& name() const { return name_; }
  void* base() const { return base_; }
  uint64_t size() const { return size_; }

  // The slot's header (std::out_of_range past the ring). The verbs below are inline: dispatch and
  // the workers call them for every slot they look at.
  SlotHeader& slot(uint32_t i) const {
    if (i >= hdr_->n_slots) out_of_range(i);
    return reinterpret_cast<SlotHeader*>(reinterpret_cast<char*>(base_) + kSlotHeadersAt)[i];
  }
  SlotState state(uint32_t i) const { return SlotState(slot(i).state.load(std::memory_order_acquire)); }
  // Moves slot i from `from` to `to` if it is in `from`; the release makes the slot's data visible
  // to whoever next acquires the new state.
  bool transition(uint32_t i, SlotState from, SlotState to) const {
    uint32_t expect = uint32_t(from);
    return slot(i).state.compare_exchange_strong(expect, uint32_t(to), std::memory_order_acq_rel);
  }
  // Supervisor recovery: sets the state whatever it was.
  void force(uint32_t i, SlotState to) const { slot(i).state.store(uint32_t(to), std::memory_order_release); }

  // The verbs of an assignment, the one place a slot's header is written for one.
  // Supervisor: FREE slot i given to synthesis worker o for (job, partition) of circuit: the
  // header written for it (a new generation, no cancel, no sizes yet), then the slot SYNTHESIZING.
  // False, nothing written, when the slot is not FREE.
  bool assign(uint32_t i, Owner o, uint64_t job, uint32_t partition, uint32_t circuit) const {
    SlotHeader& h = slot(i);
    if (state(i) != SlotState::Free) return false;
    h.owner_worker = o.worker;
    h.owner_epoch = o.epoch;
    h.job = job;
    h.partition = partition;
    h.circuit = circuit;
    h.generation++;
    h.n_vars = 0;
    h.domain_size = 0;
    h.synth_end_ns = 0;
    h.cancel.store(0, std::memory_order_relaxed);
    // The release of the new state publishes the header to the worker that acquires it.
    return transition(i, SlotState::Free, SlotState::Synthesizing);
  }
  // Supervisor: READY slot i handed over to GPU worker o, which takes it to PROVING.
  void hand_over(uint32_t i, Owner o) const {
    SlotHeader& h = slot(i);
    h.owner_worker = o.worker;
    h.owner_epoch = o.epoch;
  }
  // Workers: whether slot i is o's, for (job, partition): the check both workers make before they
  // touch a slot they were sent.
  bool owned_by(uint32_t i, Owner o, uint64_t job, uint32_t partition) const {
    const SlotHeader& h = slot(i);
    return h.owner_worker == o.worker && h.owner_epoch == o.epoch && h.job == job && h.partition == partition;
  }
  // Supervisor: slot i FREE, whatever it held (its partition is done with it, or a repair).
  void release(uint32_t i) const { force(i, SlotState::Free); }
  // Supervisor: asks slot i's owner to stop at its next stage boundary (it frees the slot).
  void cancel(uint32_t i) const { slot(i).cancel.store(1, std::memory_order_release); }
  // Owners: whether the supervisor asked them to stop.
  bool cancelled(uint32_t i) const { return slot(i).cancel.load(std::memory_order_acquire) != 0; }

  // Whether the slots hold a, b, c (kSegmentAbc).
  bool abc_in_slots() const { return (hdr_->flags & kSegmentAbc) != 0; }
  // The slot's vectors: w (max_vars), then a, b, c (max_domain each) where the slots hold them
  // (std::logic_error otherwise), as elements of the field F (the curve's Fr of the circuit in the
  // slot).
  template <class F>
  F* w(uint32_t i) const {
    return as<F>(vec(i, 0));
  }
  template <class F>
  F* a(uint32_t i) const {
    return as<F>(vec(i, 1));
  }
  template <class F>
  F* b(uint32_t i) const {
    return as<F>(vec(i, 2));
  }
  template <class F>
  F* c(uint32_t i) const {
    return as<F>(vec(i, 3));
  }

 private:
  template <class F>
  static F* as(char* p) {
    static_assert(sizeof(F) == kElemBytes, "the ring holds 32-byte field elements");
    return reinterpret_cast<F*>(p);
  }
  // Start of vector k (0 = w, 1 = a, 2 = b, 3 = c) of slot i.
  char* vec(uint32_t i, int k) const;
  // Where the slots' headers start: after the segment's, on a cache line of their own.
  static constexpr uint64_t kSlotHeadersAt = (sizeof(SegmentHeader) + 63) / 64 * 64;
  [[noreturn]] void out_of_range(uint32_t i) const;
  struct Impl;
  Segment() = default;
  std::unique_ptr<Impl> impl_;
  std::string name_;
  SegmentHeader* hdr_ = nullptr;
  void* base_ = nullptr;
  uint64_t size_ = 0;
};

// Free space on the filesystem behind /dev/shm, in bytes.
uint64_t shm_free_bytes();
// The size of the filesystem on /dev/shm (0 when it cannot be read).
uint64_t shm_size_bytes();

// Segment::create found too little room in /dev/shm: `need` bytes against `free` free of `size`.
// When need <= size, freeing room there (another segment, a full tmpfs) lets a later try succeed.
struct NoRoom : std::runtime_error {
  NoRoom(const std::string& what, uint64_t need, uint64_t free, uint64_t size)
      : std::runtime_error(what), need(need), free(free), size(size) {}
  uint64_t need, free, size;
};

}  // namespace cuzk::shm
