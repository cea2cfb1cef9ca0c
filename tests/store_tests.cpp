// The job store's interface, the same tests against both backends: SQLite (a file in a temporary
// folder) and PostgreSQL (a throwaway server that tests/pg/server.sh starts; its tests are skipped,
// saying why, where no server can start). Leases, claims from several connections at once, results
// only from the lease holder, idempotent submission, cancel, release and the schema version.
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "supervisor/store/pg_store.hpp"
#include "supervisor/store/sqlite_journal.hpp"
#include "supervisor/store/sqlite_store.hpp"
#include "supervisor/store/state_writes.hpp"
#include "supervisor/store/store_thread.hpp"

namespace fs = std::filesystem;
using namespace cuzk::sup;

namespace {

// One PostgreSQL server for the whole run, started on first use and removed at the end.
class PgServer {
 public:
  static PgServer& get() {
    static PgServer s;
    return s;
  }
  const std::string& url() const { return url_; }
  const std::string& skip_reason() const { return why_; }
  ~PgServer() {
    if (!dir_.empty()) std::system((script() + " remove " + dir_ + " >/dev/null 2>&1").c_str());
  }
  // Empties the database: every test starts from no schema at all.
  void reset() const {
    PGconn* c = PQconnectdb(url_.c_str());
    PGresult* r = PQexec(c, "SET client_min_messages = warning;"
                            "DROP TABLE IF EXISTS cuzk_partitions, cuzk_jobs, cuzk_circuits, cuzk_schema_version");
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    const std::string msg = PQerrorMessage(c);
    PQclear(r);
    PQfinish(c);
    if (!ok) throw std::runtime_error("cannot reset the test database: " + msg);
  }
  void exec(const std::string& sql) const {
    PGconn* c = PQconnectdb(url_.c_str());
    PQclear(PQexec(c, sql.c_str()));
    PQfinish(c);
  }

 private:
  static std::string script() { return std::string("bash ") + CUZK_SOURCE_DIR + "/tests/pg/server.sh"; }
  PgServer() {
    char tmpl[] = "/tmp/cuzk-pgt.XXXXXX";
    if (!mkdtemp(tmpl)) {
      why_ = "cannot make a temporary folder";
      return;
    }
    dir_ = tmpl;
    const std::string err = dir_ + ".err";
    FILE* p = popen((script() + " start " + dir_ + " 2>" + err).c_str(), "r");
    char buf[512] = {};
    const bool got = p && std::fgets(buf, sizeof buf, p);
    const int rc = p ? pclose(p) : -1;
    if (got && rc == 0) {
      url_ = buf;
      while (!url_.empty() && (url_.back() == '\n' || url_.back() == '\r')) url_.pop_back();
    } else {
      FILE* e = std::fopen(err.c_str(), "r");
      char line[512] = {};
      why_ = e && std::fgets(line, sizeof line, e) ? line : "tests/pg/server.sh start failed";
      if (e) std::fclose(e);
    }
    std::remove(err.c_str());
  }
  std::string dir_, url_, why_;
};

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (pg()) {
      if (PgServer::get().url().empty()) GTEST_SKIP() << "no PostgreSQL server: " << PgServer::get().skip_reason();
      PgServer::get().reset();
    } else {
      char tmpl[] = "/tmp/cuzk_store_tests.XXXXXX";
      ASSERT_NE(mkdtemp(tmpl), nullptr);
      dir_ = tmpl;
    }
    store_ = open();
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  bool pg() const { return GetParam() == "postgresql"; }
  // Another connection to the same store, as a second node has.
  std::unique_ptr<JobStore> open() const {
    if (pg()) return std::make_unique<PgStore>(PgServer::get().url());
    return std::make_unique<SqliteStore>(dir_ + "/jobs.sqlite");
  }
  JobRec job(const std::string& circuit, int parts, Priority prio = Priority::Normal, const std::string& rid = "") {
    JobRec j;
    j.circuit = circuit;
    j.priority = prio;
    j.request_id = rid;
    j.created_ms = 1000;
    for (int i = 0; i < parts; i++) {
      PartitionRec p;
      p.index = uint32_t(i);
      p.witness = "/in/" + circuit + "-" + std::to_string(i) + ".wtns";
      j.parts.push_back(p);
    }
    EXPECT_TRUE(store_->insert(j));
    return j;
  }
  static PartitionRec done(uint32_t index, const std::string& proof) {
    PartitionRec p;
    p.index = index;
    p.state = PState::Done;
    p.proof = proof;
    p.pub = "[\"1\"]";
    p.timings = "{}";
    return p;
  }
  std::string dir_;
  std::unique_ptr<JobStore> store_;
};

