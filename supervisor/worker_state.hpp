// A worker process's life as the supervisor sees it: its kind, its states, and which state may
// follow which. Every change of Worker::state goes through Workers::set_state, which checks it
// against transition_allowed, so that a change the scheduler does not expect is reported where it
// is made instead of showing up later as a worker that never gets work.
#pragma once

namespace cuzk::sup {

enum class WorkerKind { Synth, Gpu };

//   Starting ──Hello──► Idle ──dispatch──► Busy ──task reported──► Idle
//   Starting, Idle, Busy ──its process exits──► Exited
//   Exited ──► Backoff ──timer, spawned──► Starting
//   Exited ──► Failed (exit 78, or too many restarts)     Exited, Backoff, Failed ──► Stopped
enum class WorkerState {
  Starting,  // spawned; loading its keys or rings until its Hello
  Idle,      // running, without a task
  Busy,      // running, with a task in flight (a GPU worker: one to kProofsInFlight; it may get more)
  Exited,    // its process has just exited; the exit handler is putting back what it held
  Backoff,   // waiting for its next spawn
  Failed,    // not restarted: it exited 78 (configuration error) or restarted too often
  Stopped,   // the daemon is stopping; it is not spawned again
};

// "starting", "idle", ...: the names the API reports (docs/API.md, GET /v1/status).
const char* to_string(WorkerState s);
// Whether `to` may follow `from`: the table in workers.cpp, where each allowed change says
// when it happens.
bool transition_allowed(WorkerState from, WorkerState to);
// Running and answering: the `cuzk_worker_up` metric.
inline bool is_up(WorkerState s) { return s == WorkerState::Idle || s == WorkerState::Busy; }

}  // namespace cuzk::sup
