// What the supervisor keeps of its workers, devices and jobs: plain records, shared by the
// supervisor and the objects that keep them (partitions.hpp, workers.hpp, the queues).
#pragma once
#include <uv.h>

#include <climits>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shm/slot_ring.hpp"
#include "supervisor/http/http_server.hpp"
#include "supervisor/store/job_store.hpp"
#include "supervisor/worker_state.hpp"

namespace cuzk::sup {

// A partition a worker holds: what it was sent, in which slot of which device's ring.
struct Task {
  uint64_t job = 0;
  uint32_t partition = 0, slot = 0;
  int device = 0;
};

// Proofs a GPU worker holds at once: the one on its device and the next, queued in the worker, which
// starts the moment the device is done with the first while the worker's host side assembles,
// verifies and writes that first one. The device never waits for the supervisor's round trip or
// for a proof's host work.
inline constexpr size_t kProofsInFlight = 2;

struct Worker {
  WorkerKind kind = WorkerKind::Synth;
  uint32_t index = 0;  // position in its config list
  uint32_t id = 0;     // unique across kinds
  int device = 0;      // gpu workers: the device id
  std::string name, cpus;
  uint32_t epoch = 0;
  int pid = 0;
  WorkerState state = WorkerState::Starting;  // changed only by Workers::set_state
  std::string failure;                        // why it is failed
  uint32_t restarts = 0;
  std::deque<uint64_t> recent_restarts;  // ns stamps within limits.restart_period_s
  uv_process_t* proc = nullptr;
  uv_poll_t* poll = nullptr;
  uv_timer_t* timer = nullptr;  // restart backoff
  int fd = -1;
  uint64_t last_heard_ns = 0;
  uint64_t started_ns = 0;    // its last spawn (WORKER_START), for WORKER_READY's startup_ms
  uint64_t slot_wait_ns = 0;  // synthesis workers: idle with partitions queued and no free slot since then
  std::vector<Task> tasks;    // in flight, oldest first: at most one (synthesis), kProofsInFlight (GPU)
  std::string hello;  // what the worker said about itself (cpus, threads, backend)
};

struct SlotUse {
  bool used = false;
  uint64_t job = 0;
  uint32_t partition = 0;
  enum Phase { Synth, Ready, Proving } phase = Synth;
};

// A circuit's key on a device, as its GPU worker's KEY_LOAD and KEY_EVICT report it.
struct DeviceKey {
  bool resident = false;
  uint64_t bytes = 0;  // where it proves, as last loaded
  uint64_t loads = 0, evictions = 0;
  double load_ms = 0;  // the last load's
};

struct Device {
  int id = 0;
  std::unique_ptr<shm::Segment> seg;
  std::vector<SlotUse> slots;
  Worker* gpu = nullptr;
  std::vector<DeviceKey> keys;  // by circuit; none resident while its GPU worker is not running
  bool key_resident(uint32_t circuit) const { return circuit < keys.size() && keys[circuit].resident; }
  // By circuit, for scheduling (Supervisor::key_order): whether its key is warm on the device
  // (resident, needed by a proof the GPU worker holds, or overdue: waited gpu.key_wait_ms for it).
  std::vector<bool> key_warm, key_overdue;
  std::vector<uint64_t> key_cold_since;  // ns: since when the circuit has had work here without its key
  int warm_work_priority = INT_MAX;      // the most urgent priority of work to come for warm circuits
};

// Per-partition timestamps for the timings the API reports (CLOCK_MONOTONIC ns).
struct PartTimes {
  uint64_t queued = 0, synth_start = 0, ready = 0, prove_start = 0;
  double synth_ms = 0, prove_ms = 0, wait_ms = 0;
};

struct ActiveJob {
  JobRec rec;
  uint32_t circuit = 0;
  std::vector<PartTimes> times;
  std::string upload_dir;  // uploaded witnesses and inline inputs, removed when the job is final
  struct Waiter {
    std::shared_ptr<http::Responder> r;
    uv_timer_t* timer;
  };
  std::vector<Waiter> waiters;
  // A shared queue: the partitions this node holds, each with its lease's epoch. Only these are the
  // node's; the other entries of rec.parts stand for partitions it does not hold (Cancelled).
  std::map<uint32_t, uint64_t> leases;
};

}  // namespace cuzk::sup
