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
#include <thread>

#include <spdlog/spdlog.h>

#include "shm/results.hpp"
#include "supervisor/generators.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/local_queue.hpp"
#include "supervisor/shared_queue.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

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
                           [this] { maybe_finish_shutdown(); },
                           [this](const ActiveJob& j) { remove_job_files(j); }};
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
  parts_.attach(*queue_);
  scheduler_.attach(*queue_);
  circuits_.open_configured();
  ring_ = ring_size(cfg_, circuits_.keys());
  circuits_.restore(*queue_, queue_->stored_circuits(), ring_.max_vars, ring_.max_domain);
}

Supervisor::RingSize Supervisor::ring_size(const config::Config& cfg, const std::vector<ZKeyHeader>& dims) {
  RingSize r;
  for (const auto& d : dims) {
    r.max_vars = std::max<uint64_t>(r.max_vars, d.n_vars);
    r.max_domain = std::max<uint64_t>(r.max_domain, d.domain_size);
  }
  // Room for circuits to be added at run time.
  r.max_vars = std::max<uint64_t>(r.max_vars, cfg.gpu.slot_vars);
  r.max_domain = std::max<uint64_t>(r.max_domain, cfg.gpu.slot_domain);
  const bool abc = cfg.synthesis.abc == "cpu";  // else the GPU worker evaluates a, b, c: slots hold w only
  r.per_ring = shm::segment_bytes_for(cfg.gpu.slots, r.max_vars, r.max_domain, abc);
  const uint64_t total = r.per_ring * cfg.gpu.devices.size();
  if (cfg.limits.memory_budget && total + cfg.limits.upload_memory > cfg.limits.memory_budget)
    throw config::ConfigError("limits.memory_budget",
                              std::to_string(cfg.limits.memory_budget) + " bytes cannot hold the slot rings (" +
                                  std::to_string(cfg.gpu.devices.size()) + " devices x " +
                                  std::to_string(cfg.gpu.slots) + " slots = " + std::to_string(total) +
                                  " bytes) and limits.upload_memory (" + std::to_string(cfg.limits.upload_memory) +
                                  " bytes); lower gpu.slots or upload_memory, or raise the budget");
  return r;
}

namespace {

// <state_dir>/rings: the rings' names (their prefix) this run made, for the next start to remove
// when this one did not get to (a kill -9).
fs::path rings_record(const config::Config& c) { return fs::path(c.daemon.state_dir) / "rings"; }

}  // namespace

void Supervisor::remove_stale_rings() {
  const fs::path rec = rings_record(cfg_);
  std::string prev;
  {
    std::ifstream f(rec);
    if (!f || !std::getline(f, prev)) return;
  }
  if (!shm::is_ring_prefix(prev)) {
    spdlog::warn("{} does not name slot rings ('{}'): ignored", rec.string(), prev);
    return;
  }
  // Every device's, including devices no longer configured.
  const std::string stem = prev + ".dev";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(stem, 0) != 0 || n.size() == stem.size() ||
        n.find_first_not_of("0123456789", stem.size()) != std::string::npos)
      continue;
    if (shm::Segment::remove_name(n)) spdlog::info("removing the stale segment /dev/shm/{}", n);
    else spdlog::warn("/dev/shm/{} is not a segment of this daemon's user: left alone", n);
  }
}

// The name is written before a ring of it exists, so that whatever a kill leaves is found at the
// next start. A state folder that takes no write (a full disk) only costs that: the start goes on.
void Supervisor::record_ring_prefix() {
  ring_prefix_ = shm::ring_prefix(cfg_.daemon.instance);
  const fs::path rec = rings_record(cfg_);
  const std::string line = ring_prefix_ + "\n";
  // Written over the old name in place (the same length for the same instance): no new block is
  // needed, so a full disk still takes it.
  const int fd = ::open(rec.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  bool ok = fd >= 0 && ::pwrite(fd, line.data(), line.size(), 0) == ssize_t(line.size()) &&
            ::ftruncate(fd, off_t(line.size())) == 0 && ::fdatasync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok)
    spdlog::error("cannot write {} ({}): the slot rings /dev/shm/{}.dev* are not removed at the next start if this "
                  "run is killed",
                  rec.string(), std::strerror(err), ring_prefix_);
}

