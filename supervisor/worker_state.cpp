// The worker state table: every state change the supervisor makes, and when it makes it.
#include "supervisor/worker_state.hpp"

namespace cuzk::sup {

namespace {

using S = WorkerState;

struct Transition {
  S from, to;
  const char* when;
};

constexpr Transition kTransitions[] = {
    {S::Starting, S::Starting, "first spawn: a worker is created starting"},
    {S::Starting, S::Idle, "its Hello: it is ready for work"},
    {S::Starting, S::Exited, "its process exited before it was ready"},
    {S::Starting, S::Backoff, "its first spawn failed"},
    {S::Starting, S::Failed, "its first spawn failed and no restart is left"},
    {S::Idle, S::Busy, "a task was dispatched to it"},
    {S::Idle, S::Exited, "its process exited"},
    {S::Busy, S::Idle, "it reported its task"},
    {S::Busy, S::Exited, "its process exited"},
    {S::Exited, S::Backoff, "it will be spawned again after a delay"},
    {S::Exited, S::Failed, "it exited 78, or restarted too often"},
    {S::Exited, S::Stopped, "the daemon is stopping"},
    {S::Backoff, S::Starting, "the delay passed and it was spawned"},
    {S::Backoff, S::Backoff, "its spawn failed"},
    {S::Backoff, S::Failed, "its spawn failed and no restart is left"},
    {S::Backoff, S::Stopped, "the daemon is stopping"},
    {S::Failed, S::Stopped, "the daemon is stopping"},
    {S::Stopped, S::Stopped, "its exit was handled after the stop had already marked it"},
};

}  // namespace

const char* to_string(WorkerState s) {
  switch (s) {
    case S::Starting: return "starting";
    case S::Idle: return "idle";
    case S::Busy: return "busy";
    case S::Exited: return "exited";
    case S::Backoff: return "backoff";
    case S::Failed: return "failed";
    case S::Stopped: return "stopped";
  }
  return "?";
}

bool transition_allowed(WorkerState from, WorkerState to) {
  for (const Transition& t : kTransitions)
    if (t.from == from && t.to == to) return true;
  return false;
}

}  // namespace cuzk::sup
