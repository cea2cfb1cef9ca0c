// The supervisor's core: worker processes, slot assignment, crash repair, and the job lifecycle.
#include "supervisor/supervisor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "supervisor/generators.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

namespace {

constexpr uint32_t kMaxAttempts = 3;  // a partition failing this often for non-input reasons fails its job

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string self_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

template <class H>
void close_handle(H* h) {
  if (!h) return;
  uv_close(reinterpret_cast<uv_handle_t*>(h), [](uv_handle_t* x) { delete reinterpret_cast<H*>(x); });
}

std::string kv_of(const Worker& w, uint32_t partition, uint32_t slot, int device) {
  return tl::Kv()
      .add(tl::kPartition, partition)
      .add(tl::kWorker, w.name)
      .add(tl::kSlot, slot)
      .add(tl::kDevice, device)
      .str();
}

const char* kind_name(const Worker& w) { return w.kind == Worker::Synth ? tl::kKindSynth : tl::kKindGpu; }

// The keys that name a worker in WORKER_* events: worker, kind and, for a GPU worker, its device.
tl::Kv worker_kv(const Worker& w) {
  tl::Kv kv;
  kv.add(tl::kWorker, w.name).add(tl::kKind, kind_name(w));
  if (w.kind == Worker::Gpu) kv.add(tl::kDevice, w.device);
  return kv;
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

// ---------------------------------------------------------------------------------------------
// start-up

void Supervisor::setup_state() {
  fs::create_directories(cfg_.daemon.state_dir);
  fs::create_directories(fs::path(cfg_.daemon.state_dir) / "results");
  fs::create_directories(fs::path(cfg_.daemon.state_dir) / "uploads");
  store_ = std::make_unique<JobStore>((fs::path(cfg_.daemon.state_dir) / "jobs.sqlite").string());
  if (cfg_.timeline.enabled) {
    std::string path = cfg_.timeline.path.empty() ? (fs::path(cfg_.daemon.state_dir) / "timeline.log").string()
                                                  : cfg_.timeline.path;
    timeline_ = std::make_unique<Timeline>(path, t0_ns_, cfg_.timeline.also_stderr);
  }
  for (const auto& c : cfg_.circuits) dims_.push_back(read_zkey_header(c.zkey));
  generators_ = open_generators(cfg_, dims_);
  std::vector<uint32_t> n_vars;
  for (const auto& d : dims_) n_vars.push_back(d.n_vars);
  validator_ = std::make_unique<SubmitValidator>(cfg_, std::move(n_vars), generators_);
}

void Supervisor::setup_rings() {
  uint64_t max_vars = 1, max_domain = 1;
  for (const auto& d : dims_) {
    max_vars = std::max<uint64_t>(max_vars, d.n_vars);
    max_domain = std::max<uint64_t>(max_domain, d.domain_size);
  }
  const uint64_t per_ring = shm::segment_bytes_for(cfg_.gpu.slots, max_vars, max_domain);
  const uint64_t total = per_ring * cfg_.gpu.devices.size();
  if (cfg_.limits.memory_budget && total > cfg_.limits.memory_budget)
    throw config::ConfigError("limits.memory_budget",
                              std::to_string(cfg_.limits.memory_budget) + " bytes cannot hold the slot rings (" +
                                  std::to_string(cfg_.gpu.devices.size()) + " devices x " +
                                  std::to_string(cfg_.gpu.slots) + " slots = " + std::to_string(total) +
                                  " bytes); lower gpu.slots or raise the budget");
  // Segments of an earlier run of this instance, including devices no longer configured.
  const std::string prefix = "cuzk." + cfg_.daemon.instance + ".dev";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
      spdlog::info("removing the stale segment /{}", n);
      fs::remove(e.path(), ec);
    }
  }
  for (int id : cfg_.gpu.devices) {
    Device d;
    d.id = id;
    d.seg = shm::Segment::create(cfg_.daemon.instance, id, cfg_.gpu.slots, max_vars, max_domain);
    d.slots.resize(cfg_.gpu.slots);
    spdlog::info("slot ring /{}: {} slots of {} MiB", d.seg->name(), cfg_.gpu.slots,
                 d.seg->header().slot_bytes >> 20);
    devices_.push_back(std::move(d));
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
      "their work; set gpu.slots = {} ({} at least, one more stays READY for the next proof; {:.1f} MiB of /dev/shm "
      "per slot, {:.1f} MiB more in all)",
      cfg_.gpu.slots, cfg_.synthesis.workers, devices_.size(), need.minimum - 1, need.recommended, need.minimum,
      slot_mib, double(need.recommended - cfg_.gpu.slots) * slot_mib * double(devices_.size()));
}