TEST_P(StoreTest, SubmissionIsIdempotentByRequestId) {
  JobRec a = job("merkle", 2, Priority::High, "req-1");
  EXPECT_GT(a.id, 0u);
  JobRec again;
  again.circuit = "merkle";
  again.request_id = "req-1";
  again.parts.resize(5);
  EXPECT_FALSE(store_->insert(again));
  EXPECT_EQ(again.id, a.id);
  EXPECT_EQ(again.state, JState::Queued);
  EXPECT_EQ(store_->find_request("req-1"), std::optional<uint64_t>(a.id));
  EXPECT_EQ(store_->find_request("req-2"), std::nullopt);
  auto loaded = store_->load(a.id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->parts.size(), 2u);  // the retry's five partitions made nothing
  EXPECT_EQ(loaded->priority, Priority::High);
  EXPECT_EQ(loaded->parts[1].witness, "/in/merkle-1.wtns");
  EXPECT_FALSE(store_->load(a.id + 100));
  JobRec b = job("merkle", 1);  // jobs without a request id never collide
  JobRec c = job("merkle", 1);
  EXPECT_NE(b.id, c.id);
  EXPECT_EQ(store_->counts().jobs[int(JState::Queued)], 3u);
  EXPECT_EQ(store_->counts().parts[int(PState::Queued)], 4u);
  EXPECT_EQ(store_->list({JState::Queued}, 2).size(), 2u);
  EXPECT_EQ(store_->list({JState::Done}, 10).size(), 0u);
  // The submitter (who may read the job) is kept with it; "" for jobs from before it was recorded.
  JobRec d;
  d.circuit = "merkle";
  d.submitter = "unix:1000";
  d.parts.resize(1);
  ASSERT_TRUE(store_->insert(d));
  EXPECT_EQ(store_->load(d.id)->submitter, "unix:1000");
  EXPECT_EQ(store_->load(b.id)->submitter, "");
}

TEST_P(StoreTest, ClaimsBestFirstOnlyConfiguredCircuitsNeverTwice) {
  JobRec low = job("merkle", 1, Priority::Low);
  JobRec old = job("merkle", 2, Priority::Normal);
  JobRec other = job("sha", 1, Priority::Critical);
  JobRec urgent = job("merkle", 1, Priority::High);
  auto first = store_->claim("n1", {"merkle"}, 2, 60000);
  ASSERT_EQ(first.size(), 2u);
  // High before Normal; the Critical job is of a circuit n1 does not have.
  EXPECT_EQ(first[0].lease.job, urgent.id);
  EXPECT_EQ(first[1].lease.job, old.id);
  EXPECT_EQ(first[1].lease.index, 0u);
  EXPECT_EQ(first[1].partitions, 2u);
  EXPECT_EQ(first[1].job.circuit, "merkle");
  EXPECT_EQ(first[1].job.parts.at(0).witness, "/in/merkle-0.wtns");
  EXPECT_FALSE(first[0].taken_over);
  EXPECT_EQ(store_->load(old.id)->state, JState::Running);
  auto n2 = open();
  auto second = n2->claim("n2", {"merkle", "sha"}, 10, 60000);
  std::set<std::pair<uint64_t, uint32_t>> got;
  for (auto& c : second) got.insert({c.lease.job, c.lease.index});
  EXPECT_EQ(got, (std::set<std::pair<uint64_t, uint32_t>>{{other.id, 0}, {old.id, 1}, {low.id, 0}}));
  EXPECT_EQ(second[0].lease.job, other.id);  // Critical first
  EXPECT_TRUE(store_->claim("n1", {"merkle", "sha"}, 10, 60000).empty());
}

