// Large buffers backed by transparent huge pages. Page faults are costly on the virtual machines
// cuzk runs on (several microseconds each), and a 2^16 proof touches ~100 MB of fresh memory: at
// 4 KiB per fault that is ~25k faults, at 2 MiB a few dozen. Only advice: where the kernel has THP
// off (or in "never" mode) the buffers are ordinary memory.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
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

// std::allocator, except that a plain resize default-initialises: for the trivial element types of
// cuzk's big buffers (field elements, points, indices) it leaves the memory untouched instead of
// zero-filling it, since every such buffer is overwritten right after. On this project's VMs the
// zero fill of a fresh buffer costs about a millisecond per megabyte.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<std::allocator<T>>::construct(static_cast<std::allocator<T>&>(*this), p,
                                                         std::forward<Args>(args)...);
  }
};

// A vector whose resize leaves trivial elements uninitialised (see DefaultInitAllocator).
template <class T>
using HugeVec = std::vector<T, DefaultInitAllocator<T>>;

// v.resize(n) on an empty vector, with the new storage advised before the value-initialisation
// touches it (reserve allocates without touching; resize then stays within the reservation).
template <class T, class A>
void resize_huge(std::vector<T, A>& v, size_t n) {
  if (v.capacity() < n) {
    std::vector<T, A>().swap(v);
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
  }
  v.resize(n);
}

}  // namespace cuzk