void Supervisor::recover_jobs() {
  for (JobRec& r : store_->recover()) {
    ActiveJob j;
    j.rec = std::move(r);
    bool known = false;
    for (uint32_t i = 0; i < cfg_.circuits.size(); i++)
      if (cfg_.circuits[i].name == j.rec.circuit) j.circuit = i, known = true;
    const uint64_t id = j.rec.id;
    // Content the request carried lives in <state_dir>/uploads/<folder>/: removed with the job.
    const fs::path uploads = fs::path(cfg_.daemon.state_dir) / "uploads";
    for (const auto& p : j.rec.parts) {
      const fs::path folder = fs::path(p.witness).parent_path();
      if (folder.parent_path() == uploads) j.upload_dir = folder.string();
    }
    std::string gone;
    if (!known) gone = "circuit " + j.rec.circuit + " is no longer configured";
    else if (j.rec.input == InputKind::Inputs && !generators_[j.circuit])
      gone = "circuit " + j.rec.circuit + " no longer has a witness_generator for the job's inputs";
    if (!gone.empty()) {
      store_->set_job(id, JState::Failed, gone, wall_ms());
      std::error_code ec;
      if (!j.upload_dir.empty()) fs::remove_all(j.upload_dir, ec);
      continue;
    }
    j.times.resize(j.rec.parts.size());
    size_t left = 0;
    for (auto& p : j.rec.parts)
      if (p.state == PState::Queued) {
        pending_.insert({int(j.rec.priority), id, p.index});
        j.times[p.index].queued = shm::monotonic_ns();
        left++;
      }
    event(tl::kJobRecovered, id,
          tl::Kv()
              .add(tl::kPartitions, left)
              .add(tl::kPriority, to_string(j.rec.priority))
              .add(tl::kCircuit, j.rec.circuit)
              .str());
    spdlog::info("job {}: recovered with {} partitions to prove", id, left);
    jobs_.emplace(id, std::move(j));
  }
}

// Spawns (or respawns) one worker with a fresh socketpair and the next epoch.
void Supervisor::spawn(Worker& w) {
  int fds[2];
  shm::make_socketpair(fds);
  w.epoch++;
  const std::string exe =
      worker_dir_ + (w.kind == Worker::Synth ? "/cuzk-synth-worker" : "/cuzk-gpu-worker");
  std::vector<std::string> args = {exe,         "--config", config_path_, "--index", std::to_string(w.index),
                                   "--worker-id", std::to_string(w.id), "--epoch", std::to_string(w.epoch),
                                   "--fd",        "3"};
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
    for (auto& w : self->workers_)
      if (w->proc == p) return self->on_exit(*w, status, sig);
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
  w.fd = fds[0];
  fcntl(w.fd, F_SETFL, fcntl(w.fd, F_GETFL) | O_NONBLOCK);
  w.poll = new uv_poll_t{};
  uv_poll_init(loop_, w.poll, w.fd);
  w.poll->data = &w;
  uv_poll_start(w.poll, UV_READABLE, [](uv_poll_t* h, int status, int) {
    auto* self = static_cast<Supervisor*>(h->loop->data);
    self->on_readable(*static_cast<Worker*>(h->data));
  });
  w.state = "starting";
  w.last_heard_ns = w.started_ns = shm::monotonic_ns();
  event(tl::kWorkerStart, 0, worker_kv(w).add(tl::kPid, w.pid).add(tl::kEpoch, w.epoch).str());
  spdlog::info("{}: started pid {} epoch {}", w.name, w.pid, w.epoch);
}

// ---------------------------------------------------------------------------------------------
// control plane

