// LoopCalls (loop_calls.hpp).
#include "supervisor/store/loop_calls.hpp"

#include <exception>

#include <spdlog/spdlog.h>

namespace cuzk::sup {

LoopCalls::LoopCalls(uv_loop_t* loop) : loop_(loop) {
  async_.data = this;
  uv_async_init(loop_, &async_, [](uv_async_t* a) { static_cast<LoopCalls*>(a->data)->drain(); });
}

void LoopCalls::post(std::function<void()> fn) {
  if (!fn) return;
  std::lock_guard lk(mu_);  // held while waking the loop, so that close() cannot come in between
  if (closed_) return;
  calls_.push_back(std::move(fn));
  uv_async_send(&async_);
}

void LoopCalls::drain() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard lk(mu_);
    batch.swap(calls_);
  }
  for (auto& fn : batch) {
    try {
      fn();
    } catch (const std::exception& e) {
      // An answer must never take the loop down; what it was doing is logged and dropped.
      spdlog::error("job store: handling an answer: {}", e.what());
    }
  }
}

void LoopCalls::close() {
  {
    std::lock_guard lk(mu_);
    if (closed_) return;
    closed_ = true;
    calls_.clear();
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
}

}  // namespace cuzk::sup
