// Portable qualifiers and integer helpers shared by every math template.
// Nothing here may include a host-only library: kernels/ compiles these headers with nvcc.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define CUZK_HD __host__ __device__ __forceinline__
#define CUZK_HDI __host__ __device__
#else
#define CUZK_HD inline
#define CUZK_HDI
#endif

namespace cuzk {

using u32 = uint32_t;
using u64 = uint64_t;
using u128 = unsigned __int128;

// a + b + carry -> (sum, carry out); the basic step of every multi-limb add.
CUZK_HD u64 adc(u64 a, u64 b, u64& carry) {
  u128 t = (u128)a + b + carry;
  carry = (u64)(t >> 64);
  return (u64)t;
}

// a - b - borrow -> (diff, borrow out in {0,1}).
CUZK_HD u64 sbb(u64 a, u64 b, u64& borrow) {
  u128 t = (u128)a - b - borrow;
  borrow = (u64)(t >> 64) & 1;
  return (u64)t;
}

// acc + a*b + carry -> (low, carry = high); never overflows 128 bits.
CUZK_HD u64 mac(u64 acc, u64 a, u64 b, u64& carry) {
  u128 t = (u128)a * b + acc + carry;
  carry = (u64)(t >> 64);
  return (u64)t;
}

CUZK_HD int clz64(u64 x) {
#if defined(__CUDA_ARCH__)
  return __clzll((long long)x);
#else
  return __builtin_clzll(x);
#endif
}

// Plain little-endian multi-limb integer, used for scalars handed to MSMs and scalar multiplication.
template <int N>
struct BigInt {
  u64 l[N];
  CUZK_HD bool is_zero() const {
    u64 acc = 0;
    for (int i = 0; i < N; i++) acc |= l[i];
    return acc == 0;
  }
  CUZK_HD bool bit(int i) const { return (l[i >> 6] >> (i & 63)) & 1; }
  // Bits [pos, pos+width) as an integer; width <= 32. Windows may straddle a limb boundary.
  CUZK_HD u32 bits(int pos, int width) const {
    int li = pos >> 6, sh = pos & 63;
    if (li >= N) return 0;
    u64 v = l[li] >> sh;
    if (sh + width > 64 && li + 1 < N) v |= l[li + 1] << (64 - sh);
    return (u32)(v & ((1ull << width) - 1));
  }
  CUZK_HD int num_bits() const {
    for (int i = N - 1; i >= 0; i--)
      if (l[i]) return i * 64 + 64 - clz64(l[i]);
    return 0;
  }
};

}  // namespace cuzk