TEST_P(StoreTest, AnExpiredLeaseGoesToAnotherNodeAndOnlyTheHolderReports) {
  JobRec j = job("merkle", 2);
  auto a = store_->claim("a", {"merkle"}, 1, 300);
  ASSERT_EQ(a.size(), 1u);
  const Lease la = a[0].lease;
  PartitionRec prog;
  prog.index = la.index;
  prog.state = PState::Proving;
  EXPECT_TRUE(store_->report("a", la, prog, 0).accepted);
  EXPECT_EQ(store_->load(j.id)->parts[la.index].state, PState::Proving);
  auto n2 = open();
  EXPECT_EQ(n2->claim("b", {"merkle"}, 5, 300).size(), 1u);  // only the other partition: a's lease is live
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto b = n2->claim("b", {"merkle"}, 5, 60000);
  ASSERT_EQ(b.size(), 2u);  // both leases (a's, and b's own short one) expired
  Lease lb{};
  for (auto& c : b) {
    EXPECT_TRUE(c.taken_over);
    EXPECT_EQ(c.job.parts.at(0).attempts, 1u);  // an expired lease counts as a failed attempt
    if (c.lease.index == la.index) lb = c.lease;
  }
  EXPECT_GT(lb.epoch, la.epoch);
  // a comes back: its renewal says the lease is gone, its result is refused and changes nothing.
  auto lost = store_->renew("a", {la}, 60000);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0], la);
  ReportOutcome ra = store_->report("a", la, done(la.index, "{\"from\":\"a\"}"), 5);
  EXPECT_FALSE(ra.accepted);
  EXPECT_EQ(store_->load(j.id)->parts[la.index].state, PState::Queued);
  EXPECT_TRUE(n2->renew("b", {lb}, 60000).empty());
  ReportOutcome rb = n2->report("b", lb, done(lb.index, "{\"from\":\"b\"}"), 5);
  EXPECT_TRUE(rb.accepted);
  EXPECT_EQ(rb.job, JState::Running);  // one partition left
  const Lease other = b[0].lease == lb ? b[1].lease : b[0].lease;
  ReportOutcome last = n2->report("b", other, done(other.index, "{\"from\":\"b2\"}"), 77);
  EXPECT_TRUE(last.accepted);
  EXPECT_EQ(last.job, JState::Done);
  auto final_job = store_->load(j.id);
  EXPECT_EQ(final_job->state, JState::Done);
  EXPECT_EQ(final_job->finished_ms, 77);
  EXPECT_EQ(final_job->parts[la.index].proof, "{\"from\":\"b\"}");
  // The same result reported twice is recorded once; a late one from a changes nothing.
  EXPECT_FALSE(store_->report("a", la, done(la.index, "{}"), 9).accepted);
  EXPECT_EQ(store_->load(j.id)->parts[la.index].proof, "{\"from\":\"b\"}");
  EXPECT_TRUE(store_->claim("a", {"merkle"}, 5, 300).empty());
}

