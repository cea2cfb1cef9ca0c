// The job store: what the supervisor knows about jobs, behind one interface with two backends.
// SQLite (sqlite_store.hpp, the default) serves one node: the supervisor keeps the queue in memory
// and writes every change through (on the journal's thread, sqlite_journal.hpp), so that a
// restarted supervisor requeues whatever was unfinished. PostgreSQL (pg_store.hpp, [store] url) serves many nodes: the database is
// the queue, and each node claims partitions from it under a lease (see docs/ARCHITECTURE.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::sup {

enum class Priority : int { Critical = 0, High = 1, Normal = 2, Low = 3 };
const char* to_string(Priority p);
std::optional<Priority> parse_priority(const std::string& s);

// The states of a partition and of a job, each listed once with its name: the enumeration, its
// names and its count (kPStates, kJStates) are made from the list, so that a state added to it is
// stored, counted (JobStore::Counts) and reported in /metrics without another edit. The stores
// keep a state as its position in the list.
#define CUZK_PARTITION_STATES(X) \
  X(Queued, "queued") X(Synthesizing, "synthesizing") X(Ready, "ready") X(Proving, "proving") X(Done, "done") \
  X(Failed, "failed") X(Cancelled, "cancelled")
#define CUZK_JOB_STATES(X) X(Queued, "queued") X(Running, "running") X(Done, "done") X(Failed, "failed") X(Cancelled, "cancelled")
#define CUZK_STATE_ENUMERATOR(e, name) e,
#define CUZK_STATE_ONE(e, name) +1
enum class PState : int { CUZK_PARTITION_STATES(CUZK_STATE_ENUMERATOR) };
enum class JState : int { CUZK_JOB_STATES(CUZK_STATE_ENUMERATOR) };
inline constexpr size_t kPStates = 0 CUZK_PARTITION_STATES(CUZK_STATE_ONE);
inline constexpr size_t kJStates = 0 CUZK_JOB_STATES(CUZK_STATE_ONE);
#undef CUZK_STATE_ENUMERATOR
#undef CUZK_STATE_ONE
const char* to_string(PState s);
const char* to_string(JState s);
inline bool is_final(JState s) { return s == JState::Done || s == JState::Failed || s == JState::Cancelled; }
inline bool is_final(PState s) { return s == PState::Done || s == PState::Failed || s == PState::Cancelled; }

// What a job's partitions were submitted as: .wtns witnesses, or circuit inputs (JSON) that a
// synthesis worker runs the circuit's witness generator on. Stored as its integer value.
enum class InputKind : int { Witnesses = 0, Inputs = 1 };
const char* to_string(InputKind k);       // "witnesses", "inputs": the request field they came in
const char* file_extension(InputKind k);  // ".wtns", ".json"

// A partition that failed this often for reasons other than its input fails its job. A lease that
// expired (the node holding the partition stopped renewing it) counts as a failed attempt, so that a
// partition that kills every node proving it stops circulating.
constexpr uint32_t kMaxAttempts = 3;

// A write under daemon.state_dir (the store's file, results, uploads) failed for a reason no
// request caused (state_writes.hpp): the filesystem is full (SQLITE_FULL, ENOSPC, EDQUOT: space), or
// it cannot be written otherwise (read-only, permissions, an I/O error). Both are handled as a full
// disk is; space says which, for the log. Nothing half-written is left behind: the change was
// rolled back, or is held (see SqliteStore).
struct StateWriteFailed : std::runtime_error {
  StateWriteFailed(const std::string& what, bool space) : std::runtime_error(what), space(space) {}
  bool space;
};

// The store cannot be reached now (a database server down or restarting, the connection lost).
// Nothing was changed, or the transaction was rolled back; the same call can be made again later.
struct StoreUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PartitionRec {
  uint32_t index = 0;
  std::string witness;  // absolute path of the .wtns, or of the inputs JSON (InputKind::Inputs)
  PState state = PState::Queued;
  uint32_t attempts = 0;
  std::string error, proof, pub, timings;  // proof/pub: the JSON texts; timings: a JSON object text
  // The input's bytes when the request carried them and the store keeps them (a shared store:
  // every node must be able to read them). Written by insert(), returned by claim() only.
  std::string content;
};

struct JobRec {
  uint64_t id = 0;
  std::string request_id, circuit, error;
  Priority priority = Priority::Normal;
  InputKind input = InputKind::Witnesses;
  std::string submitter;  // who may read it (job_access.hpp); "" in stores of schema version 1
  // What a request with a request_id asked for (request_key.hpp), so that the same id with another
  // body is told apart; "" for jobs without one, and in stores from before it was recorded.
  std::string request_digest;
  JState state = JState::Queued;
  int64_t created_ms = 0, finished_ms = 0;  // wall clock (ms since the epoch)
  std::vector<PartitionRec> parts;
};

