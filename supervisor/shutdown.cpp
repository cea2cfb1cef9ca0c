// Draining and stopping on SIGTERM or SIGINT: no new work, in-flight work gets
// daemon.shutdown_grace_ms, unfinished partitions are stored as queued for the next start, and the
// loop ends once every worker has exited. SIGHUP drains the same way after checking the
// configuration file, and main() then starts the program again with it.
#include <signal.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <spdlog/spdlog.h>

#include "config/config.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace cuzk::sup {

// Reload: the file is checked first, and a daemon whose new configuration is invalid keeps running
// on the old one (the error is logged), so that a typo never takes a running service down.
void Supervisor::on_sighup() {
  if (draining_) return;
  try {
    config::Config next = config::load_config(config_path_);
    config::validate_cpus(next);
    read_keys(next);
  } catch (const std::exception& e) {
    spdlog::error("SIGHUP: {} is not valid, the daemon goes on with the configuration it has: {}", config_path_,
                  e.what());
    return;
  }
  spdlog::info("SIGHUP: {} is valid; draining, then starting again with it", config_path_);
  sd_notify(0, "RELOADING=1\nSTATUS=reloading: draining");
  reload_ = true;
  begin_shutdown("SIGHUP");
}

void Supervisor::begin_shutdown(const char* why) {
  if (draining_) {
    // A second signal: stop now; unfinished work stays queued in the store.
    spdlog::warn("second {}: stopping without draining", why);
    drain_deadline_ns_ = shm::monotonic_ns();
    maybe_finish_shutdown();
    return;
  }
  spdlog::info("{}: draining (no new work; in-flight work gets {} ms)", why, cfg_.daemon.shutdown_grace_ms);
  sd_notify(0, "STOPPING=1\nSTATUS=draining");
  draining_ = true;
  track_slot_waits();  // no more synthesis: nobody waits for a slot any longer
  drain_deadline_ns_ = shm::monotonic_ns() + uint64_t(cfg_.daemon.shutdown_grace_ms) * 1000000ull;
  if (shared_) release_unstarted();
  maybe_finish_shutdown();
}

void Supervisor::maybe_finish_shutdown() {
  if (!draining_) return;
  if (!stopping_) {
    bool busy = false;
    for (auto& d : devices_)
      for (auto& u : d.slots) busy = busy || u.used;
    if (busy && shm::monotonic_ns() < drain_deadline_ns_) return;
    stopping_ = true;
    // What did not finish is queued again in the store; the next start (or, with a shared store,
    // any node) proves it.
    if (shared_) {
      release_leases();
    } else {
      for (auto& [id, j] : jobs_)
        for (auto& pr : j.rec.parts)
          if (!is_final(pr.state) && pr.state != PState::Queued) {
            pr.state = PState::Queued;
            store_->set_partition(id, pr);
          }
    }
    for (auto& w : workers_) {
      if (w->timer) uv_timer_stop(w->timer);
      if (w->pid > 0) {
        shm::Msg m{};
        m.type = uint16_t(shm::MsgType::Shutdown);
        m.worker = w->id, m.epoch = w->epoch;
        ::send(w->fd, &m, sizeof m, MSG_NOSIGNAL);
        ::kill(w->pid, SIGTERM);
      } else {
        set_state(*w, WorkerState::Stopped, "the daemon is stopping");
      }
    }
    if (server_) server_->close();
  }
  for (auto& w : workers_)
    if (w->pid > 0) return;  // wait for every exit callback
  if (spool_works_) return;  // and for spooled submissions being decoded (answered 503)
  event(tl::kDaemonStop, 0, "");
  if (timeline_) timeline_->flush(0, 0);
  uv_stop(loop_);
}

}  // namespace cuzk::sup
