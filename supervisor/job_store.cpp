// SQLite job store: two tables, prepared statements, one transaction per logical change.
#include "supervisor/job_store.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <stdexcept>

namespace cuzk::sup {

const char* to_string(Priority p) {
  switch (p) {
    case Priority::Critical: return "critical";
    case Priority::High: return "high";
    case Priority::Normal: return "normal";
    case Priority::Low: return "low";
  }
  return "normal";
}

std::optional<Priority> parse_priority(const std::string& s) {
  for (Priority p : {Priority::Critical, Priority::High, Priority::Normal, Priority::Low})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

const char* to_string(PState s) {
  static const char* n[] = {"queued", "synthesizing", "ready", "proving", "done", "failed", "cancelled"};
  return n[int(s)];
}
const char* to_string(JState s) {
  static const char* n[] = {"queued", "running", "done", "failed", "cancelled"};
  return n[int(s)];
}
const char* to_string(InputKind k) { return k == InputKind::Inputs ? "inputs" : "witnesses"; }

namespace {

// Throws StoreFull for a full filesystem (SQLite's SQLITE_FULL, or a write or file creation
// failing with ENOSPC or EDQUOT), std::runtime_error otherwise; both name the store's file.
[[noreturn]] void throw_store_error(sqlite3* db, const std::string& path, const std::string& what) {
  const int sys = sqlite3_system_errno(db);
  if (sqlite3_errcode(db) == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT)
    throw StoreFull("job store " + path + ": the disk is full (" + what + ")");
  throw std::runtime_error("job store " + path + ": " + what);
}

// One prepared statement, finalized on scope exit; every error names the store's file.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt& bind(int i, int64_t v) { return check(sqlite3_bind_int64(st_, i, v)); }
  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(st_, i, v.data(), int(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind_null(int i) { return check(sqlite3_bind_null(st_, i)); }
  bool step() {
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
    return false;
  }
  int64_t i64(int c) { return sqlite3_column_int64(st_, c); }
  std::string text(int c) {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), size_t(sqlite3_column_bytes(st_, c))) : std::string();
  }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) fail("bind");
    return *this;
  }
  [[noreturn]] void fail(const char* what) {
    throw_store_error(db_, path_, std::string(what) + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  std::string path_;
};

PartitionRec read_part(Stmt& s) {
  PartitionRec p;
  p.index = uint32_t(s.i64(0));
  p.witness = s.text(1);
  p.state = PState(s.i64(2));
  p.attempts = uint32_t(s.i64(3));
  p.error = s.text(4);
  p.proof = s.text(5);
  p.pub = s.text(6);
  p.timings = s.text(7);
  return p;
}

}  // namespace

JobStore::JobStore(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("job store " + path + ": cannot open: " + msg);
  }
  sqlite3_extended_result_codes(db_, 0);
  sqlite3_busy_timeout(db_, 5000);
  try {
    exec("PRAGMA journal_mode=WAL");
    // NORMAL in WAL mode: a committed change survives a process crash (kill -9); only a power loss
    // can drop the last transactions, which the client then resubmits by request id.
    exec("PRAGMA synchronous=NORMAL");
    migrate();
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

JobStore::~JobStore() { sqlite3_close(db_); }

bool JobStore::has_column(const char* table, const char* column) {
  Stmt s(db_, (std::string("PRAGMA table_info(") + table + ")").c_str(), path_);
  while (s.step())
    if (s.text(1) == column) return true;
  return false;
}

// Brings the schema to kSchemaVersion in one transaction. Version 0 is both a new file and a store
// written before versions were recorded (same tables, without jobs.input_kind); version 2 adds
// jobs.submitter. A column is added only where it is missing, so any older store opens with every
// job kept (old jobs were all witnesses, and their submitter is unknown: '').
void JobStore::migrate() {
  exec("BEGIN IMMEDIATE");
  try {
    int version = 0;
    {
      Stmt s(db_, "PRAGMA user_version", path_);
      if (s.step()) version = int(s.i64(0));
    }
    if (version > kSchemaVersion)
      throw std::runtime_error("job store " + path_ + ": schema version " + std::to_string(version) +
                               " was written by a newer cuzk (this one reads up to " +
                               std::to_string(kSchemaVersion) + ")");
    exec(
        "CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY, request_id TEXT UNIQUE, circuit TEXT NOT NULL,"
        " priority INTEGER NOT NULL, state INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '',"
        " created_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL DEFAULT 0,"
        " input_kind INTEGER NOT NULL DEFAULT 0, submitter TEXT NOT NULL DEFAULT '')");
    exec(
        "CREATE TABLE IF NOT EXISTS partitions(job_id INTEGER NOT NULL, idx INTEGER NOT NULL, witness TEXT NOT NULL,"
        " state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',"
        " proof TEXT NOT NULL DEFAULT '', public TEXT NOT NULL DEFAULT '', timings TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY(job_id, idx))");
    if (!has_column("jobs", "input_kind")) exec("ALTER TABLE jobs ADD COLUMN input_kind INTEGER NOT NULL DEFAULT 0");
    if (!has_column("jobs", "submitter")) exec("ALTER TABLE jobs ADD COLUMN submitter TEXT NOT NULL DEFAULT ''");
    if (version != kSchemaVersion) exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
    exec("COMMIT");
  } catch (...) {
    rollback();
    throw;
  }
}

void JobStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw_store_error(db_, path_, msg);
  }
}

