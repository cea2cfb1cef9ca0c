// What every worker process does the same way: read the command line the supervisor gives it, die
// with the supervisor, pin itself before any thread exists, heartbeat from its own thread, and
// stamp timeline events onto its channel. worker_main.hpp puts these together into a worker's main().
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shm/messages.hpp"
#include "shm/slot_ring.hpp"

namespace cuzk::worker {

// Command-line contract between the supervisor and a worker:
//   <worker> --config FILE --index I --worker-id W --epoch E [--fd N] --ring PREFIX
// The control socket is fd N (default 3), inherited from the supervisor. The slot rings are the
// shared-memory segments PREFIX.dev<device> that the supervisor made at its start.
struct WorkerArgs {
  std::string config;
  uint32_t index = 0;      // position in the config (synthesis worker i, or device position i)
  uint32_t worker_id = 0;  // the supervisor's id for this worker
  uint32_t epoch = 0;
  int fd = 3;
  std::string ring;  // the slot rings' names less ".dev<device>"
};
// Parses argv; on a usage error prints it and exits 64 (--help prints the usage and exits 0).
WorkerArgs parse_worker_args(int argc, char** argv, const char* prog);

// PR_SET_PDEATHSIG(SIGKILL), and exit at once if the parent is already gone.
void die_with_parent();

// sched_setaffinity to exactly `cpus` (no-op when empty). Must run before any thread starts.
// Throws std::runtime_error naming the CPUs on failure.
void pin_to_cpus(const std::vector<int>& cpus);
// A worker's start-up pinning: pins to `cpus` (when not empty) and returns the thread count to
// use: `threads` when set, else the size of the set, else 0 (all CPUs). Throws like pin_to_cpus.
size_t pin_worker(const std::vector<int>& cpus, size_t threads);
// The CPUs this process may run on now, as "0-3,8".
std::string current_affinity();

// Test hook: with CUZK_TEST_CRASH_AT="POINT:MARKER" in the supervisor's environment, the first
// worker process to reach POINT creates the file MARKER and kills itself with SIGKILL there; once
// MARKER exists nobody crashes again. Lets the process tests reach a crash-repair row that a kill
// from outside could only hit by luck. Points: "synth-ready" (a synthesis worker has made its slot
// READY and not yet reported it), "synth-freed" (a synthesis worker has freed its slot after a
// failure, bad input or a cancel, and not yet reported it), "gpu-freed" (a GPU worker has written
// the result files and freed the slot, and not yet reported it).
void test_crash_point(const char* point);

class WorkerLink {
 public:
  WorkerLink(const WorkerArgs& a, uint32_t heartbeat_ms);
  ~WorkerLink();
  // This worker in a slot's header: the owner the supervisor assigns its slots to.
  shm::Owner owner() const { return {args_.worker_id, args_.epoch}; }
  // Sends m stamped with this worker's id, epoch and pid, and the time now.
  bool send(shm::Msg m);
  bool recv(shm::Msg& m) { return ch_.recv(m); }
  void stop_receiving() { ch_.stop_receiving(); }  // recv() returns false from now on
  // A timeline event: name plus "k=v,..." (no spaces or commas inside values).
  void event(const char* name, uint64_t job, const std::string& kv);
  void start_heartbeat();

 private:
  WorkerArgs args_;
  uint32_t heartbeat_ms_;
  shm::Channel ch_;
  std::atomic<bool> stop_{false};
  std::thread hb_;
};

}  // namespace cuzk::worker
