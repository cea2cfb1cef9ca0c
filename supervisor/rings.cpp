// The slot rings (rings.hpp): their size, names, creation and removal.
#include "supervisor/rings.hpp"

#include <fcntl.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <spdlog/spdlog.h>

namespace fs = std::filesystem;

namespace cuzk::sup {

RingSize ring_size(const config::Config& cfg, const std::vector<ZKeyHeader>& dims) {
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

void SlotRings::remove_stale() {
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
    if (shm::Segment::remove_name(n))
      spdlog::info("removing the stale segment /dev/shm/{}", n);
    else
      spdlog::warn("/dev/shm/{} is not a segment of this daemon's user: left alone", n);
  }
}

// The name is written before a ring of it exists, so that whatever a kill leaves is found at the
// next start. A state folder that takes no write (a full disk) only costs that: the start goes on.
void SlotRings::record_prefix() {
  prefix_ = shm::ring_prefix(cfg_.daemon.instance);
  const fs::path rec = rings_record(cfg_);
  const std::string line = prefix_ + "\n";
  // Written over the old name in place (the same length for the same instance): no new block is
  // needed, so a full disk still takes it.
  const int fd = ::open(rec.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  bool ok = fd >= 0 && ::pwrite(fd, line.data(), line.size(), 0) == ssize_t(line.size()) &&
            ::ftruncate(fd, off_t(line.size())) == 0 && ::fdatasync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok)
    spdlog::error(
        "cannot write {} ({}): the slot rings /dev/shm/{}.dev* are not removed at the next start if this "
        "run is killed",
        rec.string(), std::strerror(err), prefix_);
}

std::vector<Device> SlotRings::create(const RingSize& size) {
  const uint64_t max_vars = size.max_vars, max_domain = size.max_domain;
  const bool abc = cfg_.synthesis.abc == "cpu";
  remove_stale();
  std::vector<Device> devices;
  // A name that exists already is not this run's (the random part makes that all but impossible
  // unless someone made it on purpose): it is left alone, and the rings get another name.
  for (int tries = 0;; tries++) {
    record_prefix();
    try {
      for (int id : cfg_.gpu.devices) {
        Device d;
        d.id = id;
        d.seg = create_ring(id, max_vars, max_domain, abc);
        d.slots.resize(cfg_.gpu.slots);
        devices.push_back(std::move(d));
        made_.push_back(id);
      }
      break;
    } catch (const shm::NameTaken& e) {
      remove();
      devices.clear();
      if (tries == 4) throw;
      spdlog::warn("{}; the slot rings get another name", e.what());
    }
  }
  for (const Device& d : devices)
    spdlog::info("slot ring /dev/shm/{}: {} slots of {} MiB{}", d.seg->name(), cfg_.gpu.slots,
                 d.seg->header().slot_bytes >> 20,
                 abc ? ""
                     : fmt::format(" (w only: synthesis.abc = \"gpu\" saves {} MiB a slot)",
                                   (shm::slot_bytes_for(max_vars, max_domain) - d.seg->header().slot_bytes) >> 20));
  warn_if_few_slots(devices);
  return devices;
}

// A slot ring larger than all of /dev/shm is a configuration error (exit 78: no restart can fix it).
// One that only lacks room now (/dev/shm filled by something else) waits for it, telling systemd so,
// as a full disk under state_dir does, instead of exiting into a restart loop.
std::unique_ptr<shm::Segment> SlotRings::create_ring(int device, uint64_t max_vars, uint64_t max_domain, bool abc) {
  for (bool said = false;; said = true) {
    try {
      auto seg = shm::Segment::create(prefix_, device, cfg_.gpu.slots, max_vars, max_domain, abc);
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
void SlotRings::warn_if_few_slots(const std::vector<Device>& devices) const {
  const config::SlotNeeds need = config::slot_needs(cfg_);
  if (cfg_.gpu.slots >= need.minimum || devices.empty()) return;
  const double slot_mib = double(devices.front().seg->header().slot_bytes) / (1 << 20);
  spdlog::warn(
      "gpu.slots = {} cannot keep the GPU fed: {} synthesis workers over {} device(s) write into up to {} slots of a "
      "device while its GPU proves another, so with fewer slots some workers wait for one while the GPU waits for "
      "their work; set gpu.slots = {} ({} at least, one more holds the GPU worker's next proof; {:.1f} MiB of /dev/shm "
      "per slot, {:.1f} MiB more in all)",
      cfg_.gpu.slots, cfg_.synthesis.workers, devices.size(), need.minimum - 1, need.recommended, need.minimum,
      slot_mib, double(need.recommended - cfg_.gpu.slots) * slot_mib * double(devices.size()));
}

SlotRings::~SlotRings() { remove(); }

void SlotRings::remove() {
  for (int id : made_) shm::Segment::remove(prefix_, id);
  made_.clear();
}

}  // namespace cuzk::sup