void Supervisor::setup_rings() {
  const RingSize rs = ring_;
  const uint64_t max_vars = rs.max_vars, max_domain = rs.max_domain;
  const bool abc = cfg_.synthesis.abc == "cpu";
  remove_stale_rings();
  // A name that exists already is not this run's (the random part makes that all but impossible
  // unless someone made it on purpose): it is left alone, and the rings get another name.
  for (int tries = 0;; tries++) {
    record_ring_prefix();
    try {
      for (int id : cfg_.gpu.devices) {
        Device d;
        d.id = id;
        d.seg = create_ring(id, max_vars, max_domain, abc);
        d.slots.resize(cfg_.gpu.slots);
        devices_.push_back(std::move(d));
      }
      break;
    } catch (const shm::NameTaken& e) {
      for (auto& d : devices_) shm::Segment::remove(ring_prefix_, d.id);
      devices_.clear();
      if (tries == 4) throw;
      spdlog::warn("{}; the slot rings get another name", e.what());
    }
  }
  for (const Device& d : devices_)
    spdlog::info("slot ring /dev/shm/{}: {} slots of {} MiB{}", d.seg->name(), cfg_.gpu.slots,
                 d.seg->header().slot_bytes >> 20,
                 abc ? "" : fmt::format(" (w only: synthesis.abc = \"gpu\" saves {} MiB a slot)",
                                        (shm::slot_bytes_for(max_vars, max_domain) - d.seg->header().slot_bytes) >> 20));
}

// A slot ring larger than all of /dev/shm is a configuration error (exit 78: no restart can fix it).
// One that only lacks room now (/dev/shm filled by something else) waits for it, telling systemd so,
// as a full disk under state_dir does, instead of exiting into a restart loop.
std::unique_ptr<shm::Segment> Supervisor::create_ring(int device, uint64_t max_vars, uint64_t max_domain, bool abc) {
  for (bool said = false;; said = true) {
    try {
      auto seg = shm::Segment::create(ring_prefix_, device, cfg_.gpu.slots, max_vars, max_domain, abc);
      if (said) spdlog::info("room in /dev/shm is back: starting");
      return seg;
    } catch (const shm::NoRoom& e) {
      if (e.size && e.need > e.size)
        throw config::ConfigError("gpu.slots", std::string(e.what()) + ": /dev/shm is smaller than the ring; lower " +
                                                   "gpu.slots or enlarge /dev/shm");
      if (!said) spdlog::error("{}: waiting for room in /dev/shm before starting", e.what());
      sd_notify(0, "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=waiting for room in /dev/shm");
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
  }
}

// Too few slots per device leave synthesis workers idle (nowhere to write) and the GPU waiting for
// their work: said once at start, with the value to set.
void Supervisor::warn_if_few_slots() const {
  const config::SlotNeeds need = config::slot_needs(cfg_);
  if (cfg_.gpu.slots >= need.minimum || devices_.empty()) return;
  const double slot_mib = double(devices_.front().seg->header().slot_bytes) / (1 << 20);
  spdlog::warn(
      "gpu.slots = {} cannot keep the GPU fed: {} synthesis workers over {} device(s) write into up to {} slots of a "
      "device while its GPU proves another, so with fewer slots some workers wait for one while the GPU waits for "
      "their work; set gpu.slots = {} ({} at least, one more holds the GPU worker's next proof; {:.1f} MiB of /dev/shm "
      "per slot, {:.1f} MiB more in all)",
      cfg_.gpu.slots, cfg_.synthesis.workers, devices_.size(), need.minimum - 1, need.recommended, need.minimum,
      slot_mib, double(need.recommended - cfg_.gpu.slots) * slot_mib * double(devices_.size()));
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