void Supervisor::on_readable(Worker& w) {
  alignas(8) char buf[sizeof(shm::Msg) + 16];
  for (;;) {
    ssize_t n = ::recv(w.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // EOF: the worker is gone; its exit callback does the repair
      if (w.poll) uv_poll_stop(w.poll);
      return;
    }
    shm::Msg m;
    if (!shm::decode_msg(buf, size_t(n), m)) {
      spdlog::warn("{}: dropped a malformed control message ({} bytes)", w.name, n);
      continue;
    }
    if (m.worker != w.id || m.epoch != w.epoch) {
      spdlog::warn("{}: dropped a message of epoch {} (current {})", w.name, m.epoch, w.epoch);
      continue;
    }
    w.last_heard_ns = shm::monotonic_ns();
    on_message(w, m);
  }
}

void Supervisor::on_message(Worker& w, const shm::Msg& m) {
  switch (shm::MsgType(m.type)) {
    case shm::MsgType::Hello:
      w.hello = m.text;
      if (w.state == "starting") {
        w.state = w.task ? "busy" : "idle";
        // From spawn to here a GPU worker was loading its keys (and building its tables).
        event(tl::kWorkerReady, 0,
              worker_kv(w)
                  .add(tl::kPid, w.pid)
                  .add(tl::kEpoch, w.epoch)
                  .ms(tl::kStartupMs, double(shm::monotonic_ns() - w.started_ns) / 1e6)
                  .str());
      }
      spdlog::info("{}: ready ({})", w.name, m.text);
      schedule();
      break;
    case shm::MsgType::Heartbeat: break;
    case shm::MsgType::Event:
      if (timeline_) timeline_->add(m.t_ns, m.name, m.job, m.text);
      break;
    case shm::MsgType::SynthDone: on_synth_done(w, m); break;
    case shm::MsgType::ProveDone: on_prove_done(w, m); break;
    default: spdlog::warn("{}: unexpected message {}", w.name, shm::to_string(shm::MsgType(m.type)));
  }
}

