// The supervisor's frame: construction, the order of start-up, the libuv loop and its periodic
// tick (heartbeats, timeline flushing, sd_notify), and the teardown after the loop ends. The work
// the loop does lives in the files named after it: startup.cpp, worker_lifecycle.cpp,
// dispatch.cpp, completion.cpp, crash_repair.cpp, shutdown.cpp and api.cpp.
#include "supervisor/supervisor.hpp"

#include <signal.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
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
  loop_ = uv_default_loop();
  t0_ns_ = shm::monotonic_ns();
}

Supervisor::~Supervisor() = default;

Device* Supervisor::device(int id) {
  for (auto& d : devices_)
    if (d.id == id) return &d;
  return nullptr;
}

Worker* Supervisor::worker(uint32_t id) {
  for (auto& w : workers_)
    if (w->id == id) return w.get();
  return nullptr;
}

ActiveJob* Supervisor::active(uint64_t id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

void Supervisor::event(const std::string& name, uint64_t job, const std::string& kv) {
  if (timeline_) timeline_->add(shm::monotonic_ns(), name, job, kv);
}

void Supervisor::tick() {
  const uint64_t now = shm::monotonic_ns();
  check_heartbeats();
  if (timeline_) timeline_->flush(now, 300000000ull);
  if (draining_) maybe_finish_shutdown();
  if (stopping_) {
    // Workers that ignore SIGTERM for 5 s are killed.
    if (now > drain_deadline_ns_ + 5000000000ull)
      for (auto& w : workers_)
        if (w->pid > 0) ::kill(w->pid, SIGKILL);
  }
  if (watchdog_ && now - last_watchdog_ns_ >= watchdog_usec_ * 500) {
    sd_notify(0, "WATCHDOG=1");
    last_watchdog_ns_ = now;
  }
  if (now - last_status_ns_ >= 2000000000ull) {
    last_status_ns_ = now;
    size_t busy = 0, failed = 0;
    for (auto& w : workers_) busy += w->state == WorkerState::Busy, failed += w->state == WorkerState::Failed;
    std::string st = std::string("STATUS=") + (draining_ ? "draining; " : "") + std::to_string(jobs_.size()) +
                     " jobs active, " + std::to_string(pending_.size()) + " partitions queued, " +
                     std::to_string(busy) + " workers busy" + (failed ? ", " + std::to_string(failed) + " failed" : "") +
                     ", " + std::to_string(proofs_done_) + " proofs done";
    sd_notify(0, st.c_str());
  }
}

int Supervisor::run() {
  loop_->data = this;
  setup_state();
  event(tl::kDaemonStart, 0,
        tl::Kv().add(tl::kPid, getpid()).add(tl::kInstance, cfg_.daemon.instance).add(tl::kUnixMs, wall_ms()).str());
  setup_rings();
  warn_if_few_slots();
  recover_jobs();
  create_workers();
  http::ServerOptions so;
  so.unix_path = cfg_.daemon.socket;
  so.unix_mode = cfg_.daemon.socket_mode;
  so.tcp = cfg_.daemon.tcp;
  so.token = cfg_.daemon.token;
  so.max_body = cfg_.limits.max_upload_bytes;
  fs::create_directories(fs::path(cfg_.daemon.socket).parent_path());
  server_ = std::make_unique<http::Server>(
      loop_, so, [this](const http::Request& req, std::shared_ptr<http::Responder> r) { handle(req, std::move(r)); });
  server_->start();
  for (auto& w : workers_) spawn(*w);

  uv_signal_init(loop_, &sigterm_);
  uv_signal_start(&sigterm_, [](uv_signal_t* s, int) { static_cast<Supervisor*>(s->loop->data)->begin_shutdown("SIGTERM"); },
                  SIGTERM);
  uv_signal_init(loop_, &sigint_);
  uv_signal_start(&sigint_, [](uv_signal_t* s, int) { static_cast<Supervisor*>(s->loop->data)->begin_shutdown("SIGINT"); },
                  SIGINT);
  signal(SIGPIPE, SIG_IGN);
  uv_timer_init(loop_, &tick_timer_);
  uv_timer_start(&tick_timer_, [](uv_timer_t* t) { static_cast<Supervisor*>(t->loop->data)->tick(); }, 100, 100);
  watchdog_ = sd_watchdog_enabled(0, &watchdog_usec_) > 0;
  spdlog::info("listening on {}{}; {} synthesis workers, {} {} device(s)", cfg_.daemon.socket,
               cfg_.daemon.tcp.empty() ? "" : " and " + cfg_.daemon.tcp, cfg_.synthesis.workers,
               cfg_.gpu.devices.size(), cfg_.gpu.backend);
  sd_notify(0, "READY=1\nSTATUS=running");
  schedule();
  uv_run(loop_, UV_RUN_DEFAULT);

  // Tear down: handles closed, rings and socket removed.
  uv_close(reinterpret_cast<uv_handle_t*>(&sigterm_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigint_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&tick_timer_), nullptr);
  for (auto& w : workers_) {
    close_handle(w->timer);
    w->timer = nullptr;
  }
  for (auto& [id2, j] : jobs_)
    for (auto& wt : j.waiters) {
      close_handle(wt.timer);
      wt.timer = nullptr;
    }
  server_.reset();
  uv_run(loop_, UV_RUN_NOWAIT);
  for (auto& d : devices_) shm::Segment::remove(cfg_.daemon.instance, d.id);
  spdlog::info("stopped");
  return exit_status_;
}

}  // namespace cuzk::sup
