// The pass plan of the NTT over a scalar field F (any curve's device Fr), shared by both pass
// kernels (radix2_passes.cuh, radix4_passes.cuh). Host/device code, so that the host emulation tests
// (tests/gpu) run the same index arithmetic without a GPU.
//
// Radix-2 stages grouped into passes of up to kNttMaxPassBits stages. A pass over the index bits
// [lo, lo+t) is a set of independent 2^t-point transforms on elements at stride 2^lo; one block loads
// G such groups (G consecutive "low" values, so the loads coalesce) into shared memory, runs its t
// stages there and writes them back: one read and one write of the data per pass instead of per
// stage.
//  - DIF (Gentleman-Sande) passes, high bits first, take natural order to bit-reversed order;
//    stage at bit b: (u, v) -> (u + v, (u - v) w^j).
//  - DIT (Cooley-Tukey) passes, low bits first, take bit-reversed order to natural order;
//    stage at bit b: (u, v) -> (u + w^j v, u - w^j v).
// In both, j is the part of the element's index below bit b and w^j = omega_{2^(b+1)}^j is read
// from one table of omega_{2^kt}^e, e < 2^(kt-1), at e = j * 2^(kt-1-b). The inverse transform uses
// omega^-e = -omega^(2^(kt-1) - e) from the same table, folding the sign into the butterfly.
#pragma once
#include <algorithm>

#include "kernels/device_util.cuh"

namespace cuzk {
namespace gpu {

constexpr int kNttMaxPasses = 8;     // NttPass arrays of the callers
constexpr int kNttMaxPassBits = 10;  // stages per pass; 2^10 Fr = 32 KB of shared memory per group
constexpr int kNttTileBits = 10;     // elements per block (G groups of 2^t)
constexpr int kMaxNttLog = 28;       // the twiddle table of 2^27 Fr is 4 GiB; 32-bit indices (ntt_radix4_index)

// The largest transform over Fr: kMaxNttLog, and no more than the field's two-adicity (BN254: 28,
// BLS12-381: 32); coset: the shift g = omega_{2n} needs one more power of two (BN254: 2^27).
template <class FrParams>
constexpr int ntt_max_log(bool coset) {
  return FrParams::TWO_ADICITY - (coset ? 1 : 0) < kMaxNttLog ? FrParams::TWO_ADICITY - (coset ? 1 : 0) : kMaxNttLog;
}

struct NttPass {
  int k;      // log2 of the transform size
  int lo, t;  // this pass covers the index bits [lo, lo + t)
  int g_log;  // log2 of the groups per block
  int kt;     // the twiddle table holds omega_{2^kt}^e for e < 2^(kt-1) (and -1 at e = 2^(kt-1))
  bool inverse, dit;
  bool last = false;  // the plan's last pass (the radix-4 passes leave values in [0, 2p) until then)
  bool perm_store = false;  // radix-4, last DIF pass: stores index i at rev_k(i) (ntt_radix4_perm_plan)
};

CUZK_HD size_t ntt_blocks(const NttPass& p) { return (size_t(1) << (p.k - p.t)) >> p.g_log; }
CUZK_HD u32 ntt_tile_size(const NttPass& p) { return 1u << (p.t + p.g_log); }

// Global index of row r of group gid: the group's low bits below lo, r in the active bits, the
// remaining high bits above.
CUZK_HD size_t ntt_index(const NttPass& p, size_t gid, u32 r) {
  size_t low = gid & ((size_t(1) << p.lo) - 1), high = gid >> p.lo;
  return (high << (p.lo + p.t)) | (size_t(r) << p.lo) | low;
}

CUZK_HD size_t bit_reverse(size_t i, int k) {
#if defined(__CUDA_ARCH__)
  return k == 0 ? 0 : (size_t)(__brevll((unsigned long long)i) >> (64 - k));
#else
  size_t r = 0;
  for (int b = 0; b < k; b++) r |= ((i >> b) & 1) << (k - 1 - b);
  return r;
#endif
}

// Splits k stages into passes of at most kNttMaxPassBits, as even as possible; DIF passes run from
// the high bits down, DIT passes from the low bits up. tile_bits: log2 of the elements per block.
// min_passes: more, shorter passes than the fewest; a pass of t stages at lo > 0 reads runs of
// G = 2^(tile_bits - t) consecutive elements, so 4 passes of 6 at 2^24 read 512-byte runs where 3 of
// 8 read 128 bytes, for one more read and write of the data.
inline int ntt_plan(int k, int kt, bool inverse, bool dit, NttPass* out, int tile_bits = kNttTileBits,
                    int min_passes = 0) {
  int np = std::max((k + kNttMaxPassBits - 1) / kNttMaxPassBits, std::min(min_passes, std::min(k, kNttMaxPasses)));
  int base = k / np, extra = k % np;
  int lo = dit ? 0 : k;
  for (int i = 0; i < np; i++) {
    int t = base + (i < extra ? 1 : 0);
    NttPass p;
    p.k = k;
    p.t = t;
    p.kt = kt;
    p.inverse = inverse;
    p.dit = dit;
    if (dit) {
      p.lo = lo;
      lo += t;
    } else {
      lo -= t;
      p.lo = lo;
    }
    int g = tile_bits - t;
    if (g > k - t) g = k - t;
    p.g_log = g < 0 ? 0 : g;
    p.last = i == np - 1;
    out[i] = p;
  }
  return np;
}

}  // namespace gpu
}  // namespace cuzk