// A node's hold on one partition. The epoch goes up with every claim of the partition, so a node
// whose lease expired and was claimed by another can no longer change the partition: each change
// is made only where node and epoch still match.
struct Lease {
  uint64_t job = 0;
  uint32_t index = 0;
  uint64_t epoch = 0;
  bool operator==(const Lease&) const = default;
};

struct Claimed {
  JobRec job;               // the job's fields; parts holds the one claimed partition, content included
  uint32_t partitions = 0;  // how many the job has
  Lease lease;
  bool taken_over = false;  // its earlier lease expired: the node holding it died or lost the store
};

struct ReportOutcome {
  bool accepted = false;          // false: the lease is not held any more, and nothing was changed
  bool again = false;             // recorded by an earlier try whose answer was lost (accepted is true)
  JState job = JState::Running;   // the job's state after the report
};

struct CancelOutcome {
  bool found = false;
  bool cancelled = false;         // false with found: the job was final already
  JState state = JState::Queued;  // the job's state now
};

// A circuit added at run time (POST /v1/circuits): its [[circuits]] entry as JSON
// (config::circuit_json), kept so that it survives restarts and, in a shared store, reaches every node.
// A removed one stays, marked, while any of its jobs is unfinished: a restart serves it for them.
struct CircuitRec {
  std::string name, config;
  int64_t added_ms = 0;
  bool removed = false;  // takes no new jobs; kept for its unfinished ones
};

class JobStore {
 public:
  virtual ~JobStore() = default;
  virtual const char* backend() const = 0;  // "sqlite", "postgresql"
  // Whether the last call reached the store (a local file always does).
  virtual bool connected() const { return true; }

  // Submission. Inserts the job and its partitions in one transaction and fills job.id; true. When
  // job.request_id names a job already stored, inserts nothing, sets job.id and job.state to that
  // job's, and returns false: a retried submission never makes a second job.
  virtual bool insert(JobRec& job) = 0;
  virtual std::optional<uint64_t> find_request(const std::string& request_id) = 0;
  // The job with its partitions and their results (not their stored input content).
  virtual std::optional<JobRec> load(uint64_t id) = 0;
  // Jobs in one of `states`, oldest first, at most `limit`, loaded as by load().
  virtual std::vector<JobRec> list(const std::vector<JState>& states, size_t limit) = 0;
  struct Counts {
    uint64_t jobs[kJStates] = {}, parts[kPStates] = {};  // by state
  };
  virtual Counts counts() = 0;
  // Makes an unfinished job Cancelled with `why`, and its unfinished partitions with it.
  virtual CancelOutcome cancel(uint64_t id, const std::string& why, int64_t now_ms) = 0;

  // The shared queue. claim() takes up to n unfinished partitions of the named circuits that no
  // live lease holds, best first (priority, then the oldest job, then partition order), for `node`
  // with a lease of lease_ms; their jobs become Running. Concurrent claims never take the same
  // partition.
  virtual std::vector<Claimed> claim(const std::string& node, const std::vector<std::string>& circuits, size_t n,
                                     uint32_t lease_ms) = 0;
  // Extends the leases `node` still holds to lease_ms from now; returns those it no longer holds
  // (claimed by another node after expiring, or their job ended).
  virtual std::vector<Lease> renew(const std::string& node, const std::vector<Lease>& held, uint32_t lease_ms) = 0;
  // A partition's new state from its lease holder, applied only while the lease is held:
  //   Synthesizing, Ready, Proving: progress (the lease stays);
  //   Queued: back to the queue (attempts and error as given; the lease ends);
  //   Done: its proof, public and timings; the job is Done when every partition is;
  //   Failed: its error; the job fails with it, and its unfinished partitions are cancelled.
  virtual ReportOutcome report(const std::string& node, const Lease& lease, const PartitionRec& p,
                               int64_t now_ms) = 0;
  // Every lease held by `node` ends, its partitions queued again (a node starting up: whatever an
  // earlier run of it held is not in flight any more). Returns how many.
  virtual size_t release(const std::string& node) = 0;

  // Runtime circuits, in the order they were added: removed ones that still have unfinished jobs
  // too (marked), after forget_removed_circuits().
  virtual std::vector<CircuitRec> circuits() = 0;
  // Stores c; false, storing nothing, when a circuit of that name is stored already (a removed
  // one whose jobs are all finished is forgotten first).
  virtual bool add_circuit(const CircuitRec& c) = 0;
  // Marks the named circuit removed (no new jobs); it is kept while any of its jobs is unfinished,
  // else forgotten at once. false when no circuit of the name was stored, or it was removed already.
  virtual bool remove_circuit(const std::string& name) = 0;
  // Forgets the removed circuits none of whose jobs is unfinished; how many.
  virtual size_t forget_removed_circuits() = 0;
};

}  // namespace cuzk::sup