void JobStore::rollback() {
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void JobStore::insert(JobRec& job) {
  if (!flush_held())
    throw StoreFull("job store " + path_ + ": the disk is full (" + std::to_string(held()) +
                    " changes of accepted jobs wait for space)");
  exec("BEGIN IMMEDIATE");
  try {
    Stmt s(db_,
           "INSERT INTO jobs(request_id, circuit, priority, state, created_ms, input_kind, submitter)"
           " VALUES(?,?,?,?,?,?,?)",
           path_);
    if (job.request_id.empty()) s.bind_null(1);
    else s.bind(1, job.request_id);
    s.bind(2, job.circuit).bind(3, int64_t(job.priority)).bind(4, int64_t(job.state)).bind(5, job.created_ms);
    s.bind(6, int64_t(job.input)).bind(7, job.submitter);
    s.step();
    job.id = uint64_t(sqlite3_last_insert_rowid(db_));
    for (const PartitionRec& p : job.parts) {
      Stmt q(db_, "INSERT INTO partitions(job_id, idx, witness, state) VALUES(?,?,?,?)", path_);
      q.bind(1, int64_t(job.id)).bind(2, int64_t(p.index)).bind(3, p.witness).bind(4, int64_t(p.state));
      q.step();
    }
    exec("COMMIT");
  } catch (...) {
    rollback();
    throw;
  }
}

std::optional<uint64_t> JobStore::find_request(const std::string& request_id) {
  Stmt s(db_, "SELECT id FROM jobs WHERE request_id = ?", path_);
  s.bind(1, request_id);
  if (s.step()) return uint64_t(s.i64(0));
  return std::nullopt;
}

std::optional<JobRec> JobStore::load(uint64_t id) {
  Stmt s(db_,
         "SELECT id, request_id, circuit, priority, state, error, created_ms, finished_ms, input_kind, submitter FROM jobs"
         " WHERE id = ?",
         path_);
  s.bind(1, int64_t(id));
  if (!s.step()) return std::nullopt;
  JobRec j;
  j.id = uint64_t(s.i64(0));
  j.request_id = s.text(1);
  j.circuit = s.text(2);
  j.priority = Priority(s.i64(3));
  j.state = JState(s.i64(4));
  j.error = s.text(5);
  j.created_ms = s.i64(6);
  j.finished_ms = s.i64(7);
  j.input = s.i64(8) == int64_t(InputKind::Inputs) ? InputKind::Inputs : InputKind::Witnesses;
  j.submitter = s.text(9);
  Stmt p(db_,
         "SELECT idx, witness, state, attempts, error, proof, public, timings FROM partitions WHERE job_id = ?"
         " ORDER BY idx",
         path_);
  p.bind(1, int64_t(id));
  while (p.step()) j.parts.push_back(read_part(p));
  // Changes still held for lack of space are newer than what the file has.
  if (auto h = held_jobs_.find(id); h != held_jobs_.end())
    j.state = h->second.state, j.error = h->second.error, j.finished_ms = h->second.finished_ms;
  for (auto& part : j.parts)
    if (auto h = held_parts_.find({id, part.index}); h != held_parts_.end()) part = h->second;
  return j;
}

std::vector<JobRec> JobStore::recover() {
  // Whatever was in flight when the last supervisor died is queued again: the slot rings it was
  // in are recreated empty at start.
  // On a full disk the reset is held like any other change.
  bool held_reset = false;
  try {
    exec("BEGIN IMMEDIATE");
    Stmt s(db_, "UPDATE partitions SET state = ? WHERE state IN (?,?,?)", path_);
    s.bind(1, int64_t(PState::Queued))
        .bind(2, int64_t(PState::Synthesizing))
        .bind(3, int64_t(PState::Ready))
        .bind(4, int64_t(PState::Proving));
    s.step();
    exec("COMMIT");
  } catch (const StoreFull&) {
    rollback();
    held_reset = true;
  } catch (...) {
    rollback();
    throw;
  }
  std::vector<uint64_t> ids;
  {
    Stmt s(db_, "SELECT id FROM jobs WHERE state IN (?,?) ORDER BY id", path_);
    s.bind(1, int64_t(JState::Queued)).bind(2, int64_t(JState::Running));
    while (s.step()) ids.push_back(uint64_t(s.i64(0)));
  }
  std::vector<JobRec> out;
  for (uint64_t id : ids)
    if (auto j = load(id)) {
      for (auto& p : j->parts)
        if (held_reset && (p.state == PState::Synthesizing || p.state == PState::Ready || p.state == PState::Proving)) {
          p.state = PState::Queued;
          held_parts_[{id, p.index}] = p;
        }
      out.push_back(std::move(*j));
    }
  return out;
}

void JobStore::set_job(uint64_t id, JState st, const std::string& error, int64_t finished_ms) {
  held_jobs_[id] = JobChange{st, error, finished_ms};
  flush_held();
}

void JobStore::set_partition(uint64_t job, const PartitionRec& p) {
  held_parts_[{job, p.index}] = p;
  flush_held();
}

bool JobStore::flush_held() {
  if (!held()) return true;
  try {
    exec("BEGIN IMMEDIATE");
    for (const auto& [id, c] : held_jobs_) {
      Stmt s(db_, "UPDATE jobs SET state = ?, error = ?, finished_ms = ? WHERE id = ?", path_);
      s.bind(1, int64_t(c.state)).bind(2, c.error).bind(3, c.finished_ms).bind(4, int64_t(id));
      s.step();
    }
    for (const auto& [key, p] : held_parts_) {
      Stmt s(db_,
             "UPDATE partitions SET state = ?, attempts = ?, error = ?, proof = ?, public = ?, timings = ?"
             " WHERE job_id = ? AND idx = ?",
             path_);
      s.bind(1, int64_t(p.state))
          .bind(2, int64_t(p.attempts))
          .bind(3, p.error)
          .bind(4, p.proof)
          .bind(5, p.pub)
          .bind(6, p.timings)
          .bind(7, int64_t(key.first))
          .bind(8, int64_t(p.index));
      s.step();
    }
    exec("COMMIT");
  } catch (const StoreFull&) {
    rollback();
    return false;
  } catch (...) {
    rollback();
    throw;
  }
  held_jobs_.clear();
  held_parts_.clear();
  return true;
}

void JobStore::set_witness(uint64_t job, uint32_t index, const std::string& path) {
  Stmt s(db_, "UPDATE partitions SET witness = ? WHERE job_id = ? AND idx = ?", path_);
  s.bind(1, path).bind(2, int64_t(job)).bind(3, int64_t(index));
  s.step();
}

JobStore::Counts JobStore::counts() {
  Counts c;
  {
    Stmt s(db_, "SELECT state, COUNT(*) FROM jobs GROUP BY state", path_);
    while (s.step())
      if (s.i64(0) >= 0 && s.i64(0) < 5) c.jobs[s.i64(0)] = uint64_t(s.i64(1));
  }
  Stmt s(db_, "SELECT state, COUNT(*) FROM partitions GROUP BY state", path_);
  while (s.step())
    if (s.i64(0) >= 0 && s.i64(0) < 7) c.parts[s.i64(0)] = uint64_t(s.i64(1));
  return c;
}

}  // namespace cuzk::sup
