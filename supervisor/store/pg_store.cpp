// PostgreSQL job store: tables cuzk_jobs, cuzk_partitions and cuzk_schema_version; one transaction
// per logical change; every change of a claimed partition made only where its lease still matches.
// Times of leases are the server's (now()), so that the nodes' clocks never have to agree.
#include "supervisor/store/pg_store.hpp"

#include <libpq-fe.h>

#include <cstring>
#include <set>

namespace cuzk::sup {

namespace {

// A deadlock or serialization failure: the transaction is run again.
struct TxConflict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Lost or refused connections (class 08), and a server shutting down or starting (57P01..57P03).
bool unreachable(const char* sqlstate) {
  if (!sqlstate) return false;
  return std::strncmp(sqlstate, "08", 2) == 0 || std::strcmp(sqlstate, "57P01") == 0 ||
         std::strcmp(sqlstate, "57P02") == 0 || std::strcmp(sqlstate, "57P03") == 0;
}

std::string one_line(const char* msg) {
  std::string s = msg ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

std::string int_array(const std::vector<uint64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

std::string text_array(const std::vector<std::string>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); i++) {
    s += i ? ",\"" : "\"";
    for (char c : v[i]) {
      if (c == '"' || c == '\\') s += '\\';
      s += c;
    }
    s += '"';
  }
  return s + "}";
}

std::string num(int64_t v) { return std::to_string(v); }

// Each step brings the schema from the version before it; applied in order, each once.
const char* const kMigrations[] = {
    // 1: jobs, partitions with their leases, and the indexes that the claim and the lease checks use.
    "CREATE TABLE cuzk_jobs(id BIGSERIAL PRIMARY KEY, request_id TEXT UNIQUE, circuit TEXT NOT NULL,"
    " priority INTEGER NOT NULL, state INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '',"
    " created_ms BIGINT NOT NULL, finished_ms BIGINT NOT NULL DEFAULT 0, input_kind INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE cuzk_partitions(job_id BIGINT NOT NULL REFERENCES cuzk_jobs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, witness TEXT NOT NULL, input BYTEA, state INTEGER NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '', proof TEXT NOT NULL DEFAULT '',"
    " public TEXT NOT NULL DEFAULT '', timings TEXT NOT NULL DEFAULT '', lease_node TEXT,"
    " lease_epoch BIGINT NOT NULL DEFAULT 0, lease_expires TIMESTAMPTZ, proved_by TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY(job_id, idx));"
    "CREATE INDEX cuzk_jobs_open ON cuzk_jobs(priority, id) WHERE state < 2;"
    "CREATE INDEX cuzk_partitions_open ON cuzk_partitions(job_id, idx) WHERE state < 4;"
    "CREATE INDEX cuzk_partitions_leased ON cuzk_partitions(lease_node) WHERE lease_node IS NOT NULL;",
    // 2: who submitted each job (job_access.hpp); '' for jobs from before, readable by every client.
    "ALTER TABLE cuzk_jobs ADD COLUMN submitter TEXT NOT NULL DEFAULT '';",
    // 3: what a request with a request_id asked for (request_key.hpp); '' for jobs from before.
    "ALTER TABLE cuzk_jobs ADD COLUMN request_digest TEXT NOT NULL DEFAULT '';",
    // 4: circuits added at run time, which every node sees.
    "CREATE TABLE cuzk_circuits(name TEXT PRIMARY KEY, config TEXT NOT NULL, added_ms BIGINT NOT NULL,"
    " seq BIGSERIAL);",
    // 5: a removed circuit stays, marked, while any of its jobs is unfinished.
    "ALTER TABLE cuzk_circuits ADD COLUMN removed BOOLEAN NOT NULL DEFAULT false;",
};
static_assert(std::size(kMigrations) == PgStore::kSchemaVersion);

}  // namespace

void PgStore::ResultDeleter::operator()(PGresult* r) const { PQclear(r); }

PgStore::PgStore(std::string url) : url_(std::move(url)) {
  connect();
  migrate();
}

PgStore::~PgStore() {
  if (conn_) PQfinish(conn_);
}

bool PgStore::connected() const { return conn_ && PQstatus(conn_) == CONNECTION_OK; }

std::string PgStore::where() const {
  if (!conn_) return "(not connected)";
  const char* host = PQhost(conn_);
  const char* port = PQport(conn_);
  const char* db = PQdb(conn_);
  return std::string(host ? host : "") + ":" + (port ? port : "") + "/" + (db ? db : "");
}

void PgStore::connect() {
  if (connected()) return;
  if (conn_) PQfinish(conn_);
  // A server that does not answer fails the attempt after 10 s, unless the URI says otherwise: its
  // own connect_timeout, coming later, overrides this one.
  const char* keys[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {"10", url_.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, 1);
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string msg = one_line(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    throw StoreUnavailable("job store (postgresql): cannot connect: " + msg);
  }
  // CREATE ... IF NOT EXISTS and the like would print notices on the daemon's stderr.
  exec("SET client_min_messages = warning");
}

PgStore::Result PgStore::exec(const char* sql, const std::vector<Param>& params) {
  connect();
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (const Param& p : params) {
    values.push_back(p.value ? p.value->data() : nullptr);
    lengths.push_back(p.value ? int(p.value->size()) : 0);
    formats.push_back(p.binary ? 1 : 0);
  }
  Result r(params.empty() ? PQexec(conn_, sql)
                          : PQexecParams(conn_, sql, int(params.size()), nullptr, values.data(), lengths.data(),
                                         formats.data(), 0));
  const ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  const char* state = r ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
  const std::string msg = one_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
  if (PQstatus(conn_) != CONNECTION_OK || unreachable(state)) {
    PQfinish(conn_);
    conn_ = nullptr;
    throw StoreUnavailable("job store (postgresql): connection lost: " + msg);
  }
  if (state && (std::strcmp(state, "40001") == 0 || std::strcmp(state, "40P01") == 0)) throw TxConflict(msg);
  throw std::runtime_error("job store (postgresql): " + msg);
}

template <class F>
auto PgStore::transaction(F&& body) {
  for (int attempt = 1;; attempt++) {
    exec("BEGIN");
    try {
      auto out = body();
      exec("COMMIT");
      return out;
    } catch (const TxConflict& e) {
      if (connected()) PQclear(PQexec(conn_, "ROLLBACK"));
      if (attempt == 5) throw std::runtime_error(std::string("job store (postgresql): ") + e.what());
    } catch (...) {
      if (connected()) PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }
}

void PgStore::migrate() {
  transaction([&] {
    exec("SELECT pg_advisory_xact_lock(1668643435)");  // "cuzk": nodes starting together migrate one at a time
    exec("CREATE TABLE IF NOT EXISTS cuzk_schema_version(version INTEGER PRIMARY KEY,"
         " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
    Result r = exec("SELECT COALESCE(max(version), 0) FROM cuzk_schema_version");
    const int version = std::atoi(PQgetvalue(r.get(), 0, 0));
    if (version > kSchemaVersion)
      throw std::runtime_error("job store (postgresql) " + where() + ": schema version " + std::to_string(version) +
                               " was written by a newer cuzk (this one reads up to " +
                               std::to_string(kSchemaVersion) + ")");
    for (int v = version + 1; v <= kSchemaVersion; v++) {
      exec(kMigrations[v - 1]);
      exec("INSERT INTO cuzk_schema_version(version) VALUES($1)", {{num(v)}});
    }
    return 0;
  });
}

bool PgStore::insert(JobRec& job) {
  return transaction([&] {
    std::optional<std::string> rid;
    if (!job.request_id.empty()) rid = job.request_id;
    Result r = exec(
        "INSERT INTO cuzk_jobs(request_id, circuit, priority, state, created_ms, input_kind, submitter, request_digest)"
        " VALUES($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (request_id) DO NOTHING RETURNING id",
        {{rid}, {job.circuit}, {num(int(job.priority))}, {num(int(job.state))}, {num(job.created_ms)},
         {num(int(job.input))}, {job.submitter}, {job.request_digest}});
    if (PQntuples(r.get()) == 0) {
      // A concurrent or earlier submission with the same request id made the job.
      Result e = exec("SELECT id, state FROM cuzk_jobs WHERE request_id = $1", {{rid}});
      job.id = std::stoull(PQgetvalue(e.get(), 0, 0));
      job.state = JState(std::atoi(PQgetvalue(e.get(), 0, 1)));
      return false;
    }
    job.id = std::stoull(PQgetvalue(r.get(), 0, 0));
    for (const PartitionRec& p : job.parts) {
      std::optional<std::string> content;
      if (!p.content.empty()) content = p.content;
      exec("INSERT INTO cuzk_partitions(job_id, idx, witness, state, input) VALUES($1,$2,$3,$4,$5)",
           {{num(int64_t(job.id))}, {num(p.index)}, {p.witness}, {num(int(p.state))}, {content, true}});
    }
    return true;
  });
}

std::optional<uint64_t> PgStore::find_request(const std::string& request_id) {
  Result r = exec("SELECT id FROM cuzk_jobs WHERE request_id = $1", {{request_id}});
  if (PQntuples(r.get()) == 0) return std::nullopt;
  return std::stoull(PQgetvalue(r.get(), 0, 0));
}

std::optional<JobRec> PgStore::load(uint64_t id) {
  Result r = exec(
      "SELECT id, COALESCE(request_id, ''), circuit, priority, state, error, created_ms, finished_ms, input_kind,"
      " submitter, request_digest FROM cuzk_jobs WHERE id = $1",
      {{num(int64_t(id))}});
  if (PQntuples(r.get()) == 0) return std::nullopt;
  auto at = [&](PGresult* res, int row, int col) { return std::string(PQgetvalue(res, row, col)); };
  JobRec j;
  j.id = std::stoull(at(r.get(), 0, 0));
  j.request_id = at(r.get(), 0, 1);
  j.circuit = at(r.get(), 0, 2);
  j.priority = Priority(std::stoi(at(r.get(), 0, 3)));
  j.state = JState(std::stoi(at(r.get(), 0, 4)));
  j.error = at(r.get(), 0, 5);
  j.created_ms = std::stoll(at(r.get(), 0, 6));
  j.finished_ms = std::stoll(at(r.get(), 0, 7));
  j.input = std::stoi(at(r.get(), 0, 8)) == int(InputKind::Inputs) ? InputKind::Inputs : InputKind::Witnesses;
  j.submitter = at(r.get(), 0, 9);
  j.request_digest = at(r.get(), 0, 10);
  Result p = exec(
      "SELECT idx, witness, state, attempts, error, proof, public, timings FROM cuzk_partitions WHERE job_id = $1"
      " ORDER BY idx",
      {{num(int64_t(id))}});
  for (int i = 0; i < PQntuples(p.get()); i++) {
    PartitionRec q;
    q.index = uint32_t(std::stoul(at(p.get(), i, 0)));
    q.witness = at(p.get(), i, 1);
    q.state = PState(std::stoi(at(p.get(), i, 2)));
    q.attempts = uint32_t(std::stoul(at(p.get(), i, 3)));
    q.error = at(p.get(), i, 4);
    q.proof = at(p.get(), i, 5);
    q.pub = at(p.get(), i, 6);
    q.timings = at(p.get(), i, 7);
    j.parts.push_back(std::move(q));
  }
  return j;
}

std::vector<JobRec> PgStore::list(const std::vector<JState>& states, size_t limit) {
  std::vector<uint64_t> st;
  for (JState s : states) st.push_back(uint64_t(s));
  Result r = exec("SELECT id FROM cuzk_jobs WHERE state = ANY($1::integer[]) ORDER BY id LIMIT $2",
                  {{int_array(st)}, {num(int64_t(std::min<size_t>(limit, INT64_MAX)))}});
  std::vector<JobRec> out;
  for (int i = 0; i < PQntuples(r.get()); i++)
    if (auto j = load(std::stoull(PQgetvalue(r.get(), i, 0)))) out.push_back(std::move(*j));
  return out;
}

JobStore::Counts PgStore::counts() {
  Counts c;
  Result j = exec("SELECT state, count(*) FROM cuzk_jobs GROUP BY state");
  for (int i = 0; i < PQntuples(j.get()); i++) {
    const int s = std::atoi(PQgetvalue(j.get(), i, 0));
    if (s >= 0 && size_t(s) < kJStates) c.jobs[s] = std::stoull(PQgetvalue(j.get(), i, 1));
  }
  Result p = exec("SELECT state, count(*) FROM cuzk_partitions GROUP BY state");
  for (int i = 0; i < PQntuples(p.get()); i++) {
    const int s = std::atoi(PQgetvalue(p.get(), i, 0));
    if (s >= 0 && size_t(s) < kPStates) c.parts[s] = std::stoull(PQgetvalue(p.get(), i, 1));
  }
  return c;
}

// Every change of a job and its partitions locks the job's row first, and only then partition rows:
// one order for all of them, so that reports, cancels and fails never deadlock one another.
std::optional<JState> PgStore::lock_job(uint64_t id) {
  Result r = exec("SELECT state FROM cuzk_jobs WHERE id = $1 FOR UPDATE", {{num(int64_t(id))}});
  if (PQntuples(r.get()) == 0) return std::nullopt;
  return JState(std::atoi(PQgetvalue(r.get(), 0, 0)));
}

// A job's final state; its unfinished partitions are cancelled and the inputs stored for it dropped.
void PgStore::finish_job(uint64_t id, JState st, const std::string& error, int64_t now_ms) {
  exec("UPDATE cuzk_jobs SET state = $2, error = $3, finished_ms = $4 WHERE id = $1",
       {{num(int64_t(id))}, {num(int(st))}, {error}, {num(now_ms)}});
  exec("UPDATE cuzk_partitions SET input = NULL, lease_node = NULL,"
       " state = CASE WHEN state < $2 THEN $3 ELSE state END WHERE job_id = $1",
       {{num(int64_t(id))}, {num(int(PState::Done))}, {num(int(PState::Cancelled))}});
}

CancelOutcome PgStore::cancel(uint64_t id, const std::string& why, int64_t now_ms) {
  return transaction([&] {
    CancelOutcome out;
    const std::optional<JState> st = lock_job(id);
    if (!st) return out;
    out.found = true;
    out.state = *st;
    if (is_final(*st)) return out;
    finish_job(id, JState::Cancelled, why, now_ms);
    out.cancelled = true;
    out.state = JState::Cancelled;
    return out;
  });
}

std::vector<Claimed> PgStore::claim(const std::string& node, const std::vector<std::string>& circuits, size_t n,
                                    uint32_t lease_ms) {
  if (circuits.empty() || n == 0) return {};
  return transaction([&] {
    std::vector<Claimed> out;
    // SKIP LOCKED: partitions another node is claiming in this instant are left to it, never waited for.
    Result r = exec(
        "WITH c AS (SELECT p.job_id, p.idx, p.lease_node IS NOT NULL AS taken_over"
        " FROM cuzk_partitions p JOIN cuzk_jobs j ON j.id = p.job_id"
        " WHERE p.state < $5 AND j.state < $6 AND j.circuit = ANY($2::text[])"
        " AND (p.lease_node IS NULL OR p.lease_expires < now())"
        " ORDER BY j.priority, j.id, p.idx LIMIT $3 FOR UPDATE OF p SKIP LOCKED)"
        " UPDATE cuzk_partitions p SET state = $7, lease_node = $1, lease_epoch = p.lease_epoch + 1,"
        " attempts = p.attempts + CASE WHEN c.taken_over THEN 1 ELSE 0 END,"
        " lease_expires = now() + make_interval(secs => $4::double precision / 1000)"
        " FROM c WHERE p.job_id = c.job_id AND p.idx = c.idx"
        " RETURNING p.job_id, p.idx, c.taken_over, p.witness, p.input, p.attempts, p.error, p.lease_epoch",
        {{node}, {text_array(circuits)}, {num(int64_t(n))}, {num(lease_ms)}, {num(int(PState::Done))},
         {num(int(JState::Done))}, {num(int(PState::Queued))}});
    std::vector<uint64_t> ids;
    for (int i = 0; i < PQntuples(r.get()); i++) {
      Claimed c;
      c.lease.job = std::stoull(PQgetvalue(r.get(), i, 0));
      c.lease.index = uint32_t(std::stoul(PQgetvalue(r.get(), i, 1)));
      c.taken_over = PQgetvalue(r.get(), i, 2)[0] == 't';
      c.lease.epoch = std::stoull(PQgetvalue(r.get(), i, 7));
      PartitionRec p;
      p.index = c.lease.index;
      p.witness = PQgetvalue(r.get(), i, 3);
      if (!PQgetisnull(r.get(), i, 4)) {
        size_t len = 0;
        unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r.get(), i, 4)), &len);
        if (!bytes) throw std::runtime_error("job store (postgresql): out of memory reading a stored input");
        p.content.assign(reinterpret_cast<const char*>(bytes), len);
        PQfreemem(bytes);
      }
      p.attempts = uint32_t(std::stoul(PQgetvalue(r.get(), i, 5)));
      p.error = PQgetvalue(r.get(), i, 6);
      c.job.parts.push_back(std::move(p));
      ids.push_back(c.lease.job);
      out.push_back(std::move(c));
    }
    if (out.empty()) return out;
    const std::string id_list = int_array(ids);
    // Running from the first claim; a job row locked by a report now is left to that report.
    exec("UPDATE cuzk_jobs SET state = $2 WHERE id IN (SELECT id FROM cuzk_jobs WHERE id = ANY($1::bigint[])"
         " AND state = $3 FOR UPDATE SKIP LOCKED)",
         {{id_list}, {num(int(JState::Running))}, {num(int(JState::Queued))}});
    Result j = exec(
        "SELECT id, COALESCE(request_id, ''), circuit, priority, state, created_ms, input_kind,"
        " (SELECT count(*) FROM cuzk_partitions q WHERE q.job_id = j.id) FROM cuzk_jobs j WHERE id = ANY($1::bigint[])",
        {{id_list}});
    for (int i = 0; i < PQntuples(j.get()); i++) {
      const uint64_t id = std::stoull(PQgetvalue(j.get(), i, 0));
      for (Claimed& c : out) {
        if (c.lease.job != id) continue;
        c.job.id = id;
        c.job.request_id = PQgetvalue(j.get(), i, 1);
        c.job.circuit = PQgetvalue(j.get(), i, 2);
        c.job.priority = Priority(std::atoi(PQgetvalue(j.get(), i, 3)));
        c.job.state = JState(std::atoi(PQgetvalue(j.get(), i, 4)));
        c.job.created_ms = std::stoll(PQgetvalue(j.get(), i, 5));
        c.job.input = std::atoi(PQgetvalue(j.get(), i, 6)) == int(InputKind::Inputs) ? InputKind::Inputs
                                                                                       : InputKind::Witnesses;
        c.partitions = uint32_t(std::stoul(PQgetvalue(j.get(), i, 7)));
      }
    }
    return out;
  });
}

std::vector<Lease> PgStore::renew(const std::string& node, const std::vector<Lease>& held, uint32_t lease_ms) {
  if (held.empty()) return {};
  std::vector<uint64_t> jobs, idx, epochs;
  for (const Lease& l : held) jobs.push_back(l.job), idx.push_back(l.index), epochs.push_back(l.epoch);
  Result r = exec(
      "UPDATE cuzk_partitions p SET lease_expires = now() + make_interval(secs => $5::double precision / 1000)"
      " FROM unnest($2::bigint[], $3::integer[], $4::bigint[]) AS h(job_id, idx, epoch)"
      " WHERE p.job_id = h.job_id AND p.idx = h.idx AND p.lease_epoch = h.epoch AND p.lease_node = $1"
      " AND p.state < $6 RETURNING p.job_id, p.idx",
      {{node}, {int_array(jobs)}, {int_array(idx)}, {int_array(epochs)}, {num(lease_ms)}, {num(int(PState::Done))}});
  std::set<std::pair<uint64_t, uint32_t>> kept;
  for (int i = 0; i < PQntuples(r.get()); i++)
    kept.insert({std::stoull(PQgetvalue(r.get(), i, 0)), uint32_t(std::stoul(PQgetvalue(r.get(), i, 1)))});
  std::vector<Lease> lost;
  for (const Lease& l : held)
    if (!kept.count({l.job, l.index})) lost.push_back(l);
  return lost;
}

ReportOutcome PgStore::report(const std::string& node, const Lease& lease, const PartitionRec& p, int64_t now_ms) {
  if (p.state == PState::Cancelled) throw std::invalid_argument("a partition is cancelled with its job (cancel)");
  const bool keeps = p.state != PState::Queued && !is_final(p.state);
  const std::string job = num(int64_t(lease.job));
  return transaction([&] {
    ReportOutcome out;
    const std::optional<JState> st = lock_job(lease.job);
    if (!st) return out;
    out.job = *st;
    Result r = exec(
        "UPDATE cuzk_partitions SET state = $1, attempts = $2, error = $3, proof = $4, public = $5, timings = $6,"
        " lease_node = CASE WHEN $7::boolean THEN lease_node ELSE NULL END,"
        " proved_by = CASE WHEN $1 = $12 THEN $8 ELSE proved_by END"
        " WHERE job_id = $9 AND idx = $10 AND lease_node = $8 AND lease_epoch = $11 AND state < $12",
        {{num(int(p.state))}, {num(p.attempts)}, {p.error}, {p.proof}, {p.pub}, {p.timings},
         {keeps ? "true" : "false"}, {node}, {job}, {num(lease.index)}, {num(int64_t(lease.epoch))},
         {num(int(PState::Done))}});
    if (std::strcmp(PQcmdTuples(r.get()), "0") == 0) {
      // The same result again (its first COMMIT's answer was lost with the connection) is accepted.
      if (p.state == PState::Done) {
        Result d = exec("SELECT 1 FROM cuzk_partitions WHERE job_id = $1 AND idx = $2 AND state = $3"
                        " AND proved_by = $4 AND lease_epoch = $5",
                        {{job}, {num(lease.index)}, {num(int(PState::Done))}, {node}, {num(int64_t(lease.epoch))}});
        out.accepted = out.again = PQntuples(d.get()) > 0;
      }
      return out;
    }
    out.accepted = true;
    if (p.state == PState::Failed) {
      out.job = JState::Failed;
      finish_job(lease.job, out.job, "partition " + std::to_string(lease.index) + ": " + p.error, now_ms);
    } else if (p.state == PState::Done) {
      Result c = exec("SELECT count(*) FROM cuzk_partitions WHERE job_id = $1 AND state <> $2",
                      {{job}, {num(int(PState::Done))}});
      if (std::strcmp(PQgetvalue(c.get(), 0, 0), "0") == 0) finish_job(lease.job, out.job = JState::Done, "", now_ms);
    } else if (*st == JState::Queued) {
      exec("UPDATE cuzk_jobs SET state = $2 WHERE id = $1", {{job}, {num(int(JState::Running))}});
      out.job = JState::Running;
    }
    return out;
  });
}

size_t PgStore::release(const std::string& node) {
  Result r = exec("UPDATE cuzk_partitions SET state = $2, lease_node = NULL WHERE lease_node = $1 AND state < $3",
                  {{node}, {num(int(PState::Queued))}, {num(int(PState::Done))}});
  return size_t(std::stoull(PQcmdTuples(r.get())));
}

std::vector<CircuitRec> PgStore::circuits() {
  Result r = exec("SELECT name, config, added_ms, removed FROM cuzk_circuits ORDER BY seq");
  std::vector<CircuitRec> out;
  for (int i = 0; i < PQntuples(r.get()); i++)
    out.push_back({PQgetvalue(r.get(), i, 0), PQgetvalue(r.get(), i, 1), std::stoll(PQgetvalue(r.get(), i, 2)),
                   PQgetvalue(r.get(), i, 3)[0] == 't'});
  return out;
}

size_t PgStore::forget_removed_circuits() {
  Result r = exec(
      "DELETE FROM cuzk_circuits c WHERE c.removed AND NOT EXISTS"
      " (SELECT 1 FROM cuzk_jobs j WHERE j.circuit = c.name AND j.state IN ($1, $2))",
      {{num(int(JState::Queued))}, {num(int(JState::Running))}});
  return size_t(std::stoull(PQcmdTuples(r.get())));
}

bool PgStore::add_circuit(const CircuitRec& c) {
  forget_removed_circuits();
  Result r = exec("INSERT INTO cuzk_circuits(name, config, added_ms) VALUES($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                  {{c.name}, {c.config}, {num(c.added_ms)}});
  return std::atoi(PQcmdTuples(r.get())) == 1;
}

bool PgStore::remove_circuit(const std::string& name) {
  Result r = exec("UPDATE cuzk_circuits SET removed = true WHERE name = $1 AND NOT removed", {{name}});
  const bool marked = std::atoi(PQcmdTuples(r.get())) == 1;
  forget_removed_circuits();
  return marked;
}

}  // namespace cuzk::sup
