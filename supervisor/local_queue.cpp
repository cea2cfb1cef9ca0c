// One node's queue (local_queue.hpp): the journal of every change, the jobs an earlier run left,
// job reads with their long polls, cancels, and the end of a job. Submissions are in
// local_intake.cpp.
#include "supervisor/local_queue.hpp"

#include <unistd.h>

#include <filesystem>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/scheduler.hpp"
#include "supervisor/store/state_writes.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

LocalQueue::LocalQueue(const QueueContext& c, const std::string& path)
    : c_(c),
      writer_(std::make_unique<SqliteStore>(path)),
      reader_(std::make_unique<SqliteStore>(path)),
      polls_(c.loop),
      admission_(c.cfg, validator_of(c.circuits), "") {}

SqliteJournal& LocalQueue::journal() {
  if (!journal_) journal_ = std::make_unique<SqliteJournal>(c_.loop, std::move(writer_));
  return *journal_;
}

size_t LocalQueue::held() const { return journal_ ? journal_->held() : writer_->held(); }

bool LocalQueue::flush_held() {
  if (!journal_) return writer_->flush_held();
  journal_->flush();  // written by the thread; the next call sees how it went
  return journal_->held() == 0;
}

void LocalQueue::write(SqliteJournal::Work work, SqliteJournal::Failed failed) {
  writing_++;
  journal().run(
      [this, work = std::move(work)](SqliteStore& st) -> std::function<void()> {
        return [this, then = work(st)] {
          writing_--;
          if (then) then();
          c_.settle();
        };
      },
      [this, failed = std::move(failed)](std::exception_ptr e) {
        writing_--;
        failed(e);
        c_.settle();
      });
}

ActiveJob* LocalQueue::find_job(uint64_t id) {
  if (ActiveJob* a = c_.parts.find(id)) return a;
  auto it = ended_.find(id);
  return it == ended_.end() ? nullptr : &it->second.job;
}

bool LocalQueue::ending(uint64_t id) const {
  auto it = ended_.find(id);
  return it != ended_.end() && !it->second.answered;
}

nlohmann::ordered_json LocalQueue::shown_json(const ActiveJob& a) const {
  auto it = ended_.find(a.rec.id);
  if (it == ended_.end() || it->second.answered) return sup::job_json(a.rec);
  JobRec shown = a.rec;
  shown.state = it->second.before;
  shown.error.clear();
  shown.finished_ms = 0;
  return sup::job_json(shown);
}

void LocalQueue::forget_ended() {
  if (!journal_) return;
  const uint64_t written = journal_->committed();
  for (auto it = ended_.begin(); it != ended_.end();)
    it = it->second.answered && it->second.change <= written ? ended_.erase(it) : std::next(it);
}

// The jobs an earlier run left unfinished: their queued partitions queued again here (the stop
// stored every unfinished partition as queued; a crash left the last states written, which the
// store's recover() puts back to queued). A job whose circuit is gone fails, naming why.
void LocalQueue::recover() {
  for (JobRec& r : writer_->recover()) {
    ActiveJob j;
    j.rec = std::move(r);
    bool known = false;
    if (std::optional<uint32_t> i = c_.circuits.index(j.rec.circuit)) j.circuit = *i, known = true;
    const uint64_t id = j.rec.id;
    // Content the request carried lives in <state_dir>/uploads/<folder>/: removed with the job.
    const fs::path uploads = fs::path(c_.cfg.daemon.state_dir) / "uploads";
    for (const auto& p : j.rec.parts) {
      const fs::path folder = fs::path(p.witness).parent_path();
      if (folder.parent_path() == uploads) j.upload_dir = folder.string();
    }
    std::string gone;
    if (const std::string* why = c_.circuits.removed_unserved(j.rec.circuit))
      gone = "circuit " + j.rec.circuit + " was removed, and cannot be served again for its unfinished jobs: " + *why;
    else if (!known) gone = "circuit " + j.rec.circuit + " is no longer configured";
    else if (j.rec.input == InputKind::Inputs && !c_.circuits.has_generator(j.circuit))
      gone = "circuit " + j.rec.circuit + " no longer has a witness_generator for the job's inputs";
    if (!gone.empty()) {
      writer_->set_job(id, JState::Failed, gone, wall_ms());
      std::error_code ec;
      if (!j.upload_dir.empty()) fs::remove_all(j.upload_dir, ec);
      continue;
    }
    size_t left = 0;
    for (auto& p : j.rec.parts) left += p.state == PState::Queued;
    c_.timeline.event(tl::kJobRecovered, id,
                      tl::Kv()
                          .add(tl::kPartitions, left)
                          .add(tl::kPriority, to_string(j.rec.priority))
                          .add(tl::kCircuit, j.rec.circuit)
                          .str());
    spdlog::info("job {}: recovered with {} partitions to prove", id, left);
    c_.parts.add(std::move(j));
  }
  remove_orphan_uploads();
}

