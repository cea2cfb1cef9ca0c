// Large buffers backed by transparent huge pages. Page faults are costly on the virtual machines
// cuzk runs on (several microseconds each), and a 2^16 proof touches ~100 MB of fresh memory: at
// 4 KiB per fault that is ~25k faults, at 2 MiB a few dozen. Only advice: where the kernel has THP
// off (or in "never" mode) the buffers are ordinary memory.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuzk {

// Asks for huge pages on the 2 MiB-aligned part of [p, p + bytes) before it is first touched, then
// maps the whole range in one call (MADV_POPULATE_WRITE, Linux 5.14+; ignored where unknown), so
// that the unaligned ends, up to 2 x 511 small pages, do not fault one by one either.
inline void advise_huge_pages(const void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20, kPage = 4096;
  if (bytes < kHuge) return;
  uintptr_t b = ((uintptr_t)p + kHuge - 1) & ~(kHuge - 1), e = ((uintptr_t)p + bytes) & ~(kHuge - 1);
  if (e > b) ::madvise((void*)b, e - b, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  b = ((uintptr_t)p + kPage - 1) & ~(kPage - 1), e = ((uintptr_t)p + bytes) & ~(kPage - 1);
  if (e > b) ::madvise((void*)b, e - b, MADV_POPULATE_WRITE);
#endif
}

// v.resize(n) on an empty vector, with the new storage advised before the value-initialisation
// touches it (reserve allocates without touching; resize then stays within the reservation).
template <class T>
void resize_huge(std::vector<T>& v, size_t n) {
  if (v.capacity() < n) {
    std::vector<T>().swap(v);
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
  }
  v.resize(n);
}

}  // namespace cuzk
