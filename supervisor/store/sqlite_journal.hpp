// The writer of the one-node job store, on a thread of its own, so that a commit waiting for a busy
// disk never stalls the event loop (the API, dispatch, the workers' heartbeats). Whatever has queued
// up while one commit ran goes into the next one: one transaction, one commit, for many jobs'
// changes (a group commit). Changes are written in the order given, and calls too; in one group the
// changes go first, so a call that must come after a change is made once that change's answer is
// back (a job's changes all come after the answer to its insert). What a caller must
// not do before its change is in the file (answer a submission, remove a finished job's files) it
// does in the callback, which runs on the loop once the commit is done (uv_async); the loop itself
// never waits. Reads are the caller's, on a connection of its own (WAL: readers never wait for the
// writer).
#pragma once
#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "supervisor/store/loop_calls.hpp"
#include "supervisor/store/sqlite_store.hpp"

namespace cuzk::sup {

class SqliteJournal {
 public:
  // Runs on the journal's thread, inside the group's transaction (its own transactions become
  // savepoints); returns what to run on the loop once the group is committed (may be empty).
  using Work = std::function<std::function<void()>(SqliteStore&)>;
  // Runs on the loop when the work threw, or when its group could not be committed: the exception
  // (StateWriteFailed for a full or unwritable disk), nothing of the work written.
  using Failed = std::function<void(std::exception_ptr)>;

  SqliteJournal(uv_loop_t* loop, std::unique_ptr<SqliteStore> store);
  ~SqliteJournal();
  SqliteJournal(const SqliteJournal&) = delete;
  SqliteJournal& operator=(const SqliteJournal&) = delete;

  void run(Work work, Failed failed);
  // A journal change (SqliteStore::set). It never fails: on a full disk it is held in memory and
  // written with a later group (flush()). then (may be empty) runs on the loop after the group
  // that took it: committed, or held. Returns the change's number (see committed()).
  uint64_t set(uint64_t job, std::vector<PartitionRec> parts,
               std::optional<SqliteStore::JobChange> state = std::nullopt, std::function<void()> then = nullptr);
  // Every change numbered up to this is in the file (none of them held).
  uint64_t committed() const { return committed_.load(); }
  // Changes held for lack of space after the last group.
  size_t held() const { return held_.load(); }
  // Has the thread try the held changes again now.
  void flush();
  // On the loop: writes what was given so far (up to timeout_ms), then ends the thread; the loop
  // must run once more afterwards to close the wake-up handle. Answers not run by then are dropped.
  void stop(uint32_t timeout_ms);

  // Groups committed, and changes and calls written in them: a group averages changes/groups.
  struct Stats {
    uint64_t groups = 0, changes = 0, calls = 0;
  };
  Stats stats() const;

 private:
  struct Op {
    Work work;
    Failed failed;
  };
  struct Change {
    uint64_t job;
    std::vector<PartitionRec> parts;
    std::optional<SqliteStore::JobChange> state;
    std::function<void()> then;
  };
  void main();
  // One group: the changes staged, the held ones written, every call run, one commit; then the answers posted.
  void write(std::deque<Op>& ops, std::deque<Change>& changes, uint64_t last);

  LoopCalls calls_;
  std::unique_ptr<SqliteStore> store_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Op> ops_;
  std::deque<Change> changes_;
  uint64_t numbered_ = 0;  // the last change's number
  bool flush_ = false, stop_ = false, abandon_ = false, busy_ = false;
  Stats stats_;
  std::atomic<uint64_t> committed_{0};
  std::atomic<size_t> held_{0};
  std::thread thread_;
};

}  // namespace cuzk::sup
