// The journal's thread (sqlite_journal.hpp): what was queued while the last group was written goes
// into the next one, in one transaction.
#include "supervisor/store/sqlite_journal.hpp"

#include <chrono>

namespace cuzk::sup {

SqliteJournal::SqliteJournal(uv_loop_t* loop, std::unique_ptr<SqliteStore> store)
    : calls_(loop), store_(std::move(store)) {
  held_ = store_->held();
  thread_ = std::thread([this] { main(); });
}

SqliteJournal::~SqliteJournal() { stop(0); }

void SqliteJournal::run(Work work, Failed failed) {
  std::lock_guard lk(mu_);
  ops_.push_back(Op{std::move(work), std::move(failed)});
  cv_.notify_all();
}

uint64_t SqliteJournal::set(uint64_t job, std::vector<PartitionRec> parts, std::optional<SqliteStore::JobChange> state,
                            std::function<void()> then) {
  std::lock_guard lk(mu_);
  changes_.push_back(Change{job, std::move(parts), std::move(state), std::move(then)});
  cv_.notify_all();
  return ++numbered_;
}

void SqliteJournal::flush() {
  std::lock_guard lk(mu_);
  flush_ = true;
  cv_.notify_all();
}

SqliteJournal::Stats SqliteJournal::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

void SqliteJournal::main() {
  std::unique_lock lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return abandon_ || stop_ || flush_ || !ops_.empty() || !changes_.empty(); });
    if (abandon_ || (stop_ && ops_.empty() && changes_.empty())) break;
    std::deque<Op> ops;
    std::deque<Change> changes;
    ops.swap(ops_);
    changes.swap(changes_);
    const uint64_t last = numbered_;
    flush_ = false;
    busy_ = true;
    lk.unlock();
    write(ops, changes, last);
    lk.lock();
    busy_ = false;
    cv_.notify_all();  // stop() waits for what was given before it
  }
}

void SqliteJournal::write(std::deque<Op>& ops, std::deque<Change>& changes, uint64_t last) {
  std::vector<std::function<void()>> thens;
  for (Change& c : changes) {
    store_->stage(c.job, std::move(c.parts), std::move(c.state));
    if (c.then) thens.push_back(std::move(c.then));
  }
  std::vector<std::function<void()>> done(ops.size());
  std::vector<std::exception_ptr> errors(ops.size());
  // The first full or unwritable disk met: why the group could not commit, whatever the commit says
  // (SQLite may have rolled the transaction back already).
  std::exception_ptr full;
  bool committed = false;
  try {
    store_->begin();
    // The held changes first; while they cannot be written, submissions are refused (insert()).
    store_->flush_held();
    // Each call in a savepoint of its own: one that fails is undone alone.
    for (size_t i = 0; i < ops.size(); i++) {
      bool open = false;
      try {
        store_->begin();
        open = true;
        done[i] = ops[i].work(*store_);
        store_->commit();
      } catch (...) {
        errors[i] = std::current_exception();
        if (open) store_->rollback();
        try {
          throw;
        } catch (const StateWriteFailed&) {
          if (!full) full = errors[i];
        } catch (...) {
        }
      }
    }
    store_->commit();
    committed = true;
  } catch (...) {
    store_->rollback();  // the changes are held again
    const std::exception_ptr e = full ? full : std::current_exception();
    for (auto& err : errors)
      if (!err) err = e;
  }
  const size_t held = store_->held();
  held_ = held;
  if (!held) committed_ = last;
  {
    std::lock_guard lk(mu_);
    if (committed) stats_.groups++, stats_.changes += changes.size(), stats_.calls += ops.size();
  }
  for (auto& t : thens) calls_.post(std::move(t));
  for (size_t i = 0; i < ops.size(); i++) {
    if (!errors[i]) {
      calls_.post(std::move(done[i]));
      continue;
    }
    calls_.post([f = std::move(ops[i].failed), e = errors[i]] {
      if (f) f(e);
    });
  }
}

void SqliteJournal::stop(uint32_t timeout_ms) {
  if (!thread_.joinable()) return;
  {
    std::unique_lock lk(mu_);
    stop_ = true;
    cv_.notify_all();
    cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
                 [&] { return ops_.empty() && changes_.empty() && !busy_; });
    abandon_ = true;
    cv_.notify_all();
  }
  calls_.close();
  thread_.join();
}

}  // namespace cuzk::sup
