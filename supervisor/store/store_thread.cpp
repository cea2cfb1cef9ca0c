// The store thread: one queue, one worker thread, and a uv_async that brings results back to the loop.
#include "supervisor/store/store_thread.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

namespace cuzk::sup {

StoreThread::StoreThread(uv_loop_t* loop, std::unique_ptr<JobStore> store) : calls_(loop), store_(std::move(store)) {
  thread_ = std::thread([this] { main(); });
}

StoreThread::~StoreThread() { stop(0); }

void StoreThread::run(Work work, Failed failed) {
  std::lock_guard lk(mu_);
  ops_.push_back(Op{false, std::move(work), std::move(failed)});
  cv_.notify_all();
}

void StoreThread::run_durable(Work work, Failed failed) {
  std::lock_guard lk(mu_);
  ops_.push_back(Op{true, std::move(work), std::move(failed)});
  cv_.notify_all();
}

size_t StoreThread::waiting() const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (const Op& op : ops_) n += op.durable;
  return n;
}

bool StoreThread::execute(Op& op) {
  std::function<void()> then;
  try {
    then = op.work(*store_);
  } catch (const StoreUnavailable& e) {
    if (connected_.exchange(false)) spdlog::error("{}; retrying with backoff, in-flight work goes on", e.what());
    if (op.durable) return false;
    const std::string msg = e.what();
    calls_.post([f = std::move(op.failed), msg] { f(msg); });
    return true;
  } catch (const std::exception& e) {
    const std::string msg = e.what();
    calls_.post([f = std::move(op.failed), msg] { f(msg); });
    then = nullptr;
  }
  if (!connected_.exchange(true)) {
    reconnects_++;
    spdlog::info("job store reachable again");
  }
  calls_.post(std::move(then));
  return true;
}

// Called with mu_ held while the store is unreachable: whatever may not wait is failed now.
void StoreThread::fail_fast_ops() {
  for (auto it = ops_.begin(); it != ops_.end();) {
    if (it->durable) {
      ++it;
      continue;
    }
    calls_.post([f = std::move(it->failed)] { f("the job store cannot be reached now; retry later"); });
    it = ops_.erase(it);
  }
}

void StoreThread::main() {
  using clock = std::chrono::steady_clock;
  auto backoff = std::chrono::milliseconds(100);
  std::unique_lock lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return abandon_ || !ops_.empty() || stop_; });
    if (abandon_ || (stop_ && ops_.empty())) break;
    Op op = std::move(ops_.front());
    ops_.pop_front();
    lk.unlock();
    const bool done = execute(op);
    lk.lock();
    cv_.notify_all();  // stop() waits for the durable work
    if (done) {
      backoff = std::chrono::milliseconds(100);
      continue;
    }
    // Unreachable: the durable op goes back in front; fast ops fail until the backoff has passed.
    ops_.push_front(std::move(op));
    const auto until = clock::now() + backoff;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    while (!abandon_) {
      fail_fast_ops();
      if (!cv_.wait_until(lk, until, [&] {
            if (abandon_) return true;
            for (const Op& o : ops_)
              if (!o.durable) return true;
            return false;
          }))
        break;
    }
  }
}

void StoreThread::stop(uint32_t timeout_ms) {
  if (!thread_.joinable()) return;
  {
    std::unique_lock lk(mu_);
    stop_ = true;
    cv_.notify_all();
    cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] {
      for (const Op& o : ops_)
        if (o.durable) return false;
      return true;
    });
    abandon_ = true;
    cv_.notify_all();
  }
  calls_.close();
  thread_.join();
}

}  // namespace cuzk::sup
