// The supervisor's frame: construction, the order of start-up, the libuv loop and its periodic
// tick (heartbeats, timeline flushing, sd_notify), and the teardown after the loop ends. The work
// the loop does lives in the files named after it: startup.cpp, worker_lifecycle.cpp,
// dispatch.cpp, crash_repair.cpp, shutdown.cpp and api.cpp; what happens to a partition is in
// Partitions (partitions.cpp).
#include "supervisor/supervisor.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "shm/results.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/preflight.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

namespace {

std::string self_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace

Supervisor::Supervisor(config::Config cfg, std::string config_path)
    : cfg_(std::move(cfg)), config_path_(std::move(config_path)) {
  const char* wd = std::getenv("CUZK_WORKER_DIR");
  worker_dir_ = wd ? wd : self_dir();
}

// A start that failed after creating its rings (the socket or port taken, ...) leaves no segment
// in /dev/shm (SlotRings removes them); after a normal run they are gone already.
Supervisor::~Supervisor() = default;

// While the state folder is full, once a second: the held changes written and the folder probed;
// both succeeding, the daemon accepts work again.
void Supervisor::check_disk_space() {
  if (queue_->held() && !state_.full()) state_.note_full(std::to_string(queue_->held()) + " changes could not be written");
  if (!state_.check_due(shm::monotonic_ns())) return;
  if (!queue_->flush_held() || !state_.write_problem().empty()) return;
  // Room for the store's changes; a submission's uploads may still find none, and say so again.
  state_.clear();
  scheduler_.schedule();
}

// Removing a job's copies of its witnesses (hundreds of MB at 2^22) can block for hundreds of ms
// while the disk is busy, so it runs on the thread pool: on the loop it held up every report.
void Supervisor::remove_job_files(const ActiveJob& j) {
  struct Removal {
    uv_work_t req{};
    Supervisor* self;
    std::vector<fs::path> dirs;
  };
  auto* w = new Removal{{}, this, {shm::job_results(cfg_.daemon.state_dir, j.rec.id)}};
  if (!j.upload_dir.empty()) w->dirs.emplace_back(j.upload_dir);
  w->req.data = w;
  removals_++;
  uv_queue_work(
      loop_, &w->req,
      [](uv_work_t* q) {
        std::error_code ec;
        for (const auto& d : static_cast<Removal*>(q->data)->dirs) fs::remove_all(d, ec);
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<Removal> w(static_cast<Removal*>(q->data));
        w->self->removals_--;
        w->self->maybe_finish_shutdown();
      });
}

void Supervisor::tick() {
  const uint64_t now = shm::monotonic_ns();
  // The tick comes every 100 ms: a much longer gap means a callback held the loop, and with it the
  // GPUs' next slots, the API and the heartbeats.
  if (last_tick_ns_ && now - last_tick_ns_ > 600000000ull)
    spdlog::warn("the event loop was held for about {} ms: dispatch, the API and heartbeats waited",
                 (now - last_tick_ns_) / 1000000 - 100);
  last_tick_ns_ = now;
  check_heartbeats();
  check_disk_space();
  queue_->tick();
  circuits_.sync();
  timeline_.flush(now, 300000000ull);
  scheduler_.tick();  // a circuit waiting for its key becomes overdue (gpu.key_wait_ms) with time alone
  if (phase_.draining) maybe_finish_shutdown();
  if (phase_.stopping) {
    // Workers that ignore SIGTERM for 5 s are killed.
    if (now > drain_deadline_ns_ + 5000000000ull)
      for (auto& w : workers_)
        signal_worker(*w, SIGKILL);
  }
  if (watchdog_ && now - last_watchdog_ns_ >= watchdog_usec_ * 500) {
    sd_notify(0, "WATCHDOG=1");
    last_watchdog_ns_ = now;
  }
  if (now - last_status_ns_ >= 2000000000ull) {
    last_status_ns_ = now;
    size_t busy = 0, failed = 0;
    for (auto& w : workers_) busy += w->state == WorkerState::Busy, failed += w->state == WorkerState::Failed;
    std::string st = std::string("STATUS=") + (phase_.draining ? "draining; " : "") +
                     std::to_string(parts_.jobs().size()) + " jobs active, " + std::to_string(parts_.pending().size()) +
                     " partitions queued, " + std::to_string(busy) + " workers busy" +
                     (failed ? ", " + std::to_string(failed) + " failed" : "") + ", " +
                     std::to_string(parts_.stats().proofs_done) + " proofs done";
    sd_notify(0, st.c_str());
  }
}

int Supervisor::run() {
  loop_->data = this;
  // Before anything of the state is touched: a second daemon on the same state_dir, instance or
  // socket stops here (exit 78) and changes nothing of the running one's.
  lock_ = InstanceLock::acquire(cfg_);
  reserve_descriptors(cfg_, true);

  setup_state();
  timeline_.event(
      tl::kDaemonStart, 0,
      tl::Kv().add(tl::kPid, getpid()).add(tl::kInstance, cfg_.daemon.instance).add(tl::kUnixMs, wall_ms()).str());
  devices_ = rings_.create(ring_);
  queue_->recover();
  create_workers();
  http::ServerOptions so;
  so.unix_path = cfg_.daemon.socket;
  so.unix_mode = cfg_.daemon.socket_mode;
  so.tcp = cfg_.daemon.tcp;
  so.token = cfg_.daemon.token;
  so.admin_token = cfg_.daemon.admin_token;
  so.max_body = cfg_.limits.max_upload_bytes;
  so.spool_dir = (fs::path(cfg_.daemon.state_dir) / "spool").string();
  so.memory_budget = cfg_.limits.upload_memory;
  so.max_connections = cfg_.limits.max_connections;
  so.header_timeout_ms = cfg_.limits.header_timeout_ms;
  so.idle_timeout_ms = cfg_.limits.idle_timeout_ms;
  so.warn = [](const std::string& m) { spdlog::warn("{}", m); };
  std::error_code ec;
  const fs::path sock_dir = fs::path(cfg_.daemon.socket).parent_path();
  fs::create_directories(sock_dir, ec);
  if (ec) throw config::ConfigError("daemon.socket", "cannot create its directory " + sock_dir.string() + ": " + ec.message());
  server_ = std::make_unique<http::Server>(
      loop_, so, [this](const http::Request& req, std::shared_ptr<http::Responder> r) { handle(req, std::move(r)); });
  try {
    server_->start();
  } catch (const http::ListenError& e) {
    // A socket path that cannot be bound stays so until the config changes; a TCP port may be
    // free on the next try.
    if (e.key != "daemon.socket") throw;
    const std::string what = e.what();
    throw config::ConfigError(e.key, what.rfind(e.key + " ", 0) == 0 ? what.substr(e.key.size() + 1) : what);
  }
  for (auto& w : workers_) spawn(*w);

  uv_signal_init(loop_, &sigterm_);
  uv_signal_start(&sigterm_, [](uv_signal_t* s, int) { static_cast<Supervisor*>(s->loop->data)->begin_shutdown("SIGTERM"); },
                  SIGTERM);
  uv_signal_init(loop_, &sigint_);
  uv_signal_start(&sigint_, [](uv_signal_t* s, int) { static_cast<Supervisor*>(s->loop->data)->begin_shutdown("SIGINT"); },
                  SIGINT);
  uv_signal_init(loop_, &sighup_);
  uv_signal_start(&sighup_, [](uv_signal_t* s, int) { static_cast<Supervisor*>(s->loop->data)->on_sighup(); }, SIGHUP);
  signal(SIGPIPE, SIG_IGN);
  uv_timer_init(loop_, &tick_timer_);
  uv_timer_start(&tick_timer_, [](uv_timer_t* t) { static_cast<Supervisor*>(t->loop->data)->tick(); }, 100, 100);
  watchdog_ = sd_watchdog_enabled(0, &watchdog_usec_) > 0;
  spdlog::info("listening on {}{}; {} synthesis workers, {} {} device(s)", cfg_.daemon.socket,
               cfg_.daemon.tcp.empty() ? "" : " and " + cfg_.daemon.tcp, cfg_.synthesis.workers,
               cfg_.gpu.devices.size(), cfg_.gpu.backend);
  sd_notify(0, "READY=1\nSTATUS=running");
  scheduler_.schedule();
  uv_run(loop_, UV_RUN_DEFAULT);

  // Tear down: handles closed, rings and socket removed.
  uv_close(reinterpret_cast<uv_handle_t*>(&sigterm_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigint_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sighup_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&tick_timer_), nullptr);
  for (auto& w : workers_) {
    close_handle(w->timer);
    w->timer = nullptr;
  }
  server_.reset();
  queue_->close();
  uv_run(loop_, UV_RUN_NOWAIT);
  rings_.remove();
  spdlog::info("stopped");
  return exit_status_;
}

}  // namespace cuzk::sup
