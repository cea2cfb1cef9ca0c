// The one-node job store under a stream of single-partition jobs, as the supervisor drives it: each
// job inserted (its submission's answer waits for that), then its partition stored synthesizing
// (the job running), ready, proving, and done with the job. Reports jobs and store writes per
// second, and the store's CPU cost per job on the calling thread, which is the supervisor's event
// loop, and in the whole process.
//
//   cuzk_store_bench direct|journal [jobs] [in flight]
//
// direct: every write on the calling thread, one transaction each, as the event loop wrote them
// before the journal had a thread (the longest of them is how long the loop was held). journal: through SqliteJournal,
// the loop only queuing and answering; `in flight` jobs at once (clients waiting for their 201).
#include <sys/resource.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "supervisor/store/sqlite_journal.hpp"
#include "supervisor/store/sqlite_store.hpp"

using namespace cuzk::sup;
namespace fs = std::filesystem;

namespace {

double thread_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

JobRec new_job(uint64_t n) {
  JobRec j;
  j.circuit = "bench";
  j.request_id = "bench-" + std::to_string(n);
  j.submitter = "uid:1000";
  PartitionRec p;
  p.witness = "/var/lib/cuzk/uploads/1-" + std::to_string(n) + "/0.wtns";
  j.parts.push_back(p);
  return j;
}

// A proof's texts, about the size of a BN254 one.
const std::string kProof(720, 'p'), kPublic(80, 's'), kTimings(90, 't');
// The insert, and the four changes of partition_life.
constexpr int kWritesPerJob = 5;

// The partition's changes after its job's insert, as the supervisor stores them:
// set(job, partition, job change, whether it is the last).
template <class Set>
void partition_life(const JobRec& j, Set&& set) {
  using Change = std::optional<SqliteStore::JobChange>;
  PartitionRec p = j.parts[0];
  p.state = PState::Synthesizing;
  set(j.id, p, Change(SqliteStore::JobChange{JState::Running, ""}), false);
  p.state = PState::Ready;
  set(j.id, p, Change(), false);
  p.state = PState::Proving;
  set(j.id, p, Change(), false);
  p.state = PState::Done, p.proof = kProof, p.pub = kPublic, p.timings = kTimings;
  set(j.id, p, Change(SqliteStore::JobChange{JState::Done, "", 1}), true);
}

struct Stream {
  SqliteJournal* journal;
  uint64_t total, started = 0, done = 0;
  void submit() {
    if (started == total) return;
    JobRec j = new_job(started++);
    journal->run(
        [this, j](SqliteStore& s) mutable -> std::function<void()> {
          s.insert(j);
          return [this, j]() mutable { progress(j); };
        },
        [](std::exception_ptr) { std::abort(); });
  }
  void progress(JobRec& j) {
    partition_life(j, [&](uint64_t id, const PartitionRec& p, auto change, bool last) {
      journal->set(id, {p}, change, last ? std::function<void()>([this] {
        if (++done < total) submit();
      })
                                         : nullptr);
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "journal";
  const uint64_t jobs = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20000;
  const uint64_t in_flight = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 16;
  char tmpl[] = "/tmp/cuzk-store-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string path = std::string(tmpl) + "/jobs.sqlite";
  auto store = std::make_unique<SqliteStore>(path);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_s(), p0 = process_cpu_s();
  uint64_t groups = 0;
  double longest_write = 0;  // direct: the longest write, all of it on the calling thread
  if (mode == "direct") {
    auto timed = [&](auto&& write) {
      const auto s = std::chrono::steady_clock::now();
      write();
      longest_write = std::max(longest_write, std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
    };
    for (uint64_t n = 0; n < jobs; n++) {
      JobRec j = new_job(n);
      timed([&] { store->insert(j); });
      partition_life(j, [&](uint64_t id, const PartitionRec& p, auto change, bool) {
        timed([&] { store->set(id, {p}, change); });
      });
    }
  } else {
    uv_loop_t loop;
    uv_loop_init(&loop);
    SqliteJournal journal(&loop, std::move(store));
    Stream s{&journal, jobs};
    for (uint64_t i = 0; i < in_flight; i++) s.submit();
    while (s.done < jobs) uv_run(&loop, UV_RUN_ONCE);
    groups = journal.stats().groups;
    journal.stop(10000);
    uv_run(&loop, UV_RUN_NOWAIT);
    uv_loop_close(&loop);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double loop_cpu = thread_cpu_s() - c0, all_cpu = process_cpu_s() - p0;
  const double writes = double(jobs) * kWritesPerJob;
  std::printf("%s: %llu jobs in %.2f s: %.0f jobs/s, %.0f store writes/s; calling (loop) thread %.1f us cpu a job; "
              "process %.1f us cpu a job",
              mode.c_str(), (unsigned long long)jobs, wall, double(jobs) / wall, writes / wall,
              loop_cpu / double(jobs) * 1e6, all_cpu / double(jobs) * 1e6);
  if (longest_write > 0) std::printf("; longest write %.2f ms, on the calling thread", longest_write * 1e3);
  if (groups) std::printf("; %llu commits, %.1f writes each", (unsigned long long)groups, writes / double(groups));
  std::printf("\n");
  fs::remove_all(tmpl);
  return 0;
}