// Each expiry of a lease counts as a failed attempt, so the node that claims a partition after
// kMaxAttempts expiries fails it instead of proving it again.
TEST_P(StoreTest, ExpiredLeasesCountAsAttempts) {
  JobRec j = job("merkle", 1);
  for (uint32_t i = 0; i <= kMaxAttempts; i++) {
    auto c = store_->claim("n" + std::to_string(i), {"merkle"}, 1, 50);
    ASSERT_EQ(c.size(), 1u) << "claim " << i;
    EXPECT_EQ(c[0].taken_over, i > 0);
    EXPECT_EQ(c[0].job.parts.at(0).attempts, i);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  EXPECT_EQ(store_->load(j.id)->parts[0].attempts, kMaxAttempts);
}

TEST_P(StoreTest, RequeueFailureAndCancel) {
  JobRec j = job("merkle", 3);
  auto c = store_->claim("n", {"merkle"}, 3, 60000);
  ASSERT_EQ(c.size(), 3u);
  PartitionRec back;
  back.index = c[0].lease.index;
  back.state = PState::Queued;
  back.attempts = 1;
  back.error = "worker died";
  EXPECT_TRUE(store_->report("n", c[0].lease, back, 0).accepted);
  auto again = store_->claim("m", {"merkle"}, 3, 60000);  // back in the queue, with its attempts
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].job.parts[0].attempts, 1u);
  EXPECT_EQ(again[0].job.parts[0].error, "worker died");
  PartitionRec bad;
  bad.index = c[1].lease.index;
  bad.state = PState::Failed;
  bad.error = "unsatisfied constraint";
  ReportOutcome f = store_->report("n", c[1].lease, bad, 42);
  EXPECT_TRUE(f.accepted);
  EXPECT_EQ(f.job, JState::Failed);
  auto failed = store_->load(j.id);
  EXPECT_EQ(failed->state, JState::Failed);
  EXPECT_EQ(failed->error, "partition 1: unsatisfied constraint");
  EXPECT_EQ(failed->parts[2].state, PState::Cancelled);
  // The other holders learn it from their renewals, and their results are refused.
  EXPECT_EQ(store_->renew("n", {c[2].lease}, 60000).size(), 1u);
  EXPECT_EQ(store_->renew("m", {again[0].lease}, 60000).size(), 1u);
  EXPECT_FALSE(store_->report("n", c[2].lease, done(2, "{}"), 0).accepted);

  JobRec k = job("merkle", 2);
  auto held = store_->claim("n", {"merkle"}, 1, 60000);
  ASSERT_EQ(held.size(), 1u);
  CancelOutcome co = store_->cancel(k.id, "cancelled by request", 50);
  EXPECT_TRUE(co.found && co.cancelled);
  auto cancelled = store_->load(k.id);
  EXPECT_EQ(cancelled->state, JState::Cancelled);
  EXPECT_EQ(cancelled->error, "cancelled by request");
  for (auto& p : cancelled->parts) EXPECT_EQ(p.state, PState::Cancelled);
  EXPECT_EQ(store_->renew("n", {held[0].lease}, 60000).size(), 1u);
  CancelOutcome twice = store_->cancel(k.id, "x", 60);
  EXPECT_TRUE(twice.found);
  EXPECT_FALSE(twice.cancelled);
  EXPECT_EQ(twice.state, JState::Cancelled);
  EXPECT_FALSE(store_->cancel(k.id + 1000, "x", 0).found);
  EXPECT_TRUE(store_->claim("n", {"merkle"}, 5, 60000).empty());
}

TEST_P(StoreTest, ReleaseQueuesANodesLeasesAndStoredInputsComeWithTheClaim) {
  JobRec j;
  j.circuit = "gen";
  j.input = InputKind::Inputs;
  for (uint32_t i = 0; i < 2; i++) {
    PartitionRec p;
    p.index = i;
    p.content = std::string("{\"a\":\"") + char('1' + i) + "\"}" + std::string("\0\xff", 2);  // any bytes
    j.parts.push_back(p);
  }
  ASSERT_TRUE(store_->insert(j));
  auto c = store_->claim("n", {"gen"}, 2, 60000);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].job.parts[0].content, j.parts[1].content);
  EXPECT_EQ(c[1].job.input, InputKind::Inputs);
  EXPECT_EQ(store_->release("n"), 2u);
  EXPECT_EQ(store_->release("n"), 0u);
  auto again = store_->claim("m", {"gen"}, 2, 60000);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_FALSE(again[0].taken_over);  // released, not expired
  EXPECT_GT(again[0].lease.epoch, c[0].lease.epoch);
}

