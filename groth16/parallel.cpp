#include "parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cuzk {

static std::atomic<size_t> g_threads{0};

size_t thread_count() {
  size_t n = g_threads.load();
  if (n) return n;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = (size_t)CPU_COUNT(&set);
  if (!n) n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

void set_thread_count(size_t n) { g_threads.store(n); }

void parallel_for(size_t n, const std::function<void(size_t, size_t, size_t)>& body, size_t chunks) {
  if (n == 0) return;
  if (chunks == 0) chunks = thread_count();
  if (chunks > n) chunks = n;
  if (chunks <= 1) {
    body(0, n, 0);
    return;
  }
  std::exception_ptr err;
  std::mutex mu;
  std::vector<std::thread> ts;
  ts.reserve(chunks - 1);
  auto run = [&](size_t c) {
    size_t b = n * c / chunks, e = n * (c + 1) / chunks;
    try {
      body(b, e, c);
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!err) err = std::current_exception();
    }
  };
  for (size_t c = 1; c < chunks; c++) ts.emplace_back(run, c);
  run(0);
  for (auto& t : ts) t.join();
  if (err) std::rethrow_exception(err);
}

void parallel_for_light(size_t n, const std::function<void(size_t, size_t, size_t)>& body, size_t grain) {
  size_t chunks = std::max<size_t>(1, std::min(thread_count(), n / std::max<size_t>(grain, 1)));
  parallel_for(n, body, chunks);
}

}  // namespace cuzk