void Supervisor::on_exit(Worker& w, int64_t status, int sig) {
  end_slot_wait(w, 0, "");
  // The task it held, if any, so that the timeline shows which partition the exit interrupted.
  tl::Kv kv;
  kv.add(tl::kWorker, w.name).add(tl::kPid, w.pid).add(tl::kStatus, status).add(tl::kSignal, sig);
  if (w.task) kv.add(tl::kPartition, w.partition).add(tl::kSlot, w.slot).add(tl::kDevice, w.task_device);
  kv.add(tl::kKind, kind_name(w));
  if (!w.task && w.kind == Worker::Gpu) kv.add(tl::kDevice, w.device);
  event(tl::kWorkerExit, w.task ? w.job : 0, kv.str());
  spdlog::log(stopping_ ? spdlog::level::info : spdlog::level::warn, "{}: pid {} exited (status {}, signal {})",
              w.name, w.pid, status, sig);
  close_handle(w.proc);
  w.proc = nullptr;
  w.state = "exited";  // never dispatched to until respawned
  if (w.poll) {
    uv_poll_stop(w.poll);
    close_handle(w.poll);
    w.poll = nullptr;
  }
  if (w.fd >= 0) ::close(w.fd);
  w.fd = -1;
  w.pid = 0;
  // Repair by slot state: what the dead worker held goes back where it can be redone.
  if (w.task) {
    w.task = false;
    Device* d = device(w.task_device);
    ActiveJob* j = active(w.job);
    if (d && w.slot < d->slots.size()) {
      SlotUse& u = d->slots[w.slot];
      shm::SlotState st = d->seg->state(w.slot);
      const bool ours = u.used && u.job == w.job && u.partition == w.partition;
      if (ours && (!j || is_final(j->rec.state))) {
        release_slot(d->id, w.slot);  // its job ended meanwhile (cancelled or failed)
      } else if (w.kind == Worker::Synth && ours) {
        if (st == shm::SlotState::Ready && j && !is_final(j->rec.state)) {
          // It finished writing but died before reporting: the slot is good.
          shm::Msg m{};
          m.job = w.job, m.partition = w.partition, m.slot = w.slot, m.device = w.task_device, m.status = shm::kOk;
          m.t_ns = shm::monotonic_ns();
          w.task = true;
          on_synth_done(w, m);
          w.task = false;
        } else {
          release_slot(d->id, w.slot);
          requeue(w.job, w.partition, w.name + " died during synthesis", false);
        }
      } else if (w.kind == Worker::Gpu && ours) {
        if (st == shm::SlotState::Proving || st == shm::SlotState::Ready) {
          // a, b, c are intact in shared memory: prove again without new synthesis.
          d->seg->force(w.slot, shm::SlotState::Ready);
          u.phase = SlotUse::Ready;
          if (j) set_pstate(*j, w.partition, PState::Ready);
          spdlog::info("job {} partition {}: slot {} back to READY after {} died", w.job, w.partition, w.slot, w.name);
        } else {
          fs::path dir = fs::path(cfg_.daemon.state_dir) / "results" / std::to_string(w.job);
          const std::string stem = std::to_string(w.partition);
          if (j && fs::exists(dir / (stem + ".proof.json")) && fs::exists(dir / (stem + ".public.json"))) {
            u.used = false;
            complete_partition(*j, w.partition, dir.string());
          } else {
            release_slot(d->id, w.slot);
            requeue(w.job, w.partition, w.name + " died after freeing its slot", false);
          }
        }
      }
    }
  }
  if (stopping_) {
    w.state = "stopped";
    maybe_finish_shutdown();
    return;
  }
  if (status == config::kExitConfig) {
    w.state = "failed";
    w.failure = "exited 78 (configuration error): not restarted";
    spdlog::error("{}: {}", w.name, w.failure);
  } else {
    restart_later(w);
  }
  if (w.kind == Worker::Gpu && w.state == "failed") {
    // Nobody will prove this device's ready slots: hand their partitions back to synthesis.
    if (Device* d = device(w.device))
      for (uint32_t s = 0; s < d->slots.size(); s++)
        if (d->slots[s].used && d->slots[s].phase != SlotUse::Synth) {
          uint64_t job = d->slots[s].job;
          uint32_t p = d->slots[s].partition;
          release_slot(d->id, s);
          requeue(job, p, "device " + std::to_string(d->id) + " has no working GPU worker", false);
        }
  }
  schedule();
}

// Exponential backoff from restart_backoff_initial_ms, doubling per recent restart, capped at
// restart_backoff_max_ms; more than restart_intensity restarts within restart_period_s: failed.
void Supervisor::restart_later(Worker& w) {
  const uint64_t now = shm::monotonic_ns();
  const uint64_t period = uint64_t(cfg_.limits.restart_period_s) * 1000000000ull;
  while (!w.recent_restarts.empty() && w.recent_restarts.front() + period < now) w.recent_restarts.pop_front();
  if (w.recent_restarts.size() >= cfg_.limits.restart_intensity) {
    w.state = "failed";
    w.failure = std::to_string(w.recent_restarts.size()) + " restarts within " +
                std::to_string(cfg_.limits.restart_period_s) + " s";
    spdlog::error("{}: marked failed ({})", w.name, w.failure);
    event(tl::kWorkerFailed, 0, tl::Kv().add(tl::kWorker, w.name).add(tl::kRestarts, w.restarts).str());
    return;
  }
  uint64_t delay = cfg_.limits.restart_backoff_initial_ms;
  for (size_t i = 0; i < w.recent_restarts.size() && delay < cfg_.limits.restart_backoff_max_ms; i++) delay *= 2;
  delay = std::min<uint64_t>(delay, cfg_.limits.restart_backoff_max_ms);
  w.recent_restarts.push_back(now);
  w.restarts++;
  w.state = "backoff";
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
        if (!self->stopping_ && w.state == "backoff") self->spawn(w);
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
      if (w->fd >= 0) on_readable(*w);
      if (shm::monotonic_ns() - w->last_heard_ns <= limit) continue;
      spdlog::error("{}: no heartbeat for {} ms, killing pid {}", w->name, (now - w->last_heard_ns) / 1000000, w->pid);
      event(tl::kHeartbeatMissed, 0, tl::Kv().add(tl::kWorker, w->name).add(tl::kPid, w->pid).str());
      ::kill(w->pid, SIGKILL);
      w->last_heard_ns = now;  // one kill per timeout; the exit callback repairs
    }
}