// Several nodes drain one queue at once, each from its own connection: every partition is claimed
// by exactly one of them, and every job ends Done.
TEST_P(StoreTest, ConcurrentNodesDrainTheQueueOnce) {
  constexpr int kJobs = 40, kParts = 3, kNodes = 4;
  for (int i = 0; i < kJobs; i++) job("merkle", kParts, Priority(i % 4));
  std::mutex mu;
  std::map<std::pair<uint64_t, uint32_t>, int> claims;
  std::atomic<int> errors{0};
  std::vector<std::thread> nodes;
  for (int n = 0; n < kNodes; n++)
    nodes.emplace_back([&, n] {
      try {
        auto s = open();
        const std::string me = "node" + std::to_string(n);
        while (true) {
          auto got = s->claim(me, {"merkle"}, 2, 60000);
          if (got.empty()) break;
          for (auto& c : got) {
            {
              std::lock_guard lk(mu);
              claims[{c.lease.job, c.lease.index}]++;
            }
            if (!s->report(me, c.lease, done(c.lease.index, "{\"n\":" + std::to_string(n) + "}"), 1).accepted) errors++;
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard lk(mu);
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : nodes) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(claims.size(), size_t(kJobs * kParts));
  for (auto& [k, n] : claims) EXPECT_EQ(n, 1) << "job " << k.first << " partition " << k.second;
  EXPECT_EQ(store_->counts().jobs[int(JState::Done)], uint64_t(kJobs));
  EXPECT_EQ(store_->counts().parts[int(PState::Done)], uint64_t(kJobs * kParts));
}

// Circuits added at run time: kept in the order added, one per name, seen by every connection
// (another node). A removed one is kept, marked, while a job of it is unfinished (a restart serves
// it for that job), then forgotten; the jobs stay.
TEST_P(StoreTest, RuntimeCircuitsAreKeptOncePerNameInOrderAndRemovedOnesUntilTheirJobsEnd) {
  EXPECT_TRUE(store_->circuits().empty());
  EXPECT_TRUE(store_->add_circuit({"b", R"({"name":"b","zkey":"/k/b.zkey"})", 2000}));
  EXPECT_TRUE(store_->add_circuit({"a", R"({"name":"a","zkey":"/k/a.zkey"})", 2000}));
  EXPECT_FALSE(store_->add_circuit({"b", R"({"name":"b","zkey":"/k/other.zkey"})", 3000}));
  const JobRec j = job("b", 1);
  auto other = open();
  std::vector<CircuitRec> seen = other->circuits();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "b");
  EXPECT_EQ(seen[0].config, R"({"name":"b","zkey":"/k/b.zkey"})");
  EXPECT_EQ(seen[0].added_ms, 2000);
  EXPECT_EQ(seen[1].name, "a");
  EXPECT_FALSE(seen[0].removed);
  EXPECT_TRUE(other->remove_circuit("b"));
  EXPECT_FALSE(store_->remove_circuit("b"));  // removed already
  EXPECT_EQ(store_->forget_removed_circuits(), 0u);
  seen = store_->circuits();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "b");
  EXPECT_TRUE(seen[0].removed);
  EXPECT_EQ(seen[0].config, R"({"name":"b","zkey":"/k/b.zkey"})");
  EXPECT_FALSE(seen[1].removed);
  EXPECT_FALSE(store_->add_circuit({"b", R"({"name":"b","zkey":"/k/b2.zkey"})", 3500}));  // its job is unfinished
  ASSERT_TRUE(store_->cancel(j.id, "cancelled by request", 3600).cancelled);  // its last job ends
  EXPECT_EQ(other->forget_removed_circuits(), 1u);
  ASSERT_EQ(store_->circuits().size(), 1u);
  EXPECT_EQ(store_->circuits()[0].name, "a");
  EXPECT_TRUE(store_->load(j.id).has_value());
  EXPECT_TRUE(store_->add_circuit({"b", R"({"name":"b","zkey":"/k/b2.zkey"})", 4000}));  // added again, last
  EXPECT_EQ(store_->circuits().back().config, R"({"name":"b","zkey":"/k/b2.zkey"})");
  EXPECT_FALSE(store_->circuits().back().removed);
  // Without unfinished jobs a removed circuit is forgotten at once.
  EXPECT_TRUE(store_->remove_circuit("a"));
  ASSERT_EQ(store_->circuits().size(), 1u);
  EXPECT_EQ(store_->circuits()[0].name, "b");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

// The one-node journal: a partition's change and its job's go in one write, and a restart finds
// what was in flight queued again, the job still running.
TEST(SqliteJournal, APartitionAndItsJobAreWrittenTogether) {
  char tmpl[] = "/tmp/cuzk-journal-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/jobs.sqlite";
  uint64_t id = 0;
  {
    SqliteStore s(path);
    JobRec j;
    j.circuit = "c";
    for (uint32_t i = 0; i < 2; i++) {
      PartitionRec p;
      p.index = i;
      j.parts.push_back(p);
    }
    ASSERT_TRUE(s.insert(j));
    id = j.id;
    j.parts[0].state = PState::Synthesizing;
    s.set(id, {j.parts[0]}, SqliteStore::JobChange{JState::Running, ""});
    std::optional<JobRec> got = s.load(id);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->state, JState::Running);
    EXPECT_EQ(got->parts[0].state, PState::Synthesizing);
    EXPECT_EQ(got->parts[1].state, PState::Queued);
  }
  {
    SqliteStore s(path);
    std::vector<JobRec> left = s.recover();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].state, JState::Running);
    EXPECT_EQ(left[0].parts[0].state, PState::Queued);
    // The end of the job: the partition that ended it, the one it cancels and the job at once.
    PartitionRec failed = left[0].parts[0], cancelled = left[0].parts[1];
    failed.state = PState::Failed, failed.error = "bad witness";
    cancelled.state = PState::Cancelled;
    s.set(id, {failed, cancelled}, SqliteStore::JobChange{JState::Failed, "partition 0: bad witness", 5});
    std::optional<JobRec> got = s.load(id);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->state, JState::Failed);
    EXPECT_EQ(got->finished_ms, 5);
    EXPECT_EQ(got->parts[0].error, "bad witness");
    EXPECT_EQ(got->parts[1].state, PState::Cancelled);
    EXPECT_TRUE(s.recover().empty());
  }
  fs::remove_all(tmpl);
}

