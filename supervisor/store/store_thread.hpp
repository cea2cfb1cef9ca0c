// The thread that talks to a shared job store, so that a slow or unreachable database never stalls
// the event loop (the API, the workers' heartbeats). Work runs on the thread in the order given; what
// it returns runs back on the loop (uv_async). While the store cannot be reached, work that must
// not be lost (a partition's result, a release of leases) waits and is tried again with backoff; other
// work (reads, claims, submissions) fails at once so that its caller can answer or try later.
#pragma once
#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "supervisor/store/job_store.hpp"
#include "supervisor/store/loop_calls.hpp"

namespace cuzk::sup {

class StoreThread {
 public:
  // Runs on the store thread; returns what to run on the loop afterwards (may be empty).
  using Work = std::function<std::function<void()>(JobStore&)>;
  // Runs on the loop when the work could not be done: the store unreachable, or an error.
  using Failed = std::function<void(const std::string&)>;

  StoreThread(uv_loop_t* loop, std::unique_ptr<JobStore> store);
  ~StoreThread();
  StoreThread(const StoreThread&) = delete;
  StoreThread& operator=(const StoreThread&) = delete;

  // Done now, or failed at once while the store is unreachable.
  void run(Work work, Failed failed);
  // Done as soon as the store can be reached: retried with backoff (0.1 s doubling to 5 s) until then.
  void run_durable(Work work, Failed failed);
  // Waits up to timeout_ms for the durable work queued so far, then ends the thread; the loop must
  // run once more afterwards to close the wake-up handle.
  void stop(uint32_t timeout_ms);

  bool connected() const { return connected_.load(); }
  uint64_t reconnects() const { return reconnects_.load(); }  // times the store was reached again after a loss
  size_t waiting() const;  // durable work not done yet

 private:
  struct Op {
    bool durable;
    Work work;
    Failed failed;
  };
  void main();
  bool execute(Op& op);  // false: the store is unreachable and the durable op must wait
  void fail_fast_ops();  // called with mu_ held

  LoopCalls calls_;
  std::unique_ptr<JobStore> store_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Op> ops_;
  bool stop_ = false, abandon_ = false;
  std::atomic<bool> connected_{true};
  std::atomic<uint64_t> reconnects_{0};
  std::thread thread_;
};

}  // namespace cuzk::sup
