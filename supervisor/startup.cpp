// Start-up: the state folder, job store and timeline, the circuits' dimensions and witness
// generators, the slot rings in /dev/shm, the jobs an earlier run left unfinished, and the worker
// records. Supervisor::run calls these in order before the loop starts.
#include <fcntl.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <spdlog/spdlog.h>

#include "shm/results.hpp"
#include "supervisor/generators.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/local_queue.hpp"
#include "supervisor/shared_queue.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"
#include "witness/build.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

namespace {

bool no_space(const std::error_code& ec) {
  return ec == std::errc::no_space_on_device || ec.value() == EDQUOT;
}

}  // namespace

// The state folder and the job store. A folder that cannot be created or written is a
// configuration error (exit 78: no restart can fix it). A full disk is not: the supervisor waits
// for space, telling systemd so (STATUS=, EXTEND_TIMEOUT_USEC=), instead of exiting into a restart
// loop; an existing store opens without space, and the daemon then runs with submissions refused
// (503) until space is freed.
void Supervisor::open_store() {
  const fs::path dir = cfg_.daemon.state_dir;
  for (bool said = false;; said = true) {
    try {
      for (const fs::path& d : {dir, shm::results_root(dir), dir / "uploads", dir / "spool"}) {
        std::error_code ec;
        fs::create_directories(d, ec);
        if (ec && no_space(ec)) throw StateWriteFailed("cannot create " + d.string() + ": " + ec.message(), true);
        if (ec) throw config::ConfigError("daemon.state_dir", "cannot create " + d.string() + ": " + ec.message());
        if (::access(d.c_str(), W_OK | X_OK) != 0)
          throw config::ConfigError("daemon.state_dir", d.string() + " is not writable by the daemon's user: " +
                                                            std::strerror(errno));
      }
      const QueueContext c{loop_,
                           cfg_,
                           node_id_,
                           parts_,
                           circuits_,
                           scheduler_,
                           state_,
                           timeline_,
                           phase_,
                           std::bind_front(&Supervisor::maybe_finish_shutdown, this),
                           std::bind_front(&Supervisor::remove_job_files, this)};
      if (cfg_.store.url.empty()) queue_ = std::make_unique<LocalQueue>(c, (dir / "jobs.sqlite").string());
      else queue_ = std::make_unique<SharedQueue>(c);
      if (said) spdlog::info("space under daemon.state_dir ({}) is back: starting", dir.string());
      return;
    } catch (const StateWriteFailed& e) {
      if (!said)
        spdlog::error("the disk under daemon.state_dir ({}) is full ({}): waiting for space before starting",
                      dir.string(), e.what());
      sd_notify(0, "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=waiting for space under daemon.state_dir");
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
  }
}

void Supervisor::setup_state() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::strcpy(host, "localhost");
  node_id_ = cfg_.store.node_id.empty() ? std::string(host) + "/" + cfg_.daemon.instance : cfg_.store.node_id;
  open_store();
  if (cfg_.timeline.enabled) {
    std::string path = cfg_.timeline.path.empty() ? (fs::path(cfg_.daemon.state_dir) / "timeline.log").string()
                                                  : cfg_.timeline.path;
    timeline_.open(path, cfg_.timeline.also_stderr);
  }
  parts_.attach(*queue_, std::bind_front(&Scheduler::prove_next, &scheduler_));
  scheduler_.attach(*queue_);
  witness::sweep_cache(cfg_.daemon.state_dir + "/witness");  // what a build killed with an earlier run left
  circuits_.open_configured();
  ring_ = ring_size(cfg_, circuits_.keys());
  circuits_.restore(*queue_, queue_->stored_circuits(), ring_.max_vars, ring_.max_domain);
}

// One record per synthesis worker, then one per device's GPU worker; ids are unique across kinds.
void Supervisor::create_workers() {
  uint32_t id = 0;
  for (uint32_t i = 0; i < cfg_.synthesis.workers; i++) {
    auto w = std::make_unique<Worker>();
    w->kind = WorkerKind::Synth, w->index = i, w->id = id++, w->name = "synth" + std::to_string(i);
    w->cpus = cfg_.synthesis.cpus.empty() ? "all" : cfg_.synthesis.cpus[i].text;
    workers_.add(std::move(w));
  }
  for (uint32_t i = 0; i < cfg_.gpu.devices.size(); i++) {
    auto w = std::make_unique<Worker>();
    w->kind = WorkerKind::Gpu, w->index = i, w->id = id++, w->device = cfg_.gpu.devices[i];
    w->name = "gpu" + std::to_string(i);
    w->cpus = cfg_.gpu.cpus.empty() ? "all" : cfg_.gpu.cpus[i].text;
    device(w->device)->gpu = w.get();
    workers_.add(std::move(w));
  }
}

}  // namespace cuzk::sup