// The journal's thread: a commit that waits for a slow disk (the test hook holds each commit
// 400 ms) never holds the loop, what queued up meanwhile goes into one commit, and each answer
// comes back on the loop after the commit that wrote it.
TEST(SqliteJournal, SlowCommitsHoldNeitherTheLoopNorEachOther) {
  char tmpl[] = "/tmp/cuzk-journal-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/jobs.sqlite";
  ::setenv("CUZK_TEST_STORE_COMMIT_DELAY_MS", "400", 1);
  auto store = std::make_unique<SqliteStore>(path);
  ::unsetenv("CUZK_TEST_STORE_COMMIT_DELAY_MS");
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto since = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - t0).count(); };
  {
    SqliteJournal journal(&loop, std::move(store));
    // A timer every 10 ms: the longest gap between its runs is how long the loop was held.
    struct Ticks {
      int64_t last = 0, longest = 0;
      std::function<int64_t()> now;
    } ticks{0, 0, since};
    uv_timer_t timer;
    uv_timer_init(&loop, &timer);
    timer.data = &ticks;
    uv_timer_start(
        &timer,
        [](uv_timer_t* t) {
          auto* k = static_cast<Ticks*>(t->data);
          const int64_t now = k->now();
          k->longest = std::max(k->longest, now - k->last);
          k->last = now;
        },
        10, 10);
    constexpr int kJobs = 20;
    std::vector<uint64_t> ids;
    int answered = 0, changes_answered = 0;
    int64_t first_answer_ms = -1;
    for (int i = 0; i < kJobs; i++) {
      JobRec j;
      j.circuit = "c";
      j.request_id = "r" + std::to_string(i);
      j.parts.resize(1);
      journal.run(
          [&, j](SqliteStore& s) mutable -> std::function<void()> {
            EXPECT_TRUE(s.insert(j));
            return [&, id = j.id] {
              if (first_answer_ms < 0) first_answer_ms = since();
              ids.push_back(id);
              PartitionRec p;
              p.state = PState::Done;
              journal.set(id, {p}, SqliteStore::JobChange{JState::Done, "", 7}, [&] { changes_answered++; });
              if (++answered == kJobs) uv_stop(&loop);
            };
          },
          [](std::exception_ptr) { ADD_FAILURE() << "an insert failed"; });
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    // Inserted by one or two commits of 400 ms each, the loop running all along.
    EXPECT_GE(first_answer_ms, 400);
    EXPECT_EQ(answered, kJobs);
    EXPECT_LE(journal.stats().groups, 2u);
    while (changes_answered < kJobs) uv_run(&loop, UV_RUN_ONCE);
    EXPECT_LE(journal.stats().groups, 4u) << "the jobs' ends took more than two commits";
    EXPECT_EQ(journal.committed(), uint64_t(kJobs));
    EXPECT_EQ(journal.held(), 0u);
    EXPECT_LT(ticks.longest, 150) << "the loop was held while a commit waited for the disk";
    uv_close(reinterpret_cast<uv_handle_t*>(&timer), nullptr);
    journal.stop(1000);
    uv_run(&loop, UV_RUN_NOWAIT);
    // Everything answered is in the file.
    SqliteStore again(path);
    for (uint64_t id : ids) {
      std::optional<JobRec> got = again.load(id);
      ASSERT_TRUE(got);
      EXPECT_EQ(got->state, JState::Done);
      EXPECT_EQ(got->parts[0].state, PState::Done);
    }
    EXPECT_EQ(ids.size(), size_t(kJobs));
  }
  EXPECT_EQ(uv_loop_close(&loop), 0);
  fs::remove_all(tmpl);
}