// ---------------------------------------------------------------------------------------------
// scheduling

void Supervisor::set_pstate(ActiveJob& j, uint32_t p, PState s) {
  j.rec.parts[p].state = s;
  store_->set_partition(j.rec.id, j.rec.parts[p]);
}

void Supervisor::release_slot(int dev, uint32_t slot) {
  Device* d = device(dev);
  if (!d || slot >= d->slots.size()) return;
  d->slots[slot] = SlotUse{};
  d->seg->force(slot, shm::SlotState::Free);
}

void Supervisor::schedule() {
  if (stopping_) return;
  while (!draining_ && dispatch_synth()) {
  }
  for (auto& d : devices_) dispatch_proofs(d);
  track_slot_waits();
  maybe_finish_shutdown();
}

// Called once dispatch_synth has placed what it could: a synthesis worker that is still idle while
// partitions are queued has no free slot to write into. Its wait is written as one SLOT_WAIT when
// it ends: at its next dispatch (with the job it takes), or when the queue empties or it stops.
void Supervisor::track_slot_waits() {
  const bool queued = !pending_.empty() && !draining_;
  const uint64_t now = shm::monotonic_ns();
  for (auto& w : workers_) {
    if (w->kind != Worker::Synth) continue;
    const bool waiting = queued && w->state == "idle" && !w->task;
    if (waiting && !w->slot_wait_ns) w->slot_wait_ns = now;
    else if (!waiting && w->slot_wait_ns) end_slot_wait(*w, 0, "");
  }
}

void Supervisor::end_slot_wait(Worker& w, uint64_t job, const std::string& kv) {
  if (!w.slot_wait_ns) return;
  const double ms = double(shm::monotonic_ns() - w.slot_wait_ns) / 1e6;
  w.slot_wait_ns = 0;
  event(tl::kSlotWait, job, tl::Kv().add(tl::kWorker, w.name).ms(tl::kWaitMs, ms).raw(kv).str());
}

// Assigns the best pending partition to an idle synthesis worker and a free slot. Backpressure:
// nothing is synthesized without a free slot to put it in.
bool Supervisor::dispatch_synth() {
  if (pending_.empty()) return false;
  Worker* sw = nullptr;
  for (auto& w : workers_)
    if (w->kind == Worker::Synth && w->state == "idle" && !w->task) {
      sw = w.get();
      break;
    }
  if (!sw) return false;
  // The device with the most free slots whose GPU worker is not failed.
  Device* best = nullptr;
  uint32_t best_slot = 0;
  size_t best_free = 0;
  for (auto& d : devices_) {
    if (!d.gpu || d.gpu->state == "failed") continue;
    size_t n = 0;
    uint32_t first = 0;
    for (uint32_t s = 0; s < d.slots.size(); s++)
      if (!d.slots[s].used && d.seg->state(s) == shm::SlotState::Free) {
        if (n++ == 0) first = s;
      }
    if (n > best_free) best = &d, best_slot = first, best_free = n;
  }
  if (!best) return false;
  auto [prio, job_id, p] = *pending_.begin();
  pending_.erase(pending_.begin());
  ActiveJob* j = active(job_id);
  if (!j || is_final(j->rec.state) || j->rec.parts[p].state != PState::Queued) return true;
  // Durable first: the store says synthesizing before the worker hears of it.
  set_pstate(*j, p, PState::Synthesizing);
  if (j->rec.state == JState::Queued) {
    j->rec.state = JState::Running;
    store_->set_job(job_id, JState::Running, "", 0);
  }
  shm::SlotHeader& h = best->seg->slot(best_slot);
  h.owner_worker = sw->id;
  h.owner_epoch = sw->epoch;
  h.job = job_id;
  h.partition = p;
  h.circuit = j->circuit;
  h.generation++;
  h.n_vars = 0;
  h.domain_size = 0;
  h.synth_end_ns = 0;
  h.cancel.store(0);
  best->seg->transition(best_slot, shm::SlotState::Free, shm::SlotState::Synthesizing);
  best->slots[best_slot] = SlotUse{true, job_id, p, SlotUse::Synth};
  end_slot_wait(*sw, job_id,
                tl::Kv().add(tl::kPartition, p).add(tl::kSlot, best_slot).add(tl::kDevice, best->id).str());
  sw->task = true, sw->job = job_id, sw->partition = p, sw->slot = best_slot, sw->task_device = best->id;
  sw->state = "busy";
  j->times[p].synth_start = shm::monotonic_ns();
  shm::Msg m{};
  m.type = uint16_t(shm::MsgType::Synthesize);
  m.worker = sw->id, m.epoch = sw->epoch, m.job = job_id, m.partition = p, m.slot = best_slot;
  m.circuit = j->circuit, m.device = best->id, m.t_ns = shm::monotonic_ns();
  m.flags = j->rec.input == InputKind::Inputs ? shm::kMsgFromInputs : 0;
  m.set_text(j->rec.parts[p].witness);
  if (::send(sw->fd, &m, sizeof m, MSG_NOSIGNAL) != ssize_t(sizeof m))
    spdlog::warn("{}: could not send work (its exit will requeue it)", sw->name);
  return true;
}

