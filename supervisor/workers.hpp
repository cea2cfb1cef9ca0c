// The worker table: one record per worker process (synthesis workers first, then one GPU worker
// per device), its kind and states, and the verbs that change a worker's state and the tasks it
// holds. Every change of Worker::state passes through Workers::set_state, which checks it against
// the table in workers.cpp (where each allowed change says when it happens), so that a change the
// scheduler does not expect is reported where it is made instead of showing up later as a worker
// that never gets work.
#pragma once
#include <uv.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "shm/messages.hpp"

namespace cuzk::sup {

enum class WorkerKind { Synth, Gpu };

//   Starting ──Hello──► Idle ──dispatch──► Busy ──task reported──► Idle
//   Starting, Idle, Busy ──its process exits──► Exited
//   Exited ──► Backoff ──timer, spawned──► Starting
//   Exited ──► Failed (exit 78, or too many restarts)     Exited, Backoff, Failed ──► Stopped
enum class WorkerState {
  Starting,  // spawned; loading its keys or rings until its Hello
  Idle,      // running, without a task
  Busy,      // running, with a task in flight (a GPU worker: one to proofs_in_flight; it may get more)
  Exited,    // its process has just exited; the exit handler is putting back what it held
  Backoff,   // waiting for its next spawn
  Failed,    // not restarted: it exited 78 (configuration error) or restarted too often
  Stopped,   // the daemon is stopping; it is not spawned again
};

// "starting", "idle", ...: the names the API reports (docs/API.md, GET /v1/status).
const char* to_string(WorkerState s);
// Whether `to` may follow `from`: the table in workers.cpp.
bool transition_allowed(WorkerState from, WorkerState to);
// Running and answering: the `cuzk_worker_up` metric.
inline bool is_up(WorkerState s) { return s == WorkerState::Idle || s == WorkerState::Busy; }

// A partition a worker holds: what it was sent, in which slot of which device's ring.
struct Task {
  uint64_t job = 0;
  uint32_t partition = 0, slot = 0;
  int device = 0;
};

// Proofs a GPU worker holds at once: two batches of gpu.batch, the one on its device and the next,
// queued in the worker, which starts the moment the device is done with the first while the
// worker's host side assembles, verifies and writes that first one. The device never waits for the
// supervisor's round trip or for a proof's host work. The cpu backend proves one at a time (one
// proving and one next), and so does gpu.batch = 1.
inline size_t proofs_in_flight(const config::GpuConfig& gpu) {
  return gpu.backend == "cpu" ? 2 : 2 * size_t(std::max<uint32_t>(gpu.batch, 1));
}

struct Worker {
  WorkerKind kind = WorkerKind::Synth;
  uint32_t index = 0;  // position in its config list
  uint32_t id = 0;     // unique across kinds
  int device = 0;      // gpu workers: the device id
  std::string name, cpus;
  uint32_t epoch = 0;
  int pid = 0;
  int pidfd = -1;  // its process descriptor while it runs (common/pidfd.hpp); -1 without one
  WorkerState state = WorkerState::Starting;  // changed only by Workers::set_state
  std::string failure;                        // why it is failed
  uint32_t restarts = 0;
  std::deque<uint64_t> recent_restarts;  // ns stamps within limits.restart_period_s
  uv_process_t* proc = nullptr;
  uv_poll_t* poll = nullptr;
  uv_timer_t* timer = nullptr;  // restart backoff
  std::unique_ptr<shm::Channel> channel;  // its control socket while its process runs
  uint64_t last_heard_ns = 0;
  uint64_t started_ns = 0;    // its last spawn (WORKER_START), for WORKER_READY's startup_ms
  uint64_t slot_wait_ns = 0;  // synthesis workers: idle with partitions queued and no free slot since then
  std::vector<Task> tasks;    // in flight, oldest first: at most one (synthesis), proofs_in_flight (GPU)
  shm::Hello hello{};  // what it said about itself when ready: CPUs, threads; a GPU worker's backend and key budget
};

// What a worker said of itself in its Hello, for GET /v1/status: "cpus=0-3,threads=4", and a GPU
// worker's backend, device and key budget; "" before it said it.
std::string hello_text(const Worker& w);

class Workers {
 public:
  using List = std::vector<std::unique_ptr<Worker>>;
  List::iterator begin() { return list_.begin(); }
  List::iterator end() { return list_.end(); }
  List::const_iterator begin() const { return list_.begin(); }
  List::const_iterator end() const { return list_.end(); }
  Worker& add(std::unique_ptr<Worker> w);
  Worker* of_process(const uv_process_t* p);

  // An idle synthesis worker holding no task (the first), or null; how many there are.
  Worker* idle_synth();
  size_t idle_synth_count() const;

  // A change the table does not allow is a bug in the supervisor: logged (and stopping a debug
  // build) here.
  static void set_state(Worker& w, WorkerState to, const char* why);
  // w takes task t; an idle worker becomes busy.
  static void assign(Worker& w, const Task& t, const char* why);
  // The task of w on (job, partition), removed from w (busy w with no task left is idle again);
  // nullopt for a stale report, one of a task w no longer holds.
  static std::optional<Task> end_task(Worker& w, uint64_t job, uint32_t partition, const char* why);

  // Sends m to w's process, addressed to its id and epoch: the one way the supervisor sends. False
  // when w has no process or its socket takes nothing now (its exit then repairs what it was sent).
  static bool send(Worker& w, shm::Msg m) {
    if (!w.channel) return false;
    m.worker = w.id, m.epoch = w.epoch, m.t_ns = shm::monotonic_ns();
    return w.channel->send(m);
  }
  using Got = std::function<void(const shm::Msg&)>;
  // Reads what w's process has sent so far and hands each message of its current epoch to got, in
  // order (a malformed one or one of an older epoch is dropped and logged); false once the process
  // has closed its end of the channel.
  template <class F>
  static bool read(Worker& w, F&& got) {
    shm::Msg m;
    while (w.channel) {
      switch (w.channel->try_recv(m)) {
        case shm::Channel::Read::Empty: return true;
        case shm::Channel::Read::Closed: return false;  // the process is gone (its exit callback repairs)
        case shm::Channel::Read::Dropped: dropped(w, "a malformed control message"); continue;
        case shm::Channel::Read::Got: break;
      }
      if (m.worker != w.id || m.epoch != w.epoch) {
        dropped(w, "a message of epoch " + std::to_string(m.epoch) + " (current " + std::to_string(w.epoch) + ")");
        continue;
      }
      w.last_heard_ns = shm::monotonic_ns();
      got(m);
    }
    return false;
  }
  // w's process ended: w is Exited (no dispatch reaches it until it is spawned again), what it sent
  // before its end is handed to got as if it had come in time (a report made just before an exit
  // is a report, not a crash), and its channel is closed. Returns the tasks it still held: those
  // are crash repair's.
  static std::vector<Task> exited(Worker& w, const Got& got);

 private:
  static void dropped(const Worker& w, const std::string& what);  // logged
  List list_;
};

}  // namespace cuzk::sup
