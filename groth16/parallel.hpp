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

}  // namespace cuzk