// A call that fails inside a group is undone alone (a savepoint); the others of the group commit.
TEST(SqliteJournal, ACallThatFailsLeavesTheRestOfItsGroup) {
  char tmpl[] = "/tmp/cuzk-journal-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/jobs.sqlite";
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  {
    SqliteJournal journal(&loop, std::make_unique<SqliteStore>(path));
    int ok = 0, failed = 0;
    for (int i = 0; i < 3; i++)
      journal.run(
          [i](SqliteStore& s) -> std::function<void()> {
            JobRec j;
            j.circuit = "c" + std::to_string(i);
            j.parts.resize(1);
            s.insert(j);
            if (i == 1) throw std::runtime_error("refused after its insert");
            return nullptr;
          },
          [&](std::exception_ptr) { failed++; });
    journal.run([&](SqliteStore&) -> std::function<void()> { return [&] { ok++; }; }, nullptr);
    while (ok + failed < 2) uv_run(&loop, UV_RUN_ONCE);
    journal.stop(1000);
    uv_run(&loop, UV_RUN_NOWAIT);
    EXPECT_EQ(failed, 1);
    SqliteStore again(path);
    std::vector<JobRec> left = again.list({JState::Queued}, 10);
    ASSERT_EQ(left.size(), 2u);
    EXPECT_EQ(left[0].circuit, "c0");
    EXPECT_EQ(left[1].circuit, "c2");
  }
  EXPECT_EQ(uv_loop_close(&loop), 0);
  fs::remove_all(tmpl);
}

// A failed write under the state folder is one kind of error whatever its cause, so that every
// catch site holds it alike; it says whether it was for lack of space, for the log.
TEST(StateWrites, AFailedWriteIsOneKindOfErrorThatSaysWhetherItWasSpace) {
  for (const auto& [err, space] : {std::pair{ENOSPC, true}, {EDQUOT, true}, {EROFS, false}, {EACCES, false}, {EIO, false}}) {
    SCOPED_TRACE(err);
    try {
      throw_write_error("a proof", err);
      ADD_FAILURE() << "nothing thrown";
    } catch (const StateWriteFailed& e) {
      EXPECT_EQ(e.space, space);
      EXPECT_NE(std::string(e.what()).find("a proof"), std::string::npos);
    }
  }
}

// The PostgreSQL schema is created once with its version row, reopened without change, and a
// schema from a newer cuzk is refused rather than misread.
TEST(PgSchema, VersionTableMigratesOnceAndRefusesNewer) {
  if (PgServer::get().url().empty()) GTEST_SKIP() << "no PostgreSQL server: " << PgServer::get().skip_reason();
  PgServer::get().reset();
  const std::string url = PgServer::get().url();
  {
    PgStore a(url), b(url);  // the second finds the schema made
    JobRec j;
    j.circuit = "c";
    j.parts.resize(1);
    ASSERT_TRUE(a.insert(j));
    EXPECT_TRUE(b.load(j.id));
  }
  PGconn* c = PQconnectdb(url.c_str());
  PGresult* r = PQexec(c, "SELECT count(*), max(version) FROM cuzk_schema_version");
  ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
  EXPECT_EQ(std::atoi(PQgetvalue(r, 0, 0)), PgStore::kSchemaVersion);  // each step recorded once
  EXPECT_EQ(std::atoi(PQgetvalue(r, 0, 1)), PgStore::kSchemaVersion);
  PQclear(r);
  PQclear(PQexec(c, "INSERT INTO cuzk_schema_version(version) VALUES(99)"));
  PQfinish(c);
  try {
    PgStore newer(url);
    ADD_FAILURE() << "a store of schema version 99 opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("newer cuzk"), std::string::npos) << e.what();
  }
}

