// The shared queue's claims, leases and reports (shared_queue.hpp).
#include "supervisor/shared_queue.hpp"

#include <systemd/sd-daemon.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
#include "supervisor/scheduler.hpp"
#include "supervisor/store/pg_store.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

namespace {

constexpr uint64_t kMs = 1000000ull;

}  // namespace

SharedQueue::SharedQueue(const QueueContext& c)
    : c_(c), polls_(c.loop), admission_(c.cfg, validator_of(c.circuits), " in the shared queue") {
  std::unique_ptr<PgStore> pg;
  for (bool said = false; !pg; said = true) {
    try {
      pg = std::make_unique<PgStore>(c_.cfg.store.url);
    } catch (const StoreUnavailable& e) {
      if (!said) spdlog::error("{}: waiting for the database (store.url) before starting", e.what());
      sd_notify(0, "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=waiting for the job store (store.url)");
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  where_ = pg->where();
  if (const size_t n = pg->release(c_.node_id))
    spdlog::info("job store: {} partitions held by an earlier run of node {} are queued again", n, c_.node_id);
  counts_ = pg->counts();
  if (const size_t n = pg->forget_removed_circuits())
    spdlog::info("job store: {} removed circuits forgotten, their jobs all ended", n);
  stored_ = pg->circuits();
  spdlog::info("job store: postgresql at {}, node {}, leases of {} ms", where_, c_.node_id, c_.cfg.store.lease_ms);
  store_ = std::make_unique<StoreThread>(c_.loop, std::move(pg));
}

void SharedQueue::tick() {
  if (!renewing_ && shm::monotonic_ns() >= next_renew_ns_) renew_leases();
  want_work();
}

bool SharedQueue::holds(const ActiveJob& j, uint32_t p) const { return j.leases.count(p); }

// Partitions this node could start synthesizing now and has not claimed yet: idle synthesis
// workers, as far as free slots of devices with a working GPU worker go.
size_t SharedQueue::claim_room() const {
  const size_t room = c_.scheduler.room();
  return room > c_.parts.pending().size() ? room - c_.parts.pending().size() : 0;
}

void SharedQueue::want_work() {
  if (claiming_ || c_.phase.draining || c_.phase.stopping || c_.state.full()) return;
  if (shm::monotonic_ns() < next_claim_ns_) return;
  const size_t want = claim_room();
  if (!want) return;
  claiming_ = true;
  store_->run(
      [this, want, node = c_.node_id, circuits = circuits_, lease_ms = c_.cfg.store.lease_ms](JobStore& s) {
        auto got = std::make_shared<std::vector<Claimed>>(s.claim(node, circuits, want, lease_ms));
        return [this, got, want] {
          claiming_ = false;
          // Fewer than asked for: the queue is empty for now; look again after poll_ms.
          next_claim_ns_ = got->size() < want ? shm::monotonic_ns() + c_.cfg.store.poll_ms * kMs : 0;
          for (Claimed& c : *got) adopt(c);
          c_.scheduler.schedule();
        };
      },
      [this](const std::string& why) {
        spdlog::debug("claim: {}", why);
        claiming_ = false;
        next_claim_ns_ = shm::monotonic_ns() + c_.cfg.store.poll_ms * kMs;
      });
}

// A claimed partition becomes this node's: its job is made known here (once), its input written out
// when the store kept the request's bytes, and it is queued for synthesis.
void SharedQueue::adopt(Claimed& c) {
  const std::optional<uint32_t> ci = c_.circuits.index(c.job.circuit);
  const config::CircuitConfig* cc = ci ? &c_.cfg.circuits[*ci] : nullptr;
  const uint64_t id = c.job.id;
  PartitionRec part = std::move(c.job.parts.at(0));
  ActiveJob* known = c_.parts.find(id);
  if (!known) {
    // Its partitions that this node does not hold stand as Cancelled here.
    ActiveJob fresh;
    fresh.rec = c.job;
    fresh.rec.parts.assign(c.partitions, PartitionRec{});
    for (uint32_t i = 0; i < c.partitions; i++)
      fresh.rec.parts[i].index = i, fresh.rec.parts[i].state = PState::Cancelled;
    fresh.circuit = ci.value_or(0);
    known = &c_.parts.add(std::move(fresh));
  }
  ActiveJob& j = *known;
  const uint32_t p = part.index;
  if (p >= j.rec.parts.size() || !cc) return;  // a row that contradicts its job: never ours
  j.leases[p] = c.lease.epoch;
  claims_++;
  taken_over_ += c.taken_over;
  c_.timeline.event(
      tl::kPartitionClaimed, id,
      tl::Kv().add(tl::kPartition, p).add(tl::kEpoch, c.lease.epoch).add(tl::kTakenOver, int(c.taken_over)).str());
  if (c.taken_over) spdlog::info("job {} partition {}: claimed after another node's lease expired", id, p);
  if (c.taken_over && part.attempts >= kMaxAttempts) {
    const uint32_t n = part.attempts;
    part.state = PState::Queued;
    j.rec.parts[p] = std::move(part);
    return c_.parts.fail(j, p,
                         "gave up after " + std::to_string(n) +
                             " attempts; the last nodes holding it stopped renewing their lease (a node or worker died "
                             "proving it)");
  }
  if (!part.content.empty()) {
    // The request carried it: this node's copy lives under uploads/ until the job leaves the node.
    // Each stay of the job here has a folder of its own: the removal of an earlier stay's folder
    // runs on the thread pool and may still be pending when the job is claimed here again.
    if (j.upload_dir.empty())
      j.upload_dir = (fs::path(c_.cfg.daemon.state_dir) / "uploads" /
                      ("job-" + std::to_string(id) + "-" + std::to_string(++stays_)))
                         .string();
    const fs::path dir = j.upload_dir;
    const fs::path file = dir / (std::to_string(p) + file_extension(j.rec.input));
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(part.content.data(), std::streamsize(part.content.size()));
    f.close();
    part.content.clear();
    if (ec || !f) {
      if (const std::string why = c_.state.write_problem(); !why.empty())
        c_.state.note_full("a claimed partition's input could not be written (" + why + ")", c_.state.low_space());
      part.state = PState::Queued;
      j.rec.parts[p] = std::move(part);
      spdlog::warn("job {} partition {}: cannot write its input to {}; back to the queue", id, p, file.string());
      return report(j, p, "");
    }
    part.witness = file.string();
  }
  if (j.rec.input == InputKind::Inputs && !c_.circuits.has_generator(j.circuit)) {
    part.state = PState::Queued;
    j.rec.parts[p] = std::move(part);
    spdlog::warn("job {} partition {}: circuit {} has no witness_generator on this node; back to the queue", id, p,
                 cc->name);
    return report(j, p, "");
  }
  part.state = PState::Queued;
  j.rec.parts[p] = std::move(part);
  j.times[p] = PartTimes{};
  j.times[p].queued = shm::monotonic_ns();
  c_.parts.enqueue(j, p);
}

// Every held lease extended; those the store says are gone (expired and claimed by another node, or
// their job ended elsewhere) are dropped here with the work on them. The queue's counts come along.
void SharedQueue::renew_leases() {
  std::vector<Lease> held;
  for (auto& [id, j] : c_.parts.jobs())
    for (auto& [p, epoch] : j.leases) held.push_back(Lease{id, p, epoch});
  renewing_ = true;
  next_renew_ns_ = shm::monotonic_ns() + std::min<uint64_t>(c_.cfg.store.lease_ms / 3, 2000) * kMs;
  store_->run(
      [this, held, node = c_.node_id, lease_ms = c_.cfg.store.lease_ms](JobStore& s) {
        auto lost = std::make_shared<std::vector<Lease>>(s.renew(node, held, lease_ms));
        auto counts = s.counts();
        return [this, lost, counts] {
          renewing_ = false;
          counts_ = counts;
          for (const Lease& l : *lost) {
            ActiveJob* j = c_.parts.find(l.job);
            if (!j) continue;
            auto it = j->leases.find(l.index);
            if (it == j->leases.end() || it->second != l.epoch) continue;  // reported meanwhile
            lost_++;
            c_.timeline.event(tl::kLeaseLost, l.job,
                              tl::Kv().add(tl::kPartition, l.index).add(tl::kEpoch, l.epoch).str());
            spdlog::warn("job {} partition {}: this node's lease is gone (expired and claimed elsewhere, or the job "
                         "ended); its work here stops",
                         l.job, l.index);
            forget_partition(l);
          }
          c_.scheduler.schedule();
        };
      },
      [this](const std::string& why) {
        spdlog::debug("lease renewal: {}", why);
        renewing_ = false;
      });
}

// Sends the partition's local state to the store under its lease. Progress may be lost with the
// connection; an end (Queued, Done, Failed) waits for the store. A partition sent back to the queue
// or failed stops being this node's at once; a done one when the store has its result.
void SharedQueue::report(ActiveJob& j, uint32_t p, const std::string& done_kv) {
  auto held = j.leases.find(p);
  if (held == j.leases.end()) return;
  const Lease lease{j.rec.id, p, held->second};
  PartitionRec rec = j.rec.parts[p];
  rec.content.clear();
  const PState sent = rec.state;
  const bool end = sent == PState::Queued || is_final(sent);
  if (end && sent != PState::Done) {
    j.leases.erase(held);
    c_.parts.dequeue(j, p);
  }
  auto work = [this, lease, rec, done_kv, node = c_.node_id](JobStore& s) {
    const ReportOutcome o = s.report(node, lease, rec, wall_ms());
    return [this, lease, sent = rec.state, o, done_kv] { on_reported(lease, sent, o, done_kv); };
  };
  auto failed = [this, lease, sent](const std::string& why) {
    if (sent == PState::Queued || is_final(sent))
      spdlog::error("job {} partition {}: the store refused the {} report: {}", lease.job, lease.index, to_string(sent),
                    why);
    if (sent == PState::Done) forget_partition(lease);
  };
  if (end) store_->run_durable(std::move(work), std::move(failed));
  else store_->run(std::move(work), std::move(failed));
  if (end) forget_job_if_idle(lease.job);
}

void SharedQueue::on_reported(const Lease& lease, PState sent, const ReportOutcome& o, const std::string& done_kv) {
  if (!o.accepted) {
    const bool end = sent == PState::Queued || is_final(sent);
    if (end) {
      conflicts_++;
      c_.timeline.event(tl::kReportRejected, lease.job,
                        tl::Kv()
                            .add(tl::kPartition, lease.index)
                            .add(tl::kEpoch, lease.epoch)
                            .add(tl::kState, to_string(sent))
                            .str());
      spdlog::warn("job {} partition {}: {} not recorded: this node no longer holds the partition's lease", lease.job,
                   lease.index, to_string(sent));
    }
    forget_partition(lease);
    c_.scheduler.schedule();
    return;
  }
  if (sent == PState::Done) {
    c_.parts.count_proof();
    c_.timeline.event(tl::kProofDone, lease.job, done_kv);
    forget_partition(lease);
  }
  // A result recorded by an earlier try whose answer was lost (o.again) cannot tell whether it ended
  // the job or another node's did: JOB_DONE is left to the node that saw it happen.
  if (is_final(sent) && is_final(o.job) && !o.again) {
    c_.timeline.event(tl::kJobDone, lease.job, tl::Kv().add(tl::kState, to_string(o.job)).str());
    spdlog::info("job {}: {}", lease.job, to_string(o.job));
  }
  c_.scheduler.schedule();
}

// The partition is not this node's any more: its queued entry goes, a READY slot is freed, and a
// worker busy on it is told to cancel (its report is then ignored: holds() is false).
void SharedQueue::forget_partition(const Lease& lease) {
  ActiveJob* j = c_.parts.find(lease.job);
  if (!j) return;
  auto it = j->leases.find(lease.index);
  if (it == j->leases.end() || it->second != lease.epoch) return;
  j->leases.erase(it);
  c_.parts.stop(lease.job, lease.index);
  forget_job_if_idle(lease.job);
}

void SharedQueue::forget_job_if_idle(uint64_t id) {
  ActiveJob* j = c_.parts.find(id);
  if (j && j->leases.empty()) drop_job(*j);
}

// The job leaves this node: its work here stops, its local files go. The store keeps the job.
void SharedQueue::drop_job(ActiveJob& j) {
  const uint64_t id = j.rec.id;
  c_.parts.stop(id);
  c_.remove_files(j);
  c_.parts.erase(id);
}

// Draining: partitions claimed but not started go back to the queue now, for the other nodes.
void SharedQueue::drain() {
  std::vector<std::pair<uint64_t, uint32_t>> unstarted;
  for (const auto& [prio, id, p] : c_.parts.pending()) unstarted.push_back({id, p});
  for (auto [id, p] : unstarted)
    if (ActiveJob* j = c_.parts.find(id)) {
      j->rec.parts[p].state = PState::Queued;
      report(*j, p, "");
    }
}

// Stopping: whatever this node still holds goes back to the queue (after the reports before it).
void SharedQueue::stop() {
  store_->run_durable(
      [node = c_.node_id](JobStore& s) -> std::function<void()> {
        if (const size_t n = s.release(node)) spdlog::info("job store: {} partitions of this node queued again", n);
        return nullptr;
      },
      [](const std::string& why) { spdlog::error("job store: cannot release this node's leases: {}", why); });
}

void SharedQueue::requeue(ActiveJob& j, uint32_t p) {
  // Back to the shared queue, for whichever node claims it next.
  j.rec.parts[p].state = PState::Queued;
  report(j, p, "");
}

// Done once the store has accepted it from this node, the lease holder (on_reported).
void SharedQueue::done(ActiveJob& j, uint32_t p, const std::string& done_kv) { report(j, p, done_kv); }

// The store fails the job for every node; this one stops its own work on it now.
void SharedQueue::fail(ActiveJob& j, uint32_t p, const std::string&) {
  const uint64_t id = j.rec.id;
  report(j, p, "");
  if (ActiveJob* still = c_.parts.find(id)) drop_job(*still);
}

void SharedQueue::add_circuit(const CircuitRec& rec, std::function<void(bool)> added,
                              std::function<void(int, const std::string&)> refused) {
  store_->run(
      [rec, added](JobStore& s) -> std::function<void()> {
        const bool fresh = s.add_circuit(rec);
        return [added, fresh] { added(fresh); };
      },
      [refused](const std::string& why) { refused(503, "the job store cannot take the circuit now: " + why); });
}

void SharedQueue::remove_circuit(const std::string& name, std::function<void()> removed,
                                 std::function<void(int, const std::string&)> refused) {
  store_->run(
      [name, removed](JobStore& s) -> std::function<void()> {
        s.remove_circuit(name);  // another node may have removed it first: gone either way
        return removed;
      },
      [refused](const std::string& why) { refused(503, "the job store cannot remove the circuit now: " + why); });
}

bool SharedQueue::watch_circuits(std::function<void(std::vector<CircuitRec>)> got,
                                 std::function<void(const std::string&)> failed) {
  store_->run(
      [got](JobStore& s) -> std::function<void()> {
        s.forget_removed_circuits();  // whichever node ended their last jobs
        auto stored = std::make_shared<std::vector<CircuitRec>>(s.circuits());
        return [got, stored] { got(std::move(*stored)); };
      },
      std::move(failed));
  return true;
}

// The loop ends: long polls' timers closed; results and released leases reach the database before
// the process ends, if it is there.
void SharedQueue::close() {
  polls_.close();
  store_->stop(5000);
}

nlohmann::json SharedQueue::status() const {
  size_t held = 0;
  for (const auto& [id, a] : c_.parts.jobs()) held += a.leases.size();
  return {{"backend", "postgresql"},
          {"node_id", c_.node_id},
          {"where", where_},
          {"connected", store_->connected()},
          {"reports_waiting", store_->waiting()},
          {"leases_held", held}};
}

std::string SharedQueue::metrics() const {
  return store_metrics({store_->connected(), claims_, taken_over_, lost_, conflicts_, store_->reconnects(),
                        store_->waiting()});
}

}  // namespace cuzk::sup
