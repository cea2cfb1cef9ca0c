// One node's queue (queue.hpp): the jobs live in the supervisor's memory and every change is
// journalled into SQLite under state_dir (jobs.sqlite), so that a restart recovers them. The
// journal writes on a thread of its own, many jobs' changes in one commit (sqlite_journal.hpp);
// what must wait for a write (a submission's answer, a finished job's files and long polls) is done
// when its answer comes back to the loop. The API answers from memory, else from a reading
// connection of its own; a submission's files are spooled and copied on the thread pool
// (local_intake.cpp), and a long poll is answered the moment its job's end is stored.
#pragma once
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/admission.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/long_polls.hpp"
#include "supervisor/queue.hpp"
#include "supervisor/store/sqlite_journal.hpp"
#include "supervisor/store/sqlite_store.hpp"
#include "supervisor/supervisor_types.hpp"

namespace cuzk::sup {

struct SpoolWork;
struct CopyWork;
struct WorkFailure;

class LocalQueue final : public QueueService {
 public:
  // Opens (or creates) the store; throws StateWriteFailed when the disk has no room for it.
  LocalQueue(const QueueContext& c, const std::string& path);

  std::vector<CircuitRec> stored_circuits() override;
  void recover() override;

  void submit(const Submission& s, Reply r) override;
  void get(uint64_t id, double wait_s, const Viewer& viewer, Reply r) override;
  void cancel(uint64_t id, const Viewer& viewer, Reply r) override;

  bool holds(const ActiveJob&, uint32_t) const override { return true; }
  void progress(ActiveJob& j, uint32_t p, bool job_started) override;
  void requeue(ActiveJob& j, uint32_t p) override;
  void done(ActiveJob& j, uint32_t p, const std::string& done_kv) override;
  void fail(ActiveJob& j, uint32_t p, const std::string& why) override;
  void want_work() override {}

  void add_circuit(const CircuitRec& rec, std::function<void(bool)> added,
                   std::function<void(int, const std::string&)> refused) override;
  void remove_circuit(const std::string& name, std::function<void()> removed,
                      std::function<void(int, const std::string&)> refused) override;
  void serving(const std::vector<std::string>&) override {}
  bool watch_circuits(std::function<void(std::vector<CircuitRec>)>, std::function<void(const std::string&)>) override {
    return false;
  }

  void tick() override { forget_ended(); }
  size_t held() const override;
  bool flush_held() override;
  bool busy() const override { return writing_ > 0 || works_ > 0; }
  void drain() override {}
  void stop() override;
  void close() override;

  JobStore::Counts counts() override { return reader_->counts(); }
  nlohmann::json status() const override;
  std::string metrics() const override;

 private:
  // The end of a job here: stored final in one write, with the partition that ended it (ended,
  // or none: -1) and the partitions it cancels; its remaining work stopped at once; once the write
  // is done, its files removed, its long polls answered, and then `after` run.
  void finish(ActiveJob& j, JState st, const std::string& error, int64_t ended = -1,
              std::function<void()> after = nullptr);
  // Drops the ended jobs whose end is in the file and answered.
  void forget_ended();
  // What a supervisor killed in the middle of a request left: bodies being received (spool/), and
  // upload folders of submissions not stored, or of jobs that ended before their folder was removed.
  void remove_orphan_uploads();
  // The job as a client sees it: one whose end is not stored yet shows the state it had before
  // (its long polls wait on), so that no client hears of an end a restart would undo.
  nlohmann::ordered_json shown_json(const ActiveJob& a) const;
  // Its end is being written: shown as before, its long polls answered once it is stored.
  bool ending(uint64_t id) const;
  // A job this node works on, or one that ended here and whose end is still being written.
  ActiveJob* find_job(uint64_t id);
  // Job id as the request's client may see it: known here (find_job), else as stored (read once).
  // False for a job that does not exist and for another class's job alike (both answered 404).
  bool find_visible(uint64_t id, const Viewer& viewer, ActiveJob*& active, std::optional<JobRec>& stored);
  // The journal, started at the first write after start-up (start-up writes through writer_).
  SqliteJournal& journal();
  // Work on the journal's thread: what it returns runs on the loop once it is committed, else
  // failed (with the exception); until then the loop is not stopped (busy()).
  void write(SqliteJournal::Work work, SqliteJournal::Failed failed);
  // A write the store refused, as the submission's answer: 503 for a full or unwritable state
  // folder (noted), anything else rethrown.
  [[noreturn]] void refuse_write(std::exception_ptr e);
  // A runtime circuit's change the store refused, as refused(status, why).
  std::function<void(std::exception_ptr)> circuit_refusal(const std::string& name,
                                                           std::function<void(int, const std::string&)> refused);
  void notify_waiters(ActiveJob& j);
  // The submission (local_intake.cpp), checked by admission_; streamed and
  // upload_dir: a spooled body's uploads (or null, ""). r: where an answer given later goes; the
  // Response returned has status 0 then (clients' files are being copied on the thread pool,
  // after_copies answers).
  Answer submit_body(const std::string& body, const Client& client, const StreamedBody* streamed,
                     const std::string& upload_dir, Reply r);
  void submit_spooled(const Submission& s, Reply r);
  void after_spooled(SpoolWork& w);
  void after_copies(CopyWork& w);
  std::optional<Answer> existing_job(const SubmitRequest& sr);  // sr.request_id names a job already
  // The answer to a submission whose request id names job `job` (the request's digest: digest).
  Answer twin_answer(const JobRec& job, const std::string& digest);
  // Stores the job: the answer comes through r once the journal has committed it (status 0 now).
  Answer store_or_refuse(const SubmitRequest& sr, const std::vector<PreparedInput>& inputs,
                         const std::string& submitter, const std::string& upload_dir, const Reply& r);
  Answer store_job(const SubmitRequest& sr, const std::vector<PreparedInput>& inputs, const std::string& submitter,
                   std::string upload_dir, const Reply& r);
  // The job is in the file: it joins the queue here, 201.
  Answer accepted(JobRec rec, uint32_t circuit, const std::string& upload_dir);
  // Answers a submission finished off the loop (a spooled body, clients' files copied): make()
  // gives the answer (status 0: it comes later, from further work); any answer but 201 removes dir,
  // which no job then holds.
  void finish_submission(const std::function<Answer()>& make, const std::string& dir, const Reply& r);
  // Such work's failure as a SubmitError: 503 for a full or unwritable state folder (noted), else
  // its status; nothing when it did not fail.
  void throw_work_failure(const WorkFailure& f);
  std::string new_upload_dir();

  QueueContext c_;
  std::unique_ptr<SqliteStore> writer_;   // start-up's writes, then the journal's
  std::unique_ptr<SqliteStore> reader_;   // reads on the loop (WAL: they never wait for a commit)
  std::unique_ptr<SqliteJournal> journal_;
  struct Ended {
    ActiveJob job;
    uint64_t change = 0;    // its end's number in the journal
    JState before{};        // its state before the end, shown until the end is stored
    bool answered = false;  // its files removed and long polls answered
  };
  std::map<uint64_t, Ended> ended_;
  size_t writing_ = 0;  // writes whose answers have not come back to the loop
  size_t works_ = 0;    // submissions on the thread pool: spooled bodies decoded, clients' files copied
  uint64_t upload_seq_ = 0;
  LongPolls polls_;
  Admission admission_;  // GET /v1/proofs/{id}?wait=S, answered once the job's end is stored
};

}  // namespace cuzk::sup
