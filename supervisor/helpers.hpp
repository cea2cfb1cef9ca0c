// Small functions that several of the supervisor's files use: the wall clock that stored
// timestamps are in, and the release of a libuv handle that the supervisor allocated on the heap.
#pragma once
#include <uv.h>

#include <chrono>
#include <cstdint>

namespace cuzk::sup {

// Milliseconds since the Unix epoch, for the job store's created/finished stamps. Durations use
// shm::monotonic_ns instead.
inline int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Closes a handle made with `new H` and deletes it once libuv is done with it. Null is ignored.
template <class H>
void close_handle(H* h) {
  if (!h) return;
  uv_close(reinterpret_cast<uv_handle_t*>(h), [](uv_handle_t* x) { delete reinterpret_cast<H*>(x); });
}

}  // namespace cuzk::sup
