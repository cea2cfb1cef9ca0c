// The one place where cuzk spreads CPU work over threads. Every threaded loop in the prover,
// setup and generator goes through parallel_for so that --threads governs all of them.
#pragma once
#include <cstddef>
#include <functional>

namespace cuzk {

// Number of worker threads to use; defaults to the CPUs this process may run on.
size_t thread_count();
void set_thread_count(size_t n);

// Calls body(begin, end, chunk_index) over [0, n) split into at most `chunks` contiguous ranges
// (default: thread_count()), one thread each, and waits. Exceptions from a chunk are rethrown.
void parallel_for(size_t n, const std::function<void(size_t, size_t, size_t)>& body, size_t chunks = 0);

// Elements of light work (a few field operations each) that make one chunk worth a thread: a
// thread takes tens of microseconds to start, and milliseconds on a busy machine whose cores are
// all taken, while 2^12 multiplications take a few hundred.
constexpr size_t kLightGrain = size_t(1) << 12;

// parallel_for for light work per element: at most one chunk per `grain` elements, so that the
// small ranges of a small proof run on the calling thread.
void parallel_for_light(size_t n, const std::function<void(size_t, size_t, size_t)>& body, size_t grain = kLightGrain);

}  // namespace cuzk
