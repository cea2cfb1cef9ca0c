// A shared store ([store] url): the database holds the queue of every node. This node claims
// partitions of its circuits as it has room for them (an idle synthesis worker and a free slot each),
// renews the leases of what it holds on the tick, and reports each partition's progress and end
// under its lease. The store thread does the talking, so that nothing here waits for the database.
#include <systemd/sd-daemon.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
#include "supervisor/store/pg_store.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

namespace {

constexpr uint64_t kMs = 1000000ull;

}  // namespace

// Connects and migrates before the loop starts, waiting (and telling systemd so) while the database
// cannot be reached; then ends the leases an earlier run of this node left.
void Supervisor::open_shared_store() {
  std::unique_ptr<PgStore> pg;
  for (bool said = false; !pg; said = true) {
    try {
      pg = std::make_unique<PgStore>(cfg_.store.url);
    } catch (const StoreUnavailable& e) {
      if (!said) spdlog::error("{}: waiting for the database (store.url) before starting", e.what());
      sd_notify(0, "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=waiting for the job store (store.url)");
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  shared_ = std::make_unique<SharedQueue>();
  shared_->where = pg->where();
  if (const size_t n = pg->release(node_id_))
    spdlog::info("job store: {} partitions held by an earlier run of node {} are queued again", n, node_id_);
  shared_->counts = pg->counts();
  stored_circuits_ = pg->circuits();
  spdlog::info("job store: postgresql at {}, node {}, leases of {} ms", shared_->where, node_id_, cfg_.store.lease_ms);
  shared_->store = std::make_unique<StoreThread>(loop_, std::move(pg));
}

void Supervisor::shared_tick() {
  if (!shared_->renewing && shm::monotonic_ns() >= shared_->next_renew_ns) renew_leases();
  claim_more();
  sync_circuits();
}

// Partitions this node could start synthesizing now and has not claimed yet: idle synthesis
// workers, as far as free slots of devices with a working GPU worker go.
size_t Supervisor::claim_room() const {
  size_t idle = 0, free_slots = 0;
  for (auto& w : workers_) idle += w->kind == WorkerKind::Synth && w->state == WorkerState::Idle && w->tasks.empty();
  for (auto& d : devices_) {
    if (!d.gpu || d.gpu->state == WorkerState::Failed) continue;
    for (uint32_t s = 0; s < d.slots.size(); s++) free_slots += !d.slots[s].used && d.seg->state(s) == shm::SlotState::Free;
  }
  const size_t room = std::min(idle, free_slots);
  return room > pending_.size() ? room - pending_.size() : 0;
}

void Supervisor::claim_more() {
  if (!shared_ || shared_->claiming || draining_ || stopping_ || disk_full_) return;
  if (shm::monotonic_ns() < shared_->next_claim_ns) return;
  const size_t want = claim_room();
  if (!want) return;
  shared_->claiming = true;
  shared_->store->run(
      [this, want, node = node_id_, circuits = shared_->circuits, lease_ms = cfg_.store.lease_ms](JobStore& s) {
        auto got = std::make_shared<std::vector<Claimed>>(s.claim(node, circuits, want, lease_ms));
        return [this, got, want] {
          shared_->claiming = false;
          // Fewer than asked for: the queue is empty for now; look again after poll_ms.
          shared_->next_claim_ns = got->size() < want ? shm::monotonic_ns() + cfg_.store.poll_ms * kMs : 0;
          for (Claimed& c : *got) adopt(c);
          schedule();
        };
      },
      [this](const std::string& why) {
        spdlog::debug("claim: {}", why);
        shared_->claiming = false;
        shared_->next_claim_ns = shm::monotonic_ns() + cfg_.store.poll_ms * kMs;
      });
}

// A claimed partition becomes this node's: its job is made known here (once), its input written out
// when the store kept the request's bytes, and it is queued for synthesis.
void Supervisor::adopt(Claimed& c) {
  const std::optional<uint32_t> ci = circuit_index(c.job.circuit);
  const config::CircuitConfig* cc = ci ? &cfg_.circuits[*ci] : nullptr;
  const uint64_t id = c.job.id;
  PartitionRec part = std::move(c.job.parts.at(0));
  auto [it, fresh] = jobs_.try_emplace(id);
  ActiveJob& j = it->second;
  if (fresh) {
    j.rec = c.job;
    j.rec.parts.assign(c.partitions, PartitionRec{});
    for (uint32_t i = 0; i < c.partitions; i++) j.rec.parts[i].index = i, j.rec.parts[i].state = PState::Cancelled;
    j.circuit = ci.value_or(0);
    j.times.resize(c.partitions);
  }
  const uint32_t p = part.index;
  if (p >= j.rec.parts.size() || !cc) return;  // a row that contradicts its job: never ours
  j.leases[p] = c.lease.epoch;
  shared_->claims++;
  shared_->taken_over += c.taken_over;
  event(tl::kPartitionClaimed, id,
        tl::Kv().add(tl::kPartition, p).add(tl::kEpoch, c.lease.epoch).add(tl::kTakenOver, int(c.taken_over)).str());
  if (c.taken_over) spdlog::info("job {} partition {}: claimed after another node's lease expired", id, p);
  if (c.taken_over && part.attempts >= kMaxAttempts) {
    const uint32_t n = part.attempts;
    part.state = PState::Queued;
    j.rec.parts[p] = std::move(part);
    return fail_job(j, p, "gave up after " + std::to_string(n) +
                              " attempts; the last nodes holding it stopped renewing their lease (a node or worker died "
                              "proving it)");
  }
  if (!part.content.empty()) {
    // The request carried it: this node's copy lives under uploads/ until the job leaves the node.
    const fs::path dir = fs::path(cfg_.daemon.state_dir) / "uploads" / ("job-" + std::to_string(id));
    const fs::path file = dir / (std::to_string(p) + file_extension(j.rec.input));
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(part.content.data(), std::streamsize(part.content.size()));
    f.close();
    part.content.clear();
    j.upload_dir = dir.string();
    if (ec || !f) {
      if (const std::string why = state_write_problem(); !why.empty())
        note_disk_full("a claimed partition's input could not be written (" + why + ")", state_low_space());
      part.state = PState::Queued;
      j.rec.parts[p] = std::move(part);
      spdlog::warn("job {} partition {}: cannot write its input to {}; back to the queue", id, p, file.string());
      return report_partition(j, p, "");
    }
    part.witness = file.string();
  }
  if (j.rec.input == InputKind::Inputs && !generators_[j.circuit]) {
    part.state = PState::Queued;
    j.rec.parts[p] = std::move(part);
    spdlog::warn("job {} partition {}: circuit {} has no witness_generator on this node; back to the queue", id, p,
                 cc->name);
    return report_partition(j, p, "");
  }
  part.state = PState::Queued;
  j.rec.parts[p] = std::move(part);
  j.times[p] = PartTimes{};
  j.times[p].queued = shm::monotonic_ns();
  pending_.insert({int(j.rec.priority), id, p});
}

// Every held lease extended; those the store says are gone (expired and claimed by another node, or
// their job ended elsewhere) are dropped here with the work on them. The queue's counts come along.
void Supervisor::renew_leases() {
  std::vector<Lease> held;
  for (auto& [id, j] : jobs_)
    for (auto& [p, epoch] : j.leases) held.push_back(Lease{id, p, epoch});
  shared_->renewing = true;
  shared_->next_renew_ns = shm::monotonic_ns() + std::min<uint64_t>(cfg_.store.lease_ms / 3, 2000) * kMs;
  shared_->store->run(
      [this, held, node = node_id_, lease_ms = cfg_.store.lease_ms](JobStore& s) {
        auto lost = std::make_shared<std::vector<Lease>>(s.renew(node, held, lease_ms));
        auto counts = s.counts();
        return [this, lost, counts] {
          shared_->renewing = false;
          shared_->counts = counts;
          for (const Lease& l : *lost) {
            ActiveJob* j = active(l.job);
            if (!j) continue;
            auto it = j->leases.find(l.index);
            if (it == j->leases.end() || it->second != l.epoch) continue;  // reported meanwhile
            shared_->lost++;
            event(tl::kLeaseLost, l.job, tl::Kv().add(tl::kPartition, l.index).add(tl::kEpoch, l.epoch).str());
            spdlog::warn("job {} partition {}: this node's lease is gone (expired and claimed elsewhere, or the job "
                         "ended); its work here stops",
                         l.job, l.index);
            forget_partition(l);
          }
          schedule();
        };
      },
      [this](const std::string& why) {
        spdlog::debug("lease renewal: {}", why);
        shared_->renewing = false;
      });
}

// Sends the partition's local state to the store under its lease. Progress may be lost with the
// connection; an end (Queued, Done, Failed) waits for the store. A partition sent back to the queue
// or failed stops being this node's at once; a done one when the store has its result.
void Supervisor::report_partition(ActiveJob& j, uint32_t p, const std::string& done_kv) {
  auto held = j.leases.find(p);
  if (held == j.leases.end()) return;
  const Lease lease{j.rec.id, p, held->second};
  PartitionRec rec = j.rec.parts[p];
  rec.content.clear();
  const PState sent = rec.state;
  const bool end = sent == PState::Queued || is_final(sent);
  if (end && sent != PState::Done) {
    j.leases.erase(held);
    pending_.erase({int(j.rec.priority), lease.job, p});
  }
  auto work = [this, lease, rec, done_kv, node = node_id_](JobStore& s) {
    const ReportOutcome o = s.report(node, lease, rec, wall_ms());
    return [this, lease, sent = rec.state, o, done_kv] { on_reported(lease, sent, o, done_kv); };
  };
  auto failed = [this, lease, sent](const std::string& why) {
    if (sent == PState::Queued || is_final(sent))
      spdlog::error("job {} partition {}: the store refused the {} report: {}", lease.job, lease.index, to_string(sent),
                    why);
    if (sent == PState::Done) forget_partition(lease);
  };
  if (end) shared_->store->run_durable(std::move(work), std::move(failed));
  else shared_->store->run(std::move(work), std::move(failed));
  if (end) forget_job_if_idle(lease.job);
}

void Supervisor::on_reported(const Lease& lease, PState sent, const ReportOutcome& o, const std::string& done_kv) {
  if (!o.accepted) {
    const bool end = sent == PState::Queued || is_final(sent);
    if (end) {
      shared_->conflicts++;
      event(tl::kReportRejected, lease.job,
            tl::Kv().add(tl::kPartition, lease.index).add(tl::kEpoch, lease.epoch).add(tl::kState, to_string(sent)).str());
      spdlog::warn("job {} partition {}: {} not recorded: this node no longer holds the partition's lease", lease.job,
                   lease.index, to_string(sent));
    }
    forget_partition(lease);
    schedule();
    return;
  }
  if (sent == PState::Done) {
    proofs_done_++;
    event(tl::kProofDone, lease.job, done_kv);
    forget_partition(lease);
  }
  // A result recorded by an earlier try whose answer was lost (o.again) cannot tell whether it ended
  // the job or another node's did: JOB_DONE is left to the node that saw it happen.
  if (is_final(sent) && is_final(o.job) && !o.again) {
    event(tl::kJobDone, lease.job, tl::Kv().add(tl::kState, to_string(o.job)).str());
    spdlog::info("job {}: {}", lease.job, to_string(o.job));
  }
  schedule();
}

// The partition is not this node's any more: its queued entry goes, a READY slot is freed, and a
// worker busy on it is told to cancel (its report is then ignored: holds() is false).
void Supervisor::forget_partition(const Lease& lease) {
  ActiveJob* j = active(lease.job);
  if (!j) return;
  auto it = j->leases.find(lease.index);
  if (it == j->leases.end() || it->second != lease.epoch) return;
  j->leases.erase(it);
  pending_.erase({int(j->rec.priority), lease.job, lease.index});
  for (auto& d : devices_)
    for (uint32_t s = 0; s < d.slots.size(); s++) {
      SlotUse& u = d.slots[s];
      if (!u.used || u.job != lease.job || u.partition != lease.index) continue;
      if (u.phase == SlotUse::Ready && d.seg->transition(s, shm::SlotState::Ready, shm::SlotState::Free)) u = SlotUse{};
      else d.seg->slot(s).cancel.store(1, std::memory_order_release);
    }
  forget_job_if_idle(lease.job);
}

void Supervisor::forget_job_if_idle(uint64_t id) {
  ActiveJob* j = active(id);
  if (j && j->leases.empty()) drop_job(*j);
}

// The job leaves this node: its work here stops, its local files go. The store keeps the job.
void Supervisor::drop_job(ActiveJob& j) {
  const uint64_t id = j.rec.id;
  stop_job_work(id);
  remove_job_files(j);
  jobs_.erase(id);
}

// Draining: partitions claimed but not started go back to the queue now, for the other nodes.
void Supervisor::release_unstarted() {
  std::vector<std::pair<uint64_t, uint32_t>> unstarted;
  for (const auto& [prio, id, p] : pending_) unstarted.push_back({id, p});
  for (auto [id, p] : unstarted)
    if (ActiveJob* j = active(id)) {
      j->rec.parts[p].state = PState::Queued;
      report_partition(*j, p, "");
    }
}

// Stopping: whatever this node still holds goes back to the queue (after the reports before it).
void Supervisor::release_leases() {
  shared_->store->run_durable(
      [node = node_id_](JobStore& s) -> std::function<void()> {
        if (const size_t n = s.release(node)) spdlog::info("job store: {} partitions of this node queued again", n);
        return nullptr;
      },
      [](const std::string& why) { spdlog::error("job store: cannot release this node's leases: {}", why); });
}

}  // namespace cuzk::sup