// What a supervisor killed in the middle of a request left: bodies being received (spool/), and
// upload folders of submissions not stored, or of jobs that ended before their folder was removed.
void LocalQueue::remove_orphan_uploads() {
  const fs::path state = c_.cfg.daemon.state_dir;
  std::set<std::string> kept;
  for (const auto& [id, j] : c_.parts.jobs())
    if (!j.upload_dir.empty()) kept.insert(j.upload_dir);
  std::error_code ec;
  for (const char* sub : {"spool", "uploads"})
    for (const auto& e : fs::directory_iterator(state / sub, ec)) {
      if (kept.count(e.path().string())) continue;
      spdlog::info("removing {}, left by an earlier run", e.path().string());
      std::error_code rm;
      fs::remove_all(e.path(), rm);
    }
}

// Removed circuits whose jobs have all ended are forgotten first; the others are served again for
// their jobs.
std::vector<CircuitRec> LocalQueue::stored_circuits() {
  if (const size_t n = writer_->forget_removed_circuits())
    spdlog::info("job store: {} removed circuits forgotten, their jobs all ended", n);
  return writer_->circuits();
}

void LocalQueue::progress(ActiveJob& j, uint32_t p, bool job_started) {
  // Not waited for: a restart queues every partition in flight again, whatever state it was stored in.
  journal().set(j.rec.id, {j.rec.parts[p]},
                job_started ? std::optional<SqliteStore::JobChange>({JState::Running, ""}) : std::nullopt);
}

void LocalQueue::requeue(ActiveJob& j, uint32_t p) {
  c_.parts.set_state(j, p, PState::Queued);
  c_.parts.enqueue(j, p);
}

void LocalQueue::done(ActiveJob& j, uint32_t p, const std::string& done_kv) {
  bool all = true;
  for (auto& q : j.rec.parts) all = all && q.state == PState::Done;
  if (!all) progress(j, p, false);  // the last one is stored with the job's end
  c_.parts.count_proof();
  c_.timeline.event(tl::kProofDone, j.rec.id, done_kv);
  if (all) finish(j, JState::Done, "", p);
}

void LocalQueue::fail(ActiveJob& j, uint32_t p, const std::string& why) {
  finish(j, JState::Failed, "partition " + std::to_string(p) + ": " + why, p);
}

// Final state: remaining partitions stopped (their slots' cancel flags set) now; once stored, the
// job's files removed and its waiters answered (a restart before that finds it unfinished, its
// inputs still there).
void LocalQueue::finish(ActiveJob& j, JState st, const std::string& error, int64_t ended,
                        std::function<void()> after) {
  const uint64_t id = j.rec.id;
  const JState before = j.rec.state;
  std::vector<PartitionRec> changed;
  if (ended >= 0) changed.push_back(j.rec.parts[size_t(ended)]);
  for (auto& pr : j.rec.parts)
    if (!is_final(pr.state)) {
      pr.state = PState::Cancelled;
      changed.push_back(pr);
    }
  c_.parts.stop(id);
  j.rec.state = st;
  j.rec.error = error;
  j.rec.finished_ms = wall_ms();
  const SqliteStore::JobChange change{st, error, j.rec.finished_ms};
  c_.timeline.event(tl::kJobDone, id, tl::Kv().add(tl::kState, to_string(st)).str());
  spdlog::info("job {}: {}{}{}", id, to_string(st), error.empty() ? "" : ": ", error);
  const uint32_t circuit = j.circuit;
  Ended& e = ended_[id];
  e.job = std::move(j);
  e.before = before;
  c_.parts.erase(id);
  writing_++;
  // Answered once written, or held for lack of space (as a change that could not be written always was).
  e.change = journal().set(id, std::move(changed), change, [this, id, after = std::move(after)] {
    writing_--;
    if (auto it = ended_.find(id); it != ended_.end()) {
      c_.remove_files(it->second.job);
      notify_waiters(it->second.job);
      it->second.answered = true;
    }
    if (after) after();
    forget_ended();
    c_.settle();
  });
  // The last job of a removed circuit: the store forgets the circuit now.
  if (c_.cfg.circuits[circuit].removed) {
    bool more = false;
    for (const auto& [other, a] : c_.parts.jobs()) more = more || a.circuit == circuit;
    const std::string name = c_.cfg.circuits[circuit].name;
    if (!more)
      write([](SqliteStore& st) -> std::function<void()> { st.forget_removed_circuits(); return nullptr; },
            [name](std::exception_ptr e) {  // kept until the next start or removal, which forget it then
              try {
                std::rethrow_exception(e);
              } catch (const std::exception& x) {
                spdlog::warn("circuit {}: its last job ended, but the store could not forget it yet: {}", name, x.what());
              }
            });
  }
}

