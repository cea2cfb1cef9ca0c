// Small functions that several of the supervisor's files use: the wall clock that stored
// timestamps are in, the release of a libuv handle that the supervisor allocated on the heap, and
// a number out of a worker's "k=v,k=v" text.
#pragma once
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

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

// The number after "key=" in a k=v list (a timeline event's, a worker's hello), or 0 without one.
inline double kv_number(const std::string& kv, const std::string& key) {
  const std::string text = "," + kv, want = "," + key + "=";
  const size_t at = text.find(want);
  return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + want.size(), nullptr);
}

}  // namespace cuzk::sup
