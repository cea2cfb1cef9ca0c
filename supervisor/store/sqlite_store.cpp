// SQLite job store: two tables, prepared statements, one transaction per logical change.
#include "supervisor/store/sqlite_store.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>

namespace cuzk::sup {

namespace {

// Throws StateWriteFailed for a full filesystem (SQLite's SQLITE_FULL, or a write or file creation
// failing with ENOSPC or EDQUOT: space) or a store that cannot be written otherwise (read-only,
// permissions, I/O errors: held like a full disk), std::runtime_error for anything else; each names
// the store's file.
[[noreturn]] void throw_store_error(sqlite3* db, const std::string& path, const std::string& what) {
  const int sys = sqlite3_system_errno(db);
  if (sqlite3_errcode(db) == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT)
    throw StateWriteFailed("job store " + path + ": the disk is full (" + what + ")", true);
  const int code = sqlite3_errcode(db) & 0xff;  // the primary result code
  if (code == SQLITE_READONLY || code == SQLITE_IOERR || code == SQLITE_PERM || code == SQLITE_CANTOPEN)
    throw StateWriteFailed("job store " + path + ": cannot be written (" + what + ")", false);
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
  Stmt& bind_blob(int i, const std::string& v) {
    if (v.empty()) return bind_null(i);
    return check(sqlite3_bind_blob64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT));
  }
  std::string blob(int c) {
    const void* b = sqlite3_column_blob(st_, c);
    return b ? std::string(static_cast<const char*>(b), size_t(sqlite3_column_bytes(st_, c))) : std::string();
  }
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

SqliteStore::SqliteStore(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("job store " + path + ": cannot open: " + msg);
  }
  sqlite3_extended_result_codes(db_, 0);
  sqlite3_busy_timeout(db_, 5000);
  if (const char* d = std::getenv("CUZK_TEST_STORE_COMMIT_DELAY_MS")) commit_delay_ms_ = unsigned(std::strtoul(d, nullptr, 10));
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

SqliteStore::~SqliteStore() { sqlite3_close(db_); }

bool SqliteStore::has_column(const char* table, const char* column) {
  Stmt s(db_, (std::string("PRAGMA table_info(") + table + ")").c_str(), path_);
  while (s.step())
    if (s.text(1) == column) return true;
  return false;
}

// Brings the schema to kSchemaVersion in one transaction. Version 0 is both a new file and a store
// written before versions were recorded (same tables, without jobs.input_kind); version 1 lacks the
// shared-queue columns of partitions (lease, stored input, prover); version 2 lacks jobs.submitter;
// version 3 lacks jobs.request_digest; version 4 lacks the circuits table (circuits added at run
// time); version 5 lacks circuits.removed (a removed circuit was deleted at once). Columns and tables are added only where they are missing, so any of them
// opens with every job kept (old jobs were all witnesses, and their submitter is unknown: '',
// readable by every client).
void SqliteStore::migrate() {
  begin();
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
        " input_kind INTEGER NOT NULL DEFAULT 0, submitter TEXT NOT NULL DEFAULT '',"
        " request_digest TEXT NOT NULL DEFAULT '')");
    exec(
        "CREATE TABLE IF NOT EXISTS partitions(job_id INTEGER NOT NULL, idx INTEGER NOT NULL, witness TEXT NOT NULL,"
        " state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',"
        " proof TEXT NOT NULL DEFAULT '', public TEXT NOT NULL DEFAULT '', timings TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY(job_id, idx))");
    exec("CREATE TABLE IF NOT EXISTS circuits(name TEXT PRIMARY KEY, config TEXT NOT NULL, added_ms INTEGER NOT NULL)");
    if (!has_column("circuits", "removed"))
      exec("ALTER TABLE circuits ADD COLUMN removed INTEGER NOT NULL DEFAULT 0");
    if (!has_column("jobs", "input_kind")) exec("ALTER TABLE jobs ADD COLUMN input_kind INTEGER NOT NULL DEFAULT 0");
    if (!has_column("jobs", "submitter")) exec("ALTER TABLE jobs ADD COLUMN submitter TEXT NOT NULL DEFAULT ''");
    if (!has_column("jobs", "request_digest"))
      exec("ALTER TABLE jobs ADD COLUMN request_digest TEXT NOT NULL DEFAULT ''");
    if (!has_column("partitions", "lease_node")) {
      exec("ALTER TABLE partitions ADD COLUMN lease_node TEXT");
      exec("ALTER TABLE partitions ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0");
      exec("ALTER TABLE partitions ADD COLUMN lease_expires_ms INTEGER NOT NULL DEFAULT 0");
      exec("ALTER TABLE partitions ADD COLUMN input BLOB");
      exec("ALTER TABLE partitions ADD COLUMN proved_by TEXT NOT NULL DEFAULT ''");
    }
    if (version != kSchemaVersion) exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
    commit();
  } catch (...) {
    rollback();
    throw;
  }
}

void SqliteStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw_store_error(db_, path_, msg);
  }
}

void SqliteStore::begin() {
  // SQLite may have rolled the whole transaction back after an error (a full disk, an I/O error):
  // a savepoint now would open a transaction of its own, which would commit by itself.
  if (depth_ && sqlite3_get_autocommit(db_))
    throw StateWriteFailed("job store " + path_ + ": the transaction was rolled back after an error", false);
  exec(depth_ ? "SAVEPOINT nested" : "BEGIN IMMEDIATE");
  depth_++;
}

void SqliteStore::commit() {
  if (depth_ == 1 && commit_delay_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(commit_delay_ms_));
  exec(depth_ > 1 ? "RELEASE nested" : "COMMIT");
  if (--depth_ == 0) open_jobs_.clear(), open_parts_.clear();
}

void SqliteStore::rollback() {
  if (depth_ > 1) {
    sqlite3_exec(db_, "ROLLBACK TO nested; RELEASE nested", nullptr, nullptr, nullptr);
    depth_--;
    return;
  }
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  depth_ = 0;
  // The held changes this transaction wrote are held again, behind any newer change of the same row.
  for (auto& [k, v] : open_jobs_) held_jobs_.try_emplace(k, std::move(v));
  for (auto& [k, v] : open_parts_) held_parts_.try_emplace(k, std::move(v));
  open_jobs_.clear();
  open_parts_.clear();
}