// Hands the device's best READY slot to its GPU worker when that worker is idle.
void Supervisor::dispatch_proofs(Device& d) {
  Worker* g = d.gpu;
  if (!g || g->state != "idle" || g->task) return;
  int best = -1;
  Key best_key{};
  for (uint32_t s = 0; s < d.slots.size(); s++) {
    const SlotUse& u = d.slots[s];
    if (!u.used || u.phase != SlotUse::Ready) continue;
    ActiveJob* j = active(u.job);
    if (!j) {
      release_slot(d.id, s);
      continue;
    }
    Key k{int(j->rec.priority), u.job, u.partition};
    if (best < 0 || k < best_key) best = int(s), best_key = k;
  }
  if (best < 0) return;
  SlotUse& u = d.slots[best];
  ActiveJob& j = *active(u.job);
  set_pstate(j, u.partition, PState::Proving);
  shm::SlotHeader& h = d.seg->slot(uint32_t(best));
  h.owner_worker = g->id;
  h.owner_epoch = g->epoch;
  u.phase = SlotUse::Proving;
  g->task = true, g->job = u.job, g->partition = u.partition, g->slot = uint32_t(best), g->task_device = d.id;
  g->state = "busy";
  j.times[u.partition].prove_start = shm::monotonic_ns();
  shm::Msg m{};
  m.type = uint16_t(shm::MsgType::Prove);
  m.worker = g->id, m.epoch = g->epoch, m.job = u.job, m.partition = u.partition, m.slot = uint32_t(best);
  m.circuit = j.circuit, m.device = d.id, m.t_ns = shm::monotonic_ns();
  if (::send(g->fd, &m, sizeof m, MSG_NOSIGNAL) != ssize_t(sizeof m))
    spdlog::warn("{}: could not send work (its exit will repair the slot)", g->name);
}

void Supervisor::on_synth_done(Worker& w, const shm::Msg& m) {
  if (!w.task || w.job != m.job || w.partition != m.partition) return;  // stale
  w.task = false;
  if (w.state == "busy") w.state = "idle";
  Device* d = device(w.task_device);
  ActiveJob* j = active(m.job);
  const uint32_t slot = w.slot;
  if (!j || is_final(j->rec.state)) {
    // Cancelled or failed meanwhile: whatever the worker left, the slot is ours to free.
    if (d) release_slot(d->id, slot);
    schedule();
    return;
  }
  PartTimes& t = j->times[m.partition];
  t.synth_ms = m.ms[0];
  synth_sum_s_ += m.ms[0] / 1000, synth_count_++;
  if (m.status == shm::kOk) {
    if (!d || d->seg->state(slot) != shm::SlotState::Ready) {
      if (d) release_slot(d->id, slot);
      requeue(m.job, m.partition, "slot was not READY after synthesis", true);
    } else {
      set_pstate(*j, m.partition, PState::Ready);
      d->slots[slot].phase = SlotUse::Ready;
      t.ready = shm::monotonic_ns();
      event(tl::kSlotReady, m.job, kv_of(w, m.partition, slot, d->id));
    }
  } else {
    if (d) release_slot(d->id, slot);
    if (m.status == shm::kBadInput) fail_job(*j, m.partition, m.text);
    else if (m.status == shm::kCancelled) requeue(m.job, m.partition, "cancelled by the worker", false);
    else requeue(m.job, m.partition, std::string(w.name) + ": " + m.text, true);
  }
  schedule();
}

