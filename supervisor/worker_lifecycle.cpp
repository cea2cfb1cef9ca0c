// Worker processes: their state changes, spawning with a fresh control socket and epoch, reading
// their messages (a report ends the worker's task and goes to Partitions, partitions.cpp), their
// exits (repaired by crash_repair.cpp), restarts with backoff, and the heartbeat check that kills
// a worker which stopped answering.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>

#include <utility>

#include <spdlog/spdlog.h>

#include "common/exit_codes.hpp"
#include "common/pidfd.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace cuzk::sup {

namespace {

const char* kind_name(const Worker& w) { return w.kind == WorkerKind::Synth ? tl::kKindSynth : tl::kKindGpu; }

// The keys that name a worker in WORKER_* events: worker, kind and, for a GPU worker, its device.
tl::Kv worker_kv(const Worker& w) {
  tl::Kv kv;
  kv.add(tl::kWorker, w.name).add(tl::kKind, kind_name(w));
  if (w.kind == WorkerKind::Gpu) kv.add(tl::kDevice, w.device);
  return kv;
}

}  // namespace

// Spawns (or respawns) one worker with a fresh socketpair and the next epoch.
void Supervisor::spawn(Worker& w) {
  int fds[2];
  shm::make_socketpair(fds);
  w.epoch++;
  const std::string exe =
      worker_dir_ + (w.kind == WorkerKind::Synth ? "/cuzk-synth-worker" : "/cuzk-gpu-worker");
  std::vector<std::string> args = {exe,
                                   "--config",
                                   config_path_,
                                   "--index",
                                   std::to_string(w.index),
                                   "--worker-id",
                                   std::to_string(w.id),
                                   "--epoch",
                                   std::to_string(w.epoch),
                                   "--fd",
                                   "3",
                                   "--ring",
                                   rings_.prefix()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  uv_stdio_container_t stdio[4];
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = 1;
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  stdio[3].flags = UV_INHERIT_FD;
  stdio[3].data.fd = fds[1];
  uv_process_options_t opt{};
  opt.file = exe.c_str();
  opt.args = argv.data();
  opt.stdio = stdio;
  opt.stdio_count = 4;
  opt.exit_cb = [](uv_process_t* p, int64_t status, int sig) {
    auto* self = static_cast<Supervisor*>(p->loop->data);
    if (Worker* w = self->workers_.of_process(p)) return self->on_exit(*w, status, sig);
    close_handle(p);
  };
  w.proc = new uv_process_t{};
  int rc = uv_spawn(loop_, w.proc, &opt);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    delete w.proc;
    w.proc = nullptr;
    spdlog::error("{}: cannot start {}: {}", w.name, exe, uv_strerror(rc));
    w.failure = std::string("cannot start ") + exe + ": " + uv_strerror(rc);
    restart_later(w);
    return;
  }
  w.pid = w.proc->pid;
  // Not collected yet (that happens only in libuv's exit callback, on this thread): the descriptor
  // is of this process, and signals sent through it never reach another process that reuses the pid.
  w.pidfd = open_pidfd(w.pid);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  w.channel = std::make_unique<shm::Channel>(fds[0], true);
  w.poll = new uv_poll_t{};
  uv_poll_init(loop_, w.poll, fds[0]);
  w.poll->data = &w;
  uv_poll_start(w.poll, UV_READABLE, [](uv_poll_t* h, int status, int) {
    auto* self = static_cast<Supervisor*>(h->loop->data);
    self->on_readable(*static_cast<Worker*>(h->data));
  });
  Workers::set_state(w, WorkerState::Starting, "spawned");
  w.last_heard_ns = w.started_ns = shm::monotonic_ns();
  timeline_.event(tl::kWorkerStart, 0, worker_kv(w).add(tl::kPid, w.pid).add(tl::kEpoch, w.epoch).str());
  spdlog::info("{}: started pid {} epoch {}", w.name, w.pid, w.epoch);
}

void Supervisor::on_readable(Worker& w) {
  // At EOF the worker is gone: its exit callback reads nothing more and repairs what it held.
  if (!Workers::read(w, [&](const shm::Msg& m) { on_message(w, m); }) && w.poll) uv_poll_stop(w.poll);
}