bool SqliteStore::insert(JobRec& job) {
  if (!flush_held())
    throw StateWriteFailed("job store " + path_ + ": the disk is full (" + std::to_string(held()) +
                               " changes of accepted jobs wait for space)",
                           true);
  begin();
  try {
    if (!job.request_id.empty()) {
      Stmt s(db_, "SELECT id, state FROM jobs WHERE request_id = ?", path_);
      s.bind(1, job.request_id);
      if (s.step()) {
        job.id = uint64_t(s.i64(0));
        job.state = JState(s.i64(1));
        commit();
        return false;
      }
    }
    Stmt s(db_,
           "INSERT INTO jobs(request_id, circuit, priority, state, created_ms, input_kind, submitter, request_digest)"
           " VALUES(?,?,?,?,?,?,?,?)",
           path_);
    if (job.request_id.empty()) s.bind_null(1);
    else s.bind(1, job.request_id);
    s.bind(2, job.circuit).bind(3, int64_t(job.priority)).bind(4, int64_t(job.state)).bind(5, job.created_ms);
    s.bind(6, int64_t(job.input)).bind(7, job.submitter).bind(8, job.request_digest);
    s.step();
    job.id = uint64_t(sqlite3_last_insert_rowid(db_));
    for (const PartitionRec& p : job.parts) {
      Stmt q(db_, "INSERT INTO partitions(job_id, idx, witness, state, input) VALUES(?,?,?,?,?)", path_);
      q.bind(1, int64_t(job.id)).bind(2, int64_t(p.index)).bind(3, p.witness).bind(4, int64_t(p.state));
      q.bind_blob(5, p.content);
      q.step();
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
  return true;
}

std::optional<uint64_t> SqliteStore::find_request(const std::string& request_id) {
  Stmt s(db_, "SELECT id FROM jobs WHERE request_id = ?", path_);
  s.bind(1, request_id);
  if (s.step()) return uint64_t(s.i64(0));
  return std::nullopt;
}

std::optional<JobRec> SqliteStore::load(uint64_t id) {
  Stmt s(db_,
         "SELECT id, request_id, circuit, priority, state, error, created_ms, finished_ms, input_kind, submitter,"
         " request_digest FROM jobs WHERE id = ?",
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
  j.request_digest = s.text(10);
  Stmt p(db_,
         "SELECT idx, witness, state, attempts, error, proof, public, timings FROM partitions WHERE job_id = ?"
         " ORDER BY idx",
         path_);
  p.bind(1, int64_t(id));
  while (p.step()) j.parts.push_back(read_part(p));
  // Changes still held for lack of space, or written in a transaction still open, are newer than
  // what the file has.
  auto overlay = [&](const auto& jobs, const auto& parts) {
    if (auto h = jobs.find(id); h != jobs.end())
      j.state = h->second.state, j.error = h->second.error, j.finished_ms = h->second.finished_ms;
    for (auto& part : j.parts)
      if (auto h = parts.find({id, part.index}); h != parts.end()) part = h->second;
  };
  overlay(open_jobs_, open_parts_);
  overlay(held_jobs_, held_parts_);
  return j;
}

std::vector<JobRec> SqliteStore::recover() {
  // Whatever was in flight when the last supervisor died is queued again: the slot rings it was
  // in are recreated empty at start.
  // On a full disk the reset is held like any other change.
  bool held_reset = false;
  try {
    begin();
    Stmt s(db_, "UPDATE partitions SET state = ? WHERE state IN (?,?,?)", path_);
    s.bind(1, int64_t(PState::Queued))
        .bind(2, int64_t(PState::Synthesizing))
        .bind(3, int64_t(PState::Ready))
        .bind(4, int64_t(PState::Proving));
    s.step();
    commit();
  } catch (const StateWriteFailed&) {
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

void SqliteStore::stage(uint64_t job, std::vector<PartitionRec> parts, std::optional<JobChange> state) {
  for (PartitionRec& p : parts) held_parts_[{job, p.index}] = std::move(p);
  if (state) held_jobs_[job] = std::move(*state);
}

void SqliteStore::set(uint64_t job, std::vector<PartitionRec> parts, std::optional<JobChange> state) {
  stage(job, std::move(parts), std::move(state));
  flush_held();
}

bool SqliteStore::flush_held() {
  if (!held()) return true;
  try {
    begin();
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
    commit();
  } catch (const StateWriteFailed&) {
    rollback();
    return false;
  } catch (...) {
    rollback();
    throw;
  }
  if (depth_) {  // inside a transaction still open: written once it commits
    for (auto& [k, v] : held_jobs_) open_jobs_[k] = std::move(v);
    for (auto& [k, v] : held_parts_) open_parts_[k] = std::move(v);
  }
  held_jobs_.clear();
  held_parts_.clear();
  return true;
}

SqliteStore::Counts SqliteStore::counts() {
  Counts c;
  {
    Stmt s(db_, "SELECT state, COUNT(*) FROM jobs GROUP BY state", path_);
    while (s.step())
      if (s.i64(0) >= 0 && uint64_t(s.i64(0)) < kJStates) c.jobs[s.i64(0)] = uint64_t(s.i64(1));
  }
  Stmt s(db_, "SELECT state, COUNT(*) FROM partitions GROUP BY state", path_);
  while (s.step())
    if (s.i64(0) >= 0 && uint64_t(s.i64(0)) < kPStates) c.parts[s.i64(0)] = uint64_t(s.i64(1));
  return c;
}

std::vector<JobRec> SqliteStore::list(const std::vector<JState>& states, size_t limit) {
  std::vector<uint64_t> ids;
  {
    std::string in;
    for (JState st : states) in += (in.empty() ? "" : ",") + std::to_string(int(st));
    Stmt s(db_, ("SELECT id FROM jobs WHERE state IN (" + in + ") ORDER BY id LIMIT ?").c_str(), path_);
    s.bind(1, int64_t(std::min<size_t>(limit, INT64_MAX)));
    while (s.step()) ids.push_back(uint64_t(s.i64(0)));
  }
  std::vector<JobRec> out;
  for (uint64_t id : ids)
    if (auto j = load(id)) out.push_back(std::move(*j));
  return out;
}

std::optional<JState> SqliteStore::job_state(uint64_t id) {
  Stmt s(db_, "SELECT state FROM jobs WHERE id = ?", path_);
  s.bind(1, int64_t(id));
  if (!s.step()) return std::nullopt;
  return JState(s.i64(0));
}

// A job's new state; a final one also drops the inputs stored for its partitions.
void SqliteStore::set_job_row(uint64_t id, JState st, const std::string& error, int64_t finished_ms) {
  Stmt s(db_, "UPDATE jobs SET state = ?, error = ?, finished_ms = ? WHERE id = ?", path_);
  s.bind(1, int64_t(st)).bind(2, error).bind(3, finished_ms).bind(4, int64_t(id));
  s.step();
  if (!is_final(st)) return;
  Stmt q(db_, "UPDATE partitions SET input = NULL, lease_node = NULL, state = CASE WHEN state < ? THEN ? ELSE state END"
              " WHERE job_id = ?", path_);
  q.bind(1, int64_t(PState::Done)).bind(2, int64_t(PState::Cancelled)).bind(3, int64_t(id));
  q.step();
}

CancelOutcome SqliteStore::cancel(uint64_t id, const std::string& why, int64_t now_ms) {
  CancelOutcome out;
  begin();
  try {
    if (auto st = job_state(id)) {
      out.found = true;
      out.state = *st;
      if (!is_final(*st)) {
        set_job_row(id, JState::Cancelled, why, now_ms);
        out.cancelled = true;
        out.state = JState::Cancelled;
      }
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
  return out;
}

namespace {

int64_t now_wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<Claimed> SqliteStore::claim(const std::string& node, const std::vector<std::string>& circuits, size_t n,
                                        uint32_t lease_ms) {
  std::vector<Claimed> out;
  if (circuits.empty() || n == 0) return out;
  const int64_t now = now_wall_ms();
  begin();
  try {
    std::string in;
    for (size_t i = 0; i < circuits.size(); i++) in += i ? ",?" : "?";
    Stmt s(db_,
           ("SELECT p.job_id, p.idx, p.lease_node IS NOT NULL, p.witness, p.input, p.attempts, p.error"
            " FROM partitions p JOIN jobs j ON j.id = p.job_id WHERE p.state < ? AND j.state < ? AND j.circuit IN (" +
            in + ") AND (p.lease_node IS NULL OR p.lease_expires_ms < ?) ORDER BY j.priority, j.id, p.idx LIMIT ?")
               .c_str(),
           path_);
    s.bind(1, int64_t(PState::Done)).bind(2, int64_t(JState::Done));
    int k = 3;
    for (const auto& c : circuits) s.bind(k++, c);
    s.bind(k, now).bind(k + 1, int64_t(std::min<size_t>(n, INT32_MAX)));
    while (s.step()) {
      Claimed c;
      c.lease.job = uint64_t(s.i64(0));
      c.lease.index = uint32_t(s.i64(1));
      c.taken_over = s.i64(2) != 0;
      PartitionRec p;
      p.index = c.lease.index;
      p.witness = s.text(3);
      p.content = s.blob(4);
      p.attempts = uint32_t(s.i64(5));
      p.error = s.text(6);
      c.job.parts.push_back(std::move(p));
      out.push_back(std::move(c));
    }
    for (Claimed& c : out) {
      Stmt u(db_,
             "UPDATE partitions SET state = ?, lease_node = ?, lease_epoch = lease_epoch + 1, lease_expires_ms = ?,"
             " attempts = attempts + ? WHERE job_id = ? AND idx = ? RETURNING lease_epoch",
             path_);
      u.bind(1, int64_t(PState::Queued)).bind(2, node).bind(3, now + int64_t(lease_ms));
      u.bind(4, int64_t(c.taken_over ? 1 : 0));  // an expired lease is a failed attempt
      u.bind(5, int64_t(c.lease.job)).bind(6, int64_t(c.lease.index));
      if (c.taken_over) c.job.parts[0].attempts++;
      if (u.step()) c.lease.epoch = uint64_t(u.i64(0));
      while (u.step()) {
      }
      Stmt r(db_, "UPDATE jobs SET state = ? WHERE id = ? AND state = ?", path_);
      r.bind(1, int64_t(JState::Running)).bind(2, int64_t(c.lease.job)).bind(3, int64_t(JState::Queued));
      r.step();
      Stmt q(db_,
             "SELECT request_id, circuit, priority, state, created_ms, input_kind,"
             " (SELECT COUNT(*) FROM partitions WHERE job_id = jobs.id) FROM jobs WHERE id = ?",
             path_);
      q.bind(1, int64_t(c.lease.job));
      if (!q.step()) continue;
      c.job.id = c.lease.job;
      c.job.request_id = q.text(0);
      c.job.circuit = q.text(1);
      c.job.priority = Priority(q.i64(2));
      c.job.state = JState(q.i64(3));
      c.job.created_ms = q.i64(4);
      c.job.input = q.i64(5) == int64_t(InputKind::Inputs) ? InputKind::Inputs : InputKind::Witnesses;
      c.partitions = uint32_t(q.i64(6));
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
  return out;
}

std::vector<Lease> SqliteStore::renew(const std::string& node, const std::vector<Lease>& held, uint32_t lease_ms) {
  std::vector<Lease> lost;
  const int64_t until = now_wall_ms() + int64_t(lease_ms);
  begin();
  try {
    for (const Lease& l : held) {
      Stmt s(db_,
             "UPDATE partitions SET lease_expires_ms = ? WHERE job_id = ? AND idx = ? AND lease_node = ?"
             " AND lease_epoch = ? AND state < ?",
             path_);
      s.bind(1, until).bind(2, int64_t(l.job)).bind(3, int64_t(l.index)).bind(4, node).bind(5, int64_t(l.epoch));
      s.bind(6, int64_t(PState::Done));
      s.step();
      if (sqlite3_changes(db_) == 0) lost.push_back(l);
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
  return lost;
}

ReportOutcome SqliteStore::report(const std::string& node, const Lease& lease, const PartitionRec& p,
                                  int64_t now_ms) {
  if (p.state == PState::Cancelled) throw std::invalid_argument("a partition is cancelled with its job (cancel)");
  ReportOutcome out;
  const bool keeps = p.state != PState::Queued && !is_final(p.state);
  begin();
  try {
    out.job = job_state(lease.job).value_or(JState::Cancelled);
    Stmt s(db_,
           "UPDATE partitions SET state = ?, attempts = ?, error = ?, proof = ?, public = ?, timings = ?,"
           " lease_node = CASE WHEN ? THEN lease_node ELSE NULL END,"
           " proved_by = CASE WHEN ? = ? THEN ? ELSE proved_by END"
           " WHERE job_id = ? AND idx = ? AND lease_node = ? AND lease_epoch = ? AND state < ?",
           path_);
    s.bind(1, int64_t(p.state)).bind(2, int64_t(p.attempts)).bind(3, p.error).bind(4, p.proof).bind(5, p.pub);
    s.bind(6, p.timings).bind(7, int64_t(keeps)).bind(8, int64_t(p.state)).bind(9, int64_t(PState::Done)).bind(10, node);
    s.bind(11, int64_t(lease.job)).bind(12, int64_t(lease.index)).bind(13, node).bind(14, int64_t(lease.epoch));
    s.bind(15, int64_t(PState::Done));
    s.step();
    out.accepted = sqlite3_changes(db_) > 0;
    if (out.accepted) {
      if (p.state == PState::Failed) {
        out.job = JState::Failed;
        set_job_row(lease.job, out.job, "partition " + std::to_string(lease.index) + ": " + p.error, now_ms);
      } else if (p.state == PState::Done) {
        Stmt c(db_, "SELECT COUNT(*) FROM partitions WHERE job_id = ? AND state <> ?", path_);
        c.bind(1, int64_t(lease.job)).bind(2, int64_t(PState::Done));
        if (c.step() && c.i64(0) == 0) set_job_row(lease.job, out.job = JState::Done, "", now_ms);
      }
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
  return out;
}

size_t SqliteStore::release(const std::string& node) {
  Stmt s(db_, "UPDATE partitions SET state = ?, lease_node = NULL WHERE lease_node = ? AND state < ?", path_);
  s.bind(1, int64_t(PState::Queued)).bind(2, node).bind(3, int64_t(PState::Done));
  s.step();
  return size_t(sqlite3_changes(db_));
}

std::vector<CircuitRec> SqliteStore::circuits() {
  std::vector<CircuitRec> out;
  Stmt s(db_, "SELECT name, config, added_ms, removed FROM circuits ORDER BY added_ms, rowid", path_);
  while (s.step()) out.push_back({s.text(0), s.text(1), s.i64(2), s.i64(3) != 0});
  return out;
}

size_t SqliteStore::forget_removed_circuits() {
  Stmt s(db_,
         "DELETE FROM circuits WHERE removed <> 0 AND NOT EXISTS"
         " (SELECT 1 FROM jobs WHERE jobs.circuit = circuits.name AND jobs.state IN (?, ?))",
         path_);
  s.bind(1, int64_t(JState::Queued)).bind(2, int64_t(JState::Running));
  s.step();
  return size_t(sqlite3_changes(db_));
}

bool SqliteStore::add_circuit(const CircuitRec& c) {
  forget_removed_circuits();
  Stmt s(db_, "INSERT INTO circuits(name, config, added_ms) VALUES(?,?,?) ON CONFLICT(name) DO NOTHING", path_);
  s.bind(1, c.name).bind(2, c.config).bind(3, c.added_ms);
  s.step();
  return sqlite3_changes(db_) == 1;
}

bool SqliteStore::remove_circuit(const std::string& name) {
  bool marked;
  {
    Stmt s(db_, "UPDATE circuits SET removed = 1 WHERE name = ? AND removed = 0", path_);
    s.bind(1, name);
    s.step();
    marked = sqlite3_changes(db_) == 1;
  }
  forget_removed_circuits();
  return marked;
}

}  // namespace cuzk::sup