// No server at the address: StoreUnavailable (the daemon waits and retries), not another error.
TEST(PgSchema, AnUnreachableServerIsUnavailable) {
  EXPECT_THROW(PgStore("postgresql://cuzk@/cuzk?host=/nonexistent-cuzk-dir&connect_timeout=2"), StoreUnavailable);
}

// A store that is unreachable while `down` is set, and counts the releases it made.
class FlakyStore final : public JobStore {
 public:
  std::atomic<bool> down{false};
  std::atomic<int> released{0};
  const char* backend() const override { return "flaky"; }
  bool insert(JobRec&) override { return check(), true; }
  std::optional<uint64_t> find_request(const std::string&) override { return check(), std::nullopt; }
  std::optional<JobRec> load(uint64_t) override { return check(), std::nullopt; }
  std::vector<JobRec> list(const std::vector<JState>&, size_t) override { return check(), std::vector<JobRec>{}; }
  Counts counts() override { return check(), Counts{}; }
  CancelOutcome cancel(uint64_t, const std::string&, int64_t) override { return check(), CancelOutcome{}; }
  std::vector<Claimed> claim(const std::string&, const std::vector<std::string>&, size_t, uint32_t) override {
    return check(), std::vector<Claimed>{};
  }
  std::vector<Lease> renew(const std::string&, const std::vector<Lease>&, uint32_t) override {
    return check(), std::vector<Lease>{};
  }
  ReportOutcome report(const std::string&, const Lease&, const PartitionRec&, int64_t) override {
    return check(), ReportOutcome{};
  }
  size_t release(const std::string&) override { return check(), size_t(++released); }
  std::vector<CircuitRec> circuits() override { return check(), std::vector<CircuitRec>{}; }
  bool add_circuit(const CircuitRec&) override { return check(), true; }
  bool remove_circuit(const std::string&) override { return check(), true; }
  size_t forget_removed_circuits() override { return check(), 0; }

 private:
  void check() const {
    if (down) throw StoreUnavailable("flaky store: down");
  }
};

// While the store is unreachable, work that may wait (a result) waits and is done once it is back,
// in order; other work fails at once; every answer runs on the loop's thread.
TEST(StoreThread, DurableWorkWaitsForTheStoreAndFastWorkFailsAtOnce) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  auto owned = std::make_unique<FlakyStore>();
  FlakyStore& store = *owned;
  store.down = true;
  StoreThread t(&loop, std::move(owned));
  const std::thread::id loop_thread = std::this_thread::get_id();
  std::vector<std::string> seen;
  auto durable = [&](const std::string& name) {
    t.run_durable(
        [&, name](JobStore& s) {
          s.release("n");
          return [&, name] {
            EXPECT_EQ(std::this_thread::get_id(), loop_thread);
            seen.push_back(name);
          };
        },
        [&, name](const std::string& why) { seen.push_back(name + " failed: " + why); });
  };
  durable("first");
  durable("second");
  t.run([](JobStore& s) { return s.claim("n", {"c"}, 1, 1000), std::function<void()>(); },
        [&](const std::string&) { seen.push_back("claim refused"); });
  auto spin = [&](auto done) {
    for (int i = 0; i < 1000 && !done(); i++) {
      uv_run(&loop, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  spin([&] { return !seen.empty(); });
  ASSERT_EQ(seen, std::vector<std::string>{"claim refused"});
  EXPECT_FALSE(t.connected());
  EXPECT_EQ(t.waiting(), 2u);
  store.down = false;
  spin([&] { return seen.size() == 3; });
  EXPECT_EQ(seen, (std::vector<std::string>{"claim refused", "first", "second"}));
  EXPECT_EQ(store.released.load(), 2);
  EXPECT_TRUE(t.connected());
  EXPECT_EQ(t.reconnects(), 1u);
  t.stop(1000);
  uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