void Supervisor::on_message(Worker& w, const shm::Msg& m) {
  switch (m.kind()) {
    case shm::MsgType::Hello:
      w.hello = m.body.hello;
      if (w.kind == WorkerKind::Gpu) circuits_.note_key_budget(w.device, w.hello.key_budget);
      if (w.state == WorkerState::Starting) {
        Workers::set_state(w, w.tasks.empty() ? WorkerState::Idle : WorkerState::Busy, "its Hello");
        // From spawn to here a GPU worker was loading its keys (and building its tables).
        timeline_.event(tl::kWorkerReady, 0,
                        worker_kv(w)
                            .add(tl::kPid, w.pid)
                            .add(tl::kEpoch, w.epoch)
                            .ms(tl::kStartupMs, double(shm::monotonic_ns() - w.started_ns) / 1e6)
                            .str());
      }
      spdlog::info("{}: ready ({})", w.name, hello_text(w));
      scheduler_.schedule();
      break;
    case shm::MsgType::Heartbeat: break;
    case shm::MsgType::Event:
      timeline_.add(m.t_ns, m.body.event.name, m.body.event.job, m.body.event.kv);
      break;
    case shm::MsgType::Key:
      if (w.kind == WorkerKind::Gpu) scheduler_.note_key(w.device, m.body.key);
      break;
    case shm::MsgType::SynthDone: {
      const shm::SynthDone& r = m.body.synth_done;
      if (const std::optional<Task> t = Workers::end_task(w, r.work.job, r.work.partition, "synthesis reported")) {
        parts_.synthesized(w, *t, r);
        scheduler_.schedule();
      }
      break;
    }
    case shm::MsgType::ProveDone: {
      const shm::ProveDone& r = m.body.prove_done;
      if (const std::optional<Task> t = Workers::end_task(w, r.work.job, r.work.partition, "proof reported")) {
        parts_.proved(w, *t, r);
        scheduler_.schedule();
      }
      break;
    }
    default: spdlog::warn("{}: unexpected message {}", w.name, shm::to_string(shm::MsgType(m.type)));
  }
}

void Supervisor::on_exit(Worker& w, int64_t status, int sig) {
  if (w.slot_wait_ns) scheduler_.end_slot_wait(w, 0, "");  // a synthesis worker that waited for a slot
  close_handle(w.proc);
  w.proc = nullptr;
  // Its reports and events sent before the exit are read first: only what it still held then is
  // crash repair's.
  const std::vector<Task> held = Workers::exited(w, [&](const shm::Msg& m) { on_message(w, m); });
  // The task it held, if any, so that the timeline shows which partition the exit interrupted (a
  // GPU worker's oldest, the one on its device, and how many it held).
  tl::Kv kv;
  kv.add(tl::kWorker, w.name).add(tl::kPid, w.pid).add(tl::kStatus, status).add(tl::kSignal, sig);
  const Task* t = held.empty() ? nullptr : &held.front();
  if (t) kv.add(tl::kPartition, t->partition).add(tl::kSlot, t->slot).add(tl::kDevice, t->device);
  kv.add(tl::kKind, kind_name(w));
  if (!t && w.kind == WorkerKind::Gpu) kv.add(tl::kDevice, w.device);
  if (held.size() > 1) kv.add(tl::kTasks, held.size());
  timeline_.event(tl::kWorkerExit, t ? t->job : 0, kv.str());
  spdlog::log(phase_.stopping ? spdlog::level::info : spdlog::level::warn, "{}: pid {} exited (status {}, signal {})",
              w.name, w.pid, status, sig);
  if (w.pidfd >= 0) ::close(w.pidfd);
  w.pidfd = -1;
  w.pid = 0;
  // A GPU worker's keys went with its process.
  if (w.kind == WorkerKind::Gpu)
    if (Device* d = device(w.device))
      for (DeviceKey& k : d->keys) k.resident = false;
  // What the dead worker held goes back where it can be redone (crash_repair.cpp).
  for (const Task& h : held) parts_.repair(w, h);
  if (phase_.stopping) {
    Workers::set_state(w, WorkerState::Stopped, "the daemon is stopping");
    maybe_finish_shutdown();
    return;
  }
  if (status == exit_status::kConfig) {
    Workers::set_state(w, WorkerState::Failed, "a configuration error");
    w.failure = "exited 78 (configuration error): not restarted";
    spdlog::error("{}: {}", w.name, w.failure);
  } else {
    restart_later(w);
  }
  if (w.kind == WorkerKind::Gpu && w.state == WorkerState::Failed) {
    if (Device* d = device(w.device)) parts_.resynthesize_device(*d);
  }
  scheduler_.schedule();
}

