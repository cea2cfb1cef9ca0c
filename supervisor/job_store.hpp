// The durable job store (SQLite, WAL). Every state change is written here before the supervisor
// acts on it, so that a restarted supervisor requeues whatever was unfinished and loses nothing.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace cuzk::sup {

enum class Priority : int { Critical = 0, High = 1, Normal = 2, Low = 3 };
const char* to_string(Priority p);
std::optional<Priority> parse_priority(const std::string& s);

// Partition states; jobs use Queued, Running, Done, Failed, Cancelled.
enum class PState : int { Queued = 0, Synthesizing, Ready, Proving, Done, Failed, Cancelled };
const char* to_string(PState s);
enum class JState : int { Queued = 0, Running, Done, Failed, Cancelled };
const char* to_string(JState s);
inline bool is_final(JState s) { return s == JState::Done || s == JState::Failed || s == JState::Cancelled; }
inline bool is_final(PState s) { return s == PState::Done || s == PState::Failed || s == PState::Cancelled; }

// What a job's partitions were submitted as: .wtns witnesses, or circuit inputs (JSON) that a
// synthesis worker runs the circuit's witness generator on. Stored as its integer value.
enum class InputKind : int { Witnesses = 0, Inputs = 1 };
const char* to_string(InputKind k);  // "witnesses", "inputs": the request field they came in

// The store could not be written because the filesystem under it is full (SQLITE_FULL, ENOSPC).
// Nothing half-written is left behind: the change was rolled back, or is held (see JobStore).
struct StoreFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PartitionRec {
  uint32_t index = 0;
  std::string witness;  // absolute path of the .wtns, or of the inputs JSON (InputKind::Inputs)
  PState state = PState::Queued;
  uint32_t attempts = 0;
  std::string error, proof, pub, timings;  // proof/pub: the JSON texts; timings: a JSON object text
};

struct JobRec {
  uint64_t id = 0;
  std::string request_id, circuit, error;
  Priority priority = Priority::Normal;
  InputKind input = InputKind::Witnesses;
  std::string submitter;  // who may read it (job_access.hpp); "" in stores of schema version 1
  JState state = JState::Queued;
  int64_t created_ms = 0, finished_ms = 0;  // wall clock (ms since the epoch)
  std::vector<PartitionRec> parts;
};

class JobStore {
 public:
  // The schema version this build writes (PRAGMA user_version). A store of an older version is
  // migrated when opened; one of a newer version is refused.
  static constexpr int kSchemaVersion = 2;

  // Opens (creating or migrating if needed) <path>; throws std::runtime_error naming the file.
  explicit JobStore(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Inserts a job and its partitions in one transaction; fills job.id. Throws StoreFull, having
  // written nothing, when the disk is full or earlier changes are still held for lack of space.
  void insert(JobRec& job);
  std::optional<uint64_t> find_request(const std::string& request_id);
  std::optional<JobRec> load(uint64_t id);
  // Unfinished jobs, oldest first, with in-flight partitions already reset to Queued (recovery).
  std::vector<JobRec> recover();
  // State changes of accepted jobs. When the disk is full they are held in memory (a later change
  // of the same job or partition replaces the held one), retried by flush_held() and by every
  // later change, and shown by load(); they are never dropped while the process lives. A
  // supervisor killed meanwhile requeues what was in flight, as after any crash.
  void set_job(uint64_t id, JState s, const std::string& error, int64_t finished_ms);
  void set_partition(uint64_t job, const PartitionRec& p);
  // Writes the held changes in one transaction; true when none is left held.
  bool flush_held();
  // Changes held for lack of space: while there are any, the store counts as full.
  size_t held() const { return held_jobs_.size() + held_parts_.size(); }
  // Re-points a partition at a new witness path (uploads moved under the job's id).
  void set_witness(uint64_t job, uint32_t index, const std::string& path);
  struct Counts {
    uint64_t jobs[5] = {}, parts[7] = {};
  };
  Counts counts();

 private:
  void exec(const char* sql);
  void rollback();  // ends an open transaction (SQLite may have rolled a failed one back already)
  void migrate();
  struct JobChange {
    JState state;
    std::string error;
    int64_t finished_ms;
  };
  std::map<uint64_t, JobChange> held_jobs_;
  std::map<std::pair<uint64_t, uint32_t>, PartitionRec> held_parts_;
  bool has_column(const char* table, const char* column);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace cuzk::sup
