// One node's queue (local_queue.hpp): the journal of every change, the jobs an earlier run left,
// and the end of a job. The intake is in local_intake.cpp.
#include "supervisor/local_queue.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
#include "supervisor/store/state_writes.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

LocalQueue::LocalQueue(Supervisor& s, const std::string& path) : s_(s), store_(std::make_unique<SqliteStore>(path)) {}

// The jobs an earlier run left unfinished: their queued partitions queued again here (the stop
// stored every unfinished partition as queued; a crash left the last states written, which the
// store's recover() puts back to queued). A job whose circuit is gone fails, naming why.
void LocalQueue::recover() {
  for (JobRec& r : store_->recover()) {
    ActiveJob j;
    j.rec = std::move(r);
    bool known = false;
    if (std::optional<uint32_t> i = s_.circuit_index(j.rec.circuit)) j.circuit = *i, known = true;
    const uint64_t id = j.rec.id;
    // Content the request carried lives in <state_dir>/uploads/<folder>/: removed with the job.
    const fs::path uploads = fs::path(s_.cfg_.daemon.state_dir) / "uploads";
    for (const auto& p : j.rec.parts) {
      const fs::path folder = fs::path(p.witness).parent_path();
      if (folder.parent_path() == uploads) j.upload_dir = folder.string();
    }
    std::string gone;
    if (!known) gone = "circuit " + j.rec.circuit + " is no longer configured";
    else if (j.rec.input == InputKind::Inputs && !s_.generators_[j.circuit])
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
        s_.pending_.insert({int(j.rec.priority), id, p.index});
        j.times[p.index].queued = shm::monotonic_ns();
        left++;
      }
    s_.event(tl::kJobRecovered, id,
             tl::Kv()
                 .add(tl::kPartitions, left)
                 .add(tl::kPriority, to_string(j.rec.priority))
                 .add(tl::kCircuit, j.rec.circuit)
                 .str());
    spdlog::info("job {}: recovered with {} partitions to prove", id, left);
    s_.jobs_.emplace(id, std::move(j));
  }
  s_.remove_orphan_uploads();
}

void LocalQueue::progress(ActiveJob& j, uint32_t p) { store_->set_partition(j.rec.id, j.rec.parts[p]); }

void LocalQueue::started(ActiveJob& j) { store_->set_job(j.rec.id, JState::Running, "", 0); }

void LocalQueue::requeue(ActiveJob& j, uint32_t p) {
  j.rec.parts[p].state = PState::Queued;
  progress(j, p);
  s_.pending_.insert({int(j.rec.priority), j.rec.id, p});
}

void LocalQueue::done(ActiveJob& j, uint32_t p, const std::string& done_kv) {
  progress(j, p);
  s_.proofs_done_++;
  s_.event(tl::kProofDone, j.rec.id, done_kv);
  bool all = true;
  for (auto& q : j.rec.parts) all = all && q.state == PState::Done;
  if (all) finish(j, JState::Done, "");
}

void LocalQueue::fail(ActiveJob& j, uint32_t p, const std::string& why) {
  progress(j, p);
  finish(j, JState::Failed, "partition " + std::to_string(p) + ": " + why);
}

// Final state: stored, remaining partitions stopped (their slots' cancel flags set), waiters answered.
void LocalQueue::finish(ActiveJob& j, JState st, const std::string& error) {
  const uint64_t id = j.rec.id;
  for (auto& pr : j.rec.parts)
    if (!is_final(pr.state)) {
      pr.state = PState::Cancelled;
      store_->set_partition(id, pr);
    }
  s_.stop_job_work(id);
  j.rec.state = st;
  j.rec.error = error;
  j.rec.finished_ms = wall_ms();
  store_->set_job(id, st, error, j.rec.finished_ms);
  s_.event(tl::kJobDone, id, tl::Kv().add(tl::kState, to_string(st)).str());
  spdlog::info("job {}: {}{}{}", id, to_string(st), error.empty() ? "" : ": ", error);
  s_.remove_job_files(j);
  notify_waiters(j);
  s_.jobs_.erase(id);
}

void LocalQueue::add_circuit(const CircuitRec& rec, std::function<void(bool)> added,
                             std::function<void(int, const std::string&)> refused) {
  bool fresh = false;
  try {
    fresh = store_->add_circuit(rec);
  } catch (const StoreFull& e) {
    s_.note_disk_full(e.what(), !dynamic_cast<const StateUnwritable*>(&e));
    return refused(503, "the job store cannot be written now (" + s_.disk_full_message() + ")");
  } catch (const std::exception& e) {
    spdlog::error("circuit {}: {}", rec.name, e.what());
    return refused(500, std::string("the job store: ") + e.what());
  }
  added(fresh);
}

void LocalQueue::remove_circuit(const std::string& name, std::function<void()> removed,
                                std::function<void(int, const std::string&)> refused) {
  try {
    store_->remove_circuit(name);
  } catch (const StoreFull& e) {
    s_.note_disk_full(e.what(), !dynamic_cast<const StateUnwritable*>(&e));
    return refused(503, "the job store cannot be written now (" + s_.disk_full_message() + ")");
  }
  removed();
}

// What did not finish is stored as queued; the next start proves it.
void LocalQueue::stop() {
  for (auto& [id, j] : s_.jobs_)
    for (auto& pr : j.rec.parts)
      if (!is_final(pr.state) && pr.state != PState::Queued) {
        pr.state = PState::Queued;
        store_->set_partition(id, pr);
      }
}

void LocalQueue::close() {
  for (auto& [id, j] : s_.jobs_)
    for (auto& wt : j.waiters) {
      close_handle(wt.timer);
      wt.timer = nullptr;
    }
}

nlohmann::json LocalQueue::status() const { return {{"backend", "sqlite"}, {"node_id", s_.node_id_}}; }

std::string LocalQueue::metrics() const { return store_metrics(StoreMetrics{}); }

}  // namespace cuzk::sup