// Exponential backoff from restart_backoff_initial_ms, doubling per recent restart, capped at
// restart_backoff_max_ms; more than restart_intensity restarts within restart_period_s: failed.
void Supervisor::restart_later(Worker& w) {
  const uint64_t now = shm::monotonic_ns();
  const uint64_t period = uint64_t(cfg_.limits.restart_period_s) * 1000000000ull;
  while (!w.recent_restarts.empty() && w.recent_restarts.front() + period < now) w.recent_restarts.pop_front();
  if (w.recent_restarts.size() >= cfg_.limits.restart_intensity) {
    Workers::set_state(w, WorkerState::Failed, "too many restarts");
    w.failure = std::to_string(w.recent_restarts.size()) + " restarts within " +
                std::to_string(cfg_.limits.restart_period_s) + " s";
    spdlog::error("{}: marked failed ({})", w.name, w.failure);
    timeline_.event(tl::kWorkerFailed, 0, tl::Kv().add(tl::kWorker, w.name).add(tl::kRestarts, w.restarts).str());
    return;
  }
  uint64_t delay = cfg_.limits.restart_backoff_initial_ms;
  for (size_t i = 0; i < w.recent_restarts.size() && delay < cfg_.limits.restart_backoff_max_ms; i++) delay *= 2;
  delay = std::min<uint64_t>(delay, cfg_.limits.restart_backoff_max_ms);
  w.recent_restarts.push_back(now);
  w.restarts++;
  Workers::set_state(w, WorkerState::Backoff, "restart after a delay");
  if (!w.timer) {
    w.timer = new uv_timer_t{};
    uv_timer_init(loop_, w.timer);
    w.timer->data = &w;
  }
  spdlog::info("{}: restarting in {} ms (restart {})", w.name, delay, w.restarts);
  uv_timer_start(
      w.timer,
      [](uv_timer_t* t) {
        auto* self = static_cast<Supervisor*>(t->loop->data);
        Worker& w = *static_cast<Worker*>(t->data);
        if (!self->phase_.stopping && w.state == WorkerState::Backoff) self->spawn(w);
      },
      delay, 0);
}

void Supervisor::check_heartbeats() {
  const uint64_t now = shm::monotonic_ns();
  const uint64_t limit = uint64_t(cfg_.daemon.heartbeat_timeout_ms) * 1000000ull;
  for (auto& w : workers_)
    if (w->pid > 0 && now - w->last_heard_ns > limit) {
      // Read what the worker already sent before judging it: after a stall of this loop (a stopped
      // or starved supervisor) its heartbeats are queued on the socket, not missing.
      if (w->channel) on_readable(*w);
      if (shm::monotonic_ns() - w->last_heard_ns <= limit) continue;
      spdlog::error("{}: no heartbeat for {} ms, killing pid {}", w->name, (now - w->last_heard_ns) / 1000000, w->pid);
      timeline_.event(tl::kHeartbeatMissed, 0, tl::Kv().add(tl::kWorker, w->name).add(tl::kPid, w->pid).str());
      signal_worker(*w, SIGKILL);
      w->last_heard_ns = now;  // one kill per timeout; the exit callback repairs
    }
}

void Supervisor::signal_worker(Worker& w, int sig) {
  if (w.pid <= 0) return;
  if (w.pidfd >= 0) {
    if (signal_pidfd(w.pidfd, sig) != 0 && errno != ESRCH)
      spdlog::warn("{}: cannot signal pid {}: {}", w.name, w.pid, std::strerror(errno));
    return;
  }
  // A kernel without pidfds: libuv still tracks the process (its exit callback clears w.pid), so
  // the pid is not collected and cannot have been reused.
  if (w.proc) uv_process_kill(w.proc, sig);
}

}  // namespace cuzk::sup