void Supervisor::on_prove_done(Worker& w, const shm::Msg& m) {
  if (!w.task || w.job != m.job || w.partition != m.partition) return;
  w.task = false;
  if (w.state == "busy") w.state = "idle";
  Device* d = device(w.task_device);
  ActiveJob* j = active(m.job);
  const uint32_t slot = w.slot;
  if (!j || is_final(j->rec.state)) {
    if (d && d->seg->state(slot) != shm::SlotState::Proving) release_slot(d->id, slot);
    schedule();
    return;
  }
  if (m.status == shm::kOk) {
    if (d) d->slots[slot] = SlotUse{};  // the worker has set it FREE
    j->times[m.partition].prove_ms = m.ms[0];
    prove_sum_s_ += m.ms[0] / 1000;
    complete_partition(*j, m.partition, m.text);
  } else if (m.status == shm::kFailed && d && d->seg->state(slot) == shm::SlotState::Ready) {
    // Prove again from the same slot (the worker restarts itself after a device error).
    d->slots[slot].phase = SlotUse::Ready;
    auto& p = j->rec.parts[m.partition];
    p.attempts++;
    p.error = m.text;
    if (p.attempts >= kMaxAttempts) {
      release_slot(d->id, slot);
      fail_job(*j, m.partition, std::string("proving failed ") + std::to_string(p.attempts) + " times: " + m.text);
    } else {
      set_pstate(*j, m.partition, PState::Ready);
    }
  } else {
    if (d) release_slot(d->id, slot);
    if (m.status == shm::kBadInput) fail_job(*j, m.partition, m.text);
    else requeue(m.job, m.partition, std::string(w.name) + ": " + m.text, m.status != shm::kCancelled);
  }
  schedule();
}

void Supervisor::requeue(uint64_t job, uint32_t p, const std::string& why, bool count_attempt) {
  ActiveJob* j = active(job);
  if (!j || is_final(j->rec.state)) return;
  PartitionRec& pr = j->rec.parts[p];
  if (count_attempt) pr.attempts++;
  pr.error = why;
  if (pr.attempts >= kMaxAttempts) return fail_job(*j, p, "gave up after " + std::to_string(pr.attempts) +
                                                            " attempts; last: " + why);
  set_pstate(*j, p, PState::Queued);
  pending_.insert({int(j->rec.priority), job, p});
  spdlog::info("job {} partition {}: requeued ({})", job, p, why);
}

void Supervisor::complete_partition(ActiveJob& j, uint32_t p, const std::string& result_dir) {
  PartitionRec& pr = j.rec.parts[p];
  const std::string stem = std::to_string(p);
  try {
    pr.proof = read_file(fs::path(result_dir) / (stem + ".proof.json"));
    pr.pub = read_file(fs::path(result_dir) / (stem + ".public.json"));
  } catch (const std::exception& e) {
    return requeue(j.rec.id, p, std::string("result lost: ") + e.what(), true);
  }
  const PartTimes& t = j.times[p];
  const uint64_t now = shm::monotonic_ns();
  auto ms = [](uint64_t a, uint64_t b) { return a && b > a ? double(b - a) / 1e6 : 0.0; };
  json tj = {{"queue_ms", ms(t.queued, t.synth_start)},
             {"synth_ms", t.synth_ms},
             {"wait_ms", ms(t.ready, t.prove_start)},
             {"prove_ms", t.prove_ms},
             {"total_ms", ms(t.queued, now)}};
  pr.timings = tj.dump();
  pr.error.clear();
  set_pstate(j, p, PState::Done);
  proofs_done_++;
  event(tl::kProofDone, j.rec.id, tl::Kv().add(tl::kPartition, p).ms(tl::kTotalMs, ms(t.queued, now)).str());
  bool all = true;
  for (auto& q : j.rec.parts) all = all && q.state == PState::Done;
  if (all) finish_job(j, JState::Done, "");
}

