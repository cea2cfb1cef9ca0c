// The worker table, and the table of the state changes the supervisor makes and when it makes each.
#include "supervisor/workers.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"

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

Worker& Workers::add(std::unique_ptr<Worker> w) {
  list_.push_back(std::move(w));
  return *list_.back();
}

Worker* Workers::of_process(const uv_process_t* p) {
  for (auto& w : list_)
    if (w->proc == p) return w.get();
  return nullptr;
}

static bool idle_synth_worker(const Worker& w) {
  return w.kind == WorkerKind::Synth && w.state == WorkerState::Idle && w.tasks.empty();
}

Worker* Workers::idle_synth() {
  for (auto& w : list_)
    if (idle_synth_worker(*w)) return w.get();
  return nullptr;
}

size_t Workers::idle_synth_count() const {
  return size_t(std::count_if(list_.begin(), list_.end(), [](const auto& w) { return idle_synth_worker(*w); }));
}

void Workers::set_state(Worker& w, WorkerState to, const char* why) {
  if (!transition_allowed(w.state, to)) {
    spdlog::error("{}: unexpected state change {} -> {} ({})", w.name, to_string(w.state), to_string(to), why);
    assert(!"worker state change outside the table above");
  }
  spdlog::debug("{}: {} -> {} ({})", w.name, to_string(w.state), to_string(to), why);
  w.state = to;
}

void Workers::assign(Worker& w, const Task& t, const char* why) {
  w.tasks.push_back(t);
  if (w.state == WorkerState::Idle) set_state(w, WorkerState::Busy, why);
}

std::optional<Task> Workers::end_task(Worker& w, uint64_t job, uint32_t partition, const char* why) {
  auto it = std::find_if(w.tasks.begin(), w.tasks.end(),
                         [&](const Task& t) { return t.job == job && t.partition == partition; });
  if (it == w.tasks.end()) return std::nullopt;
  const Task t = *it;
  w.tasks.erase(it);
  if (w.tasks.empty() && w.state == WorkerState::Busy) set_state(w, WorkerState::Idle, why);
  return t;
}

std::string hello_text(const Worker& w) {
  const shm::Hello& h = w.hello;
  if (!h.threads) return "";
  std::string s;
  if (w.kind == WorkerKind::Gpu) s = std::string("backend=") + h.backend + ",device=" + std::to_string(h.device) + ",";
  s += std::string("cpus=") + h.cpus + ",threads=" + std::to_string(h.threads);
  if (w.kind == WorkerKind::Gpu) s += ",key_budget=" + std::to_string(h.key_budget);
  return s;
}

void Workers::dropped(const Worker& w, const std::string& what) { spdlog::warn("{}: dropped {}", w.name, what); }

std::vector<Task> Workers::exited(Worker& w, const Got& got) {
  set_state(w, WorkerState::Exited, "its process exited");
  if (w.poll) {
    uv_poll_stop(w.poll);
    close_handle(w.poll);
    w.poll = nullptr;
  }
  read(w, got);
  w.channel.reset();
  return std::exchange(w.tasks, {});
}

}  // namespace cuzk::sup
