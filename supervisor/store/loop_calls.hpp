// Calls from another thread to run on a libuv loop: queued under a mutex, the loop woken by a
// uv_async, run there in the order posted. The store threads (store_thread.hpp, sqlite_journal.hpp)
// bring their answers back this way.
#pragma once
#include <uv.h>

#include <deque>
#include <functional>
#include <mutex>

namespace cuzk::sup {

class LoopCalls {
 public:
  explicit LoopCalls(uv_loop_t* loop);
  LoopCalls(const LoopCalls&) = delete;
  LoopCalls& operator=(const LoopCalls&) = delete;

  // From any thread; nothing once closed. A call that throws is logged and dropped: the loop goes on.
  void post(std::function<void()> fn);
  // On the loop thread: no further calls are taken; the wake-up handle closes as the loop runs once more.
  void close();
  uv_loop_t* loop() const { return loop_; }

 private:
  void drain();

  uv_loop_t* loop_;
  uv_async_t async_{};
  std::mutex mu_;
  std::deque<std::function<void()>> calls_;
  bool closed_ = false;
};

}  // namespace cuzk::sup