void Supervisor::fail_job(ActiveJob& j, uint32_t p, const std::string& why) {
  j.rec.parts[p].error = why;
  set_pstate(j, p, PState::Failed);
  parts_failed_++;
  event(tl::kPartitionFailed, j.rec.id, tl::Kv().add(tl::kPartition, p).add(tl::kReason, why).str());
  spdlog::warn("job {} partition {} failed: {}", j.rec.id, p, why);
  finish_job(j, JState::Failed, "partition " + std::to_string(p) + ": " + why);
}

// Final state: stored, remaining partitions stopped (their slots' cancel flags set), waiters answered.
void Supervisor::finish_job(ActiveJob& j, JState st, const std::string& error) {
  const uint64_t id = j.rec.id;
  for (auto& pr : j.rec.parts)
    if (!is_final(pr.state)) {
      pr.state = PState::Cancelled;
      store_->set_partition(id, pr);
    }
  for (auto it = pending_.begin(); it != pending_.end();)
    it = std::get<1>(*it) == id ? pending_.erase(it) : std::next(it);
  for (auto& d : devices_)
    for (uint32_t s = 0; s < d.slots.size(); s++) {
      SlotUse& u = d.slots[s];
      if (!u.used || u.job != id) continue;
      if (u.phase == SlotUse::Ready && d.seg->transition(s, shm::SlotState::Ready, shm::SlotState::Free))
        u = SlotUse{};  // nobody holds it: free now
      else
        d.seg->slot(s).cancel.store(1, std::memory_order_release);  // its owner frees it
    }
  j.rec.state = st;
  j.rec.error = error;
  j.rec.finished_ms = wall_ms();
  store_->set_job(id, st, error, j.rec.finished_ms);
  event(tl::kJobDone, id, tl::Kv().add(tl::kState, to_string(st)).str());
  spdlog::info("job {}: {}{}{}", id, to_string(st), error.empty() ? "" : ": ", error);
  std::error_code ec;
  fs::remove_all(fs::path(cfg_.daemon.state_dir) / "results" / std::to_string(id), ec);
  if (!j.upload_dir.empty()) fs::remove_all(j.upload_dir, ec);
  notify_waiters(j);
  jobs_.erase(id);
}

// ---------------------------------------------------------------------------------------------
// lifecycle

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
    // What did not finish is queued again in the store; the next start proves it.
    for (auto& [id, j] : jobs_)
      for (auto& pr : j.rec.parts)
        if (!is_final(pr.state) && pr.state != PState::Queued) {
          pr.state = PState::Queued;
          store_->set_partition(id, pr);
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
        w->state = "stopped";
      }
    }
    if (server_) server_->close();
  }
  for (auto& w : workers_)
    if (w->pid > 0) return;  // wait for every exit callback
  event(tl::kDaemonStop, 0, "");
  if (timeline_) timeline_->flush(0, 0);
  uv_stop(loop_);
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
    for (auto& w : workers_) busy += w->state == "busy", failed += w->state == "failed";
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
  uint32_t id = 0;
  for (uint32_t i = 0; i < cfg_.synthesis.workers; i++) {
    auto w = std::make_unique<Worker>();
    w->kind = Worker::Synth, w->index = i, w->id = id++, w->name = "synth" + std::to_string(i);
    w->cpus = cfg_.synthesis.cpus.empty() ? "all" : cfg_.synthesis.cpus[i].text;
    workers_.push_back(std::move(w));
  }
  for (uint32_t i = 0; i < cfg_.gpu.devices.size(); i++) {
    auto w = std::make_unique<Worker>();
    w->kind = Worker::Gpu, w->index = i, w->id = id++, w->device = cfg_.gpu.devices[i];
    w->name = "gpu" + std::to_string(i);
    w->cpus = cfg_.gpu.cpus.empty() ? "all" : cfg_.gpu.cpus[i].text;
    device(w->device)->gpu = w.get();
    workers_.push_back(std::move(w));
  }
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
