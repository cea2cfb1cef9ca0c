// Draining and stopping on SIGTERM or SIGINT: no new work, in-flight work gets
// daemon.shutdown_grace_ms, unfinished partitions are stored as queued for the next start, and the
// loop ends once every worker has exited. SIGHUP drains the same way after checking the
// configuration file, and main() then starts the program again with it; a SIGTERM or SIGINT
// during that drain makes it a plain stop.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <uv.h>

#include "config/config.hpp"
#include "supervisor/preflight.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace cuzk::sup {

// Reload: the file is checked first, with everything start-up would check (preflight: keys,
// generators against them, rings, folders, the locks of another state_dir, instance or socket), on
// the thread pool since a generator may have to be compiled. A daemon whose new configuration
// would not start keeps running on the old one (the error is logged), so that a reload never takes
// a running service down.
struct ReloadCheck {
  uv_work_t req;
  Supervisor* self;
  std::string path;
  std::string error;
};

void Supervisor::on_sighup() {
  if (phase_.draining) {
    spdlog::warn("SIGHUP: the daemon is stopping; not reloading");
    return;
  }
  if (reload_checking_) {
    spdlog::info("SIGHUP: {} is being checked already", config_path_);
    return;
  }
  spdlog::info("SIGHUP: checking {} before anything is drained", config_path_);
  reload_checking_ = true;
  auto* w = new ReloadCheck{};
  w->req.data = w;
  w->self = this;
  w->path = config_path_;
  uv_queue_work(
      loop_, &w->req,
      [](uv_work_t* q) {
        auto* w = static_cast<ReloadCheck*>(q->data);
        try {
          const config::Config next = config::load_config(w->path);
          preflight(next, true);
          w->self->lock_.check_available(next);
        } catch (const std::exception& e) {
          w->error = e.what();
        }
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<ReloadCheck> w(static_cast<ReloadCheck*>(q->data));
        w->self->after_reload_check(*w);
      });
}

void Supervisor::after_reload_check(const ReloadCheck& w) {
  reload_checking_ = false;
  if (phase_.draining) {  // SIGTERM or SIGINT came meanwhile: they win
    spdlog::info("SIGHUP: the daemon is stopping; the reload is dropped");
    maybe_finish_shutdown();
    return;
  }
  if (!w.error.empty()) {
    spdlog::error("SIGHUP: {} is not valid, the daemon goes on with the configuration it has: {}", config_path_,
                  w.error);
    return;
  }
  spdlog::info("SIGHUP: {} is valid; draining, then starting again with it", config_path_);
  sd_notify(0, "RELOADING=1\nSTATUS=reloading: draining");
  reload_ = true;
  begin_shutdown("SIGHUP");
}

void Supervisor::begin_shutdown(const char* why) {
  if (phase_.draining && reload_) {
    // SIGTERM or SIGINT while a reload drains: the daemon stops when drained, as for a first
    // SIGTERM, and does not start again.
    reload_ = false;
    spdlog::info("{} during a reload: stopping when drained instead of starting again", why);
    sd_notify(0, "STOPPING=1\nSTATUS=draining");
    return;
  }
  if (phase_.draining) {
    // A second signal: stop now; unfinished work stays queued in the store.
    spdlog::warn("second {}: stopping without draining", why);
    drain_deadline_ns_ = shm::monotonic_ns();
    maybe_finish_shutdown();
    return;
  }
  spdlog::info("{}: draining (no new work; in-flight work gets {} ms)", why, cfg_.daemon.shutdown_grace_ms);
  sd_notify(0, "STOPPING=1\nSTATUS=draining");
  phase_.draining = true;
  scheduler_.track_slot_waits();  // no more synthesis: nobody waits for a slot any longer
  drain_deadline_ns_ = shm::monotonic_ns() + uint64_t(cfg_.daemon.shutdown_grace_ms) * 1000000ull;
  queue_->drain();
  maybe_finish_shutdown();
}

void Supervisor::maybe_finish_shutdown() {
  if (!phase_.draining) return;
  if (!phase_.stopping) {
    bool busy = false;
    for (auto& d : devices_)
      for (auto& u : d.slots) busy = busy || u.used;
    if (busy && shm::monotonic_ns() < drain_deadline_ns_) return;
    phase_.stopping = true;
    // What did not finish is queued again in the store; the next start (or, with a shared store,
    // any node) proves it.
    queue_->stop();
    for (auto& w : workers_) {
      if (w->timer) uv_timer_stop(w->timer);
      if (w->pid > 0) {
        Workers::send(*w, shm::Msg(shm::MsgType::Shutdown));
        signal_worker(*w, SIGTERM);
      } else {
        Workers::set_state(*w, WorkerState::Stopped, "the daemon is stopping");
      }
    }
    if (server_) server_->close();
  }
  for (auto& w : workers_)
    if (w->pid > 0) return;  // wait for every exit callback
  if (removals_) return;     // and for finished jobs' files being removed
  if (queue_->busy()) return;  // and for the store's answers that remove them and answer clients
  if (reload_checking_) return;  // and for a reload's check, which uses this object when it ends
  if (circuits_.checking()) return;  // and for circuits being checked (answered when done)
  timeline_.event(tl::kDaemonStop, 0, "");
  timeline_.flush(0, 0);
  uv_stop(loop_);
}

}  // namespace cuzk::sup
