// What the supervisor keeps of its devices and jobs: plain records, shared by the supervisor and
// the objects that keep them (partitions.hpp, the queues). The workers' records are in workers.hpp.
#pragma once
#include <uv.h>

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shm/slot_ring.hpp"
#include "supervisor/store/job_store.hpp"

namespace cuzk::sup {

struct Worker;

// Where the daemon is in its life, for the parts that refuse or stop new work.
struct Phase {
  bool draining = false;  // SIGTERM, SIGINT or a reload's drain: no new work is taken
  bool stopping = false;  // drained, or out of time: the workers are told to exit
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
  // By circuit, for scheduling (Scheduler::key_order): whether its key is warm on the device
  // (resident, needed by a proof the GPU worker holds, or overdue: waited gpu.key_wait_ms for it).
  std::vector<bool> key_warm, key_overdue;
  std::vector<uint64_t> key_cold_since;  // ns: since when the circuit has had work here without its key
  int warm_work_priority = INT_MAX;      // the most urgent priority of work to come for warm circuits
};

// The device of that id among ds, or null.
inline Device* find_device(std::vector<Device>& ds, int id) {
  for (Device& d : ds)
    if (d.id == id) return &d;
  return nullptr;
}

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
  // A shared queue: the partitions this node holds, each with its lease's epoch. Only these are the
  // node's; the other entries of rec.parts stand for partitions it does not hold (Cancelled).
  std::map<uint32_t, uint64_t> leases;
};

}  // namespace cuzk::sup
