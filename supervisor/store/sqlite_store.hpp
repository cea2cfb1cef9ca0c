// The SQLite job store (WAL), for one node. The supervisor keeps the queue in memory and writes
// every state change here (set_job, set_partition), through the journal's thread
// (sqlite_journal.hpp), so that a restarted supervisor requeues whatever was unfinished (recover)
// and loses nothing it answered for. The shared-queue calls of
// JobStore work here too, for one process.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/store/job_store.hpp"

struct sqlite3;

namespace cuzk::sup {

class SqliteStore final : public JobStore {
 public:
  // The schema version this build writes (PRAGMA user_version). A store of an older version is
  // migrated when opened; one of a newer version is refused.
  static constexpr int kSchemaVersion = 6;

  // Opens (creating or migrating if needed) <path>; throws std::runtime_error naming the file.
  explicit SqliteStore(const std::string& path);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  const char* backend() const override { return "sqlite"; }
  // Throws StateWriteFailed, having written nothing, when the disk is full or earlier changes are still
  // held for lack of space.
  bool insert(JobRec& job) override;
  std::optional<uint64_t> find_request(const std::string& request_id) override;
  std::optional<JobRec> load(uint64_t id) override;
  std::vector<JobRec> list(const std::vector<JState>& states, size_t limit) override;
  Counts counts() override;
  CancelOutcome cancel(uint64_t id, const std::string& why, int64_t now_ms) override;
  std::vector<Claimed> claim(const std::string& node, const std::vector<std::string>& circuits, size_t n,
                             uint32_t lease_ms) override;
  std::vector<Lease> renew(const std::string& node, const std::vector<Lease>& held, uint32_t lease_ms) override;
  ReportOutcome report(const std::string& node, const Lease& lease, const PartitionRec& p, int64_t now_ms) override;
  size_t release(const std::string& node) override;
  std::vector<CircuitRec> circuits() override;
  bool add_circuit(const CircuitRec& c) override;
  bool remove_circuit(const std::string& name) override;
  size_t forget_removed_circuits() override;

  // The one-node journal.
  // Unfinished jobs, oldest first, with in-flight partitions already reset to Queued (recovery).
  std::vector<JobRec> recover();
  // State changes of accepted jobs. When the disk is full they are held in memory (a later change
  // of the same job or partition replaces the held one), retried by flush_held() and by every
  // later change, and shown by load(); they are never dropped while the process lives. A
  // supervisor killed meanwhile requeues what was in flight, as after any crash.
  struct JobChange {
    JState state;
    std::string error;
    int64_t finished_ms = 0;
  };
  // Partitions of one job and, where given, the job's own state: one transaction.
  void set(uint64_t job, std::vector<PartitionRec> parts, std::optional<JobChange> state = std::nullopt);
  // The same change taken in without writing it: the next flush_held() writes it with the others.
  void stage(uint64_t job, std::vector<PartitionRec> parts, std::optional<JobChange> state = std::nullopt);
  void set_job(uint64_t id, JState s, const std::string& error, int64_t finished_ms) {
    set(id, {}, JobChange{s, error, finished_ms});
  }
  void set_partition(uint64_t job, const PartitionRec& p) { set(job, {p}); }
  // Writes the held changes in one transaction; true when none is left held.
  bool flush_held();
  // Changes held for lack of space: while there are any, the store counts as full.
  size_t held() const { return held_jobs_.size() + held_parts_.size(); }

  // Transactions nest: inside an open one, begin() sets a savepoint, and commit() and rollback()
  // end that savepoint only. The journal (sqlite_journal.hpp) opens one around many calls, so that
  // one commit writes them all (a group commit). Changes flush_held() wrote inside it count as
  // written once the outermost commit succeeds; its rollback holds them again.
  void begin();
  void commit();
  void rollback();  // ends an open transaction (SQLite may have rolled a failed one back already)

 private:
  void exec(const char* sql);
  void migrate();
  bool has_column(const char* table, const char* column);
  std::optional<JState> job_state(uint64_t id);
  void set_job_row(uint64_t id, JState s, const std::string& error, int64_t finished_ms);
  std::map<uint64_t, JobChange> held_jobs_;
  std::map<std::pair<uint64_t, uint32_t>, PartitionRec> held_parts_;
  // Written by flush_held() inside a transaction still open: held again if it rolls back.
  std::map<uint64_t, JobChange> open_jobs_;
  std::map<std::pair<uint64_t, uint32_t>, PartitionRec> open_parts_;
  int depth_ = 0;  // transactions open, the outermost included
  // A test hook for a slow disk: every outermost commit waits this long first
  // (CUZK_TEST_STORE_COMMIT_DELAY_MS; 0 unless set).
  unsigned commit_delay_ms_ = 0;
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace cuzk::sup