bool LocalQueue::find_visible(uint64_t id, const Viewer& viewer, ActiveJob*& active, std::optional<JobRec>& stored) {
  active = find_job(id);
  if (!active) stored = reader_->load(id);
  const JobRec* rec = active ? &active->rec : stored ? &*stored : nullptr;
  return rec && viewer(rec->submitter);
}

void LocalQueue::get(uint64_t id, double wait_s, const Viewer& viewer, Reply r) {
  ActiveJob* j = nullptr;
  std::optional<JobRec> rec;
  if (!find_visible(id, viewer, j, rec)) return r.send(Answer::refusal(404, "no job " + std::to_string(id)));
  if (!j) return r.send(Answer::json(200, sup::job_json(*rec).dump()));
  if (wait_s <= 0 || (is_final(j->rec.state) && !ending(id))) return r.send(Answer::json(200, shown_json(*j).dump()));
  // Long poll: answered when the job's end is stored (notify_waiters) or when the timer fires.
  polls_.wait(id, uint64_t(wait_s * 1000), std::move(r), [this, id](const Reply& r) {
    if (ActiveJob* a = find_job(id))
      r.send(Answer::json(200, shown_json(*a).dump()));
    else if (auto rec = reader_->load(id))
      r.send(Answer::json(200, sup::job_json(*rec).dump()));
  });
}

void LocalQueue::cancel(uint64_t id, const Viewer& viewer, Reply r) {
  ActiveJob* j = nullptr;
  std::optional<JobRec> rec;
  if (!find_visible(id, viewer, j, rec)) return r.send(Answer::refusal(404, "no job " + std::to_string(id)));
  if (const JState st = j ? j->rec.state : rec->state; !j || is_final(st))
    return r.send(Answer::refusal(409, "job " + std::to_string(id) + " is already " + to_string(st)));
  // Answered once the cancel is stored.
  finish(*j, JState::Cancelled, "cancelled by request", -1, [r, id] {
    r.send(Answer::json(200, json{{"id", std::to_string(id)}, {"state", "cancelled"}}.dump()));
  });
  c_.scheduler.schedule();
}

void LocalQueue::notify_waiters(ActiveJob& j) {
  polls_.answer(j.rec.id, [&] { return Answer::json(200, sup::job_json(j.rec).dump()); });
}

std::function<void(std::exception_ptr)> LocalQueue::circuit_refusal(
    const std::string& name, std::function<void(int, const std::string&)> refused) {
  return [this, name, refused = std::move(refused)](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const StateWriteFailed& x) {
      c_.state.note_full(x.what(), x.space);
      refused(503, "the job store cannot be written now (" + c_.state.full_message() + ")");
    } catch (const std::exception& x) {
      spdlog::error("circuit {}: {}", name, x.what());
      refused(500, std::string("the job store: ") + x.what());
    }
  };
}

void LocalQueue::add_circuit(const CircuitRec& rec, std::function<void(bool)> added,
                             std::function<void(int, const std::string&)> refused) {
  write(
      [rec, added = std::move(added)](SqliteStore& st) -> std::function<void()> {
        return [added, fresh = st.add_circuit(rec)] { added(fresh); };
      },
      circuit_refusal(rec.name, std::move(refused)));
}

void LocalQueue::remove_circuit(const std::string& name, std::function<void()> removed,
                                std::function<void(int, const std::string&)> refused) {
  write(
      [name, removed = std::move(removed)](SqliteStore& st) -> std::function<void()> {
        st.remove_circuit(name);
        return removed;
      },
      circuit_refusal(name, std::move(refused)));
}

// What did not finish is stored as queued; the next start proves it.
void LocalQueue::stop() {
  for (auto& [id, j] : c_.parts.jobs()) {
    std::vector<PartitionRec> queued;
    for (auto& pr : j.rec.parts)
      if (!is_final(pr.state) && pr.state != PState::Queued) {
        pr.state = PState::Queued;
        queued.push_back(pr);
      }
    if (!queued.empty()) journal().set(id, std::move(queued));
  }
}

void LocalQueue::close() {
  polls_.close();
  // What is still queued for the file is written now (the journal's thread ends).
  if (journal_) journal_->stop(5000);
}

nlohmann::json LocalQueue::status() const { return {{"backend", "sqlite"}, {"node_id", c_.node_id}}; }

std::string LocalQueue::metrics() const { return store_metrics(StoreMetrics{}); }

}  // namespace cuzk::sup
