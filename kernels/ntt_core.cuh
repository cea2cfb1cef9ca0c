// NTT kernel bodies over a scalar field F (any curve's device Fr), written as host/device functions
// of (block, thread) so that the CUDA kernels in ntt.cu are thin wrappers and the exact same index
// arithmetic runs in the host emulation tests (tests/gpu) without a GPU.
//
// Algorithm: radix-2 stages grouped into passes of up to kNttMaxPassBits stages. A pass over the
// index bits [lo, lo+t) is a set of independent 2^t-point transforms on elements at stride 2^lo;
// one block loads G such groups (G consecutive "low" values, so the loads coalesce) into shared
// memory, runs its t stages there and writes them back: one read and one write of the data per
// pass instead of per stage.
//  - DIF (Gentleman-Sande) passes, high bits first, take natural order to bit-reversed order;
//    stage at bit b: (u, v) -> (u + v, (u - v) w^j).
//  - DIT (Cooley-Tukey) passes, low bits first, take bit-reversed order to natural order;
//    stage at bit b: (u, v) -> (u + w^j v, u - w^j v).
// In both, j is the part of the element's index below bit b and w^j = omega_{2^(b+1)}^j is read
// from one table of omega_{2^kt}^e, e < 2^(kt-1), at e = j * 2^(kt-1-b). The inverse transform uses
// omega^-e = -omega^(2^(kt-1) - e) from the same table, folding the sign into the butterfly.
#pragma once
#include <algorithm>

#include "device_util.cuh"

namespace cuzk {
namespace gpu {

constexpr int kNttMaxPasses = 8;     // NttPass arrays of the callers
constexpr int kNttMaxPassBits = 10;  // stages per pass; 2^10 Fr = 32 KB of shared memory per group
constexpr int kNttTileBits = 10;     // elements per block (G groups of 2^t)
constexpr int kNttThreads = 256;
constexpr int kMaxNttLog = 28;       // the twiddle table of 2^27 Fr is 4 GiB; 32-bit indices (ntt_v2_index)

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
  bool last = false;  // the plan's last pass (the v2 passes leave values in [0, 2p) until then)
  bool perm_store = false;  // v2, last DIF pass: stores index i at rev_k(i) (ntt_v2_perm_plan)
};

CUZK_HD size_t ntt_blocks(const NttPass& p) { return (size_t(1) << (p.k - p.t)) >> p.g_log; }
CUZK_HD u32 ntt_tile_size(const NttPass& p) { return 1u << (p.t + p.g_log); }

// Global index of row r of group gid: the group's low bits below lo, r in the active bits, the
// remaining high bits above.
CUZK_HD size_t ntt_index(const NttPass& p, size_t gid, u32 r) {
  size_t low = gid & ((size_t(1) << p.lo) - 1), high = gid >> p.lo;
  return (high << (p.lo + p.t)) | (size_t(r) << p.lo) | low;
}

// Shared-memory layout: row-major by r, so that consecutive threads touch consecutive groups.
template <class F>
CUZK_HD void ntt_tile_load(const NttPass& p, const F* data, F* smem, size_t block, u32 tid, u32 nthreads) {
  u32 total = ntt_tile_size(p), gmask = (1u << p.g_log) - 1;
  for (u32 f = tid; f < total; f += nthreads)
    smem[f] = load(data + ntt_index(p, (block << p.g_log) + (f & gmask), f >> p.g_log));
}
template <class F>
CUZK_HD void ntt_tile_store(const NttPass& p, F* data, const F* smem, size_t block, u32 tid, u32 nthreads) {
  u32 total = ntt_tile_size(p), gmask = (1u << p.g_log) - 1;
  for (u32 f = tid; f < total; f += nthreads)
    store(data + ntt_index(p, (block << p.g_log) + (f & gmask), f >> p.g_log), smem[f]);
}

// Stage st of the pass (0-based, in execution order) on the tile in shared memory.
template <class F>
CUZK_HD void ntt_tile_stage(const NttPass& p, F* smem, const F* tw, size_t block, int st, u32 tid,
                            u32 nthreads) {
  const u32 G = 1u << p.g_log;
  const int hb = p.dit ? st : p.t - 1 - st;  // the butterfly distance 2^hb, in rows
  const u32 h = 1u << hb;
  const int b = p.lo + hb;  // the global index bit this stage works on
  const size_t half_table = size_t(1) << (p.kt - 1);
  const u32 npairs = (G << p.t) >> 1;
  for (u32 q = tid; q < npairs; q += nthreads) {
    u32 g = q & (G - 1), pr = q >> p.g_log;
    u32 r0 = ((pr >> hb) << (hb + 1)) | (pr & (h - 1));
    size_t gid = (block << p.g_log) + g;
    size_t j = (size_t(r0 & (h - 1)) << p.lo) | (gid & ((size_t(1) << p.lo) - 1));
    F* pu = smem + r0 * G + g;
    F* pv = pu + h * G;
    F u = *pu, v = *pv;
    if (j == 0) {  // w^0 = 1 in both directions
      *pu = u + v;
      *pv = u - v;
      continue;
    }
    size_t e = j << (p.kt - 1 - b);
    F w = load(tw + (p.inverse ? half_table - e : e));  // inverse: w = -omega^-e
    if (!p.dit) {
      *pu = u + v;
      *pv = p.inverse ? (v - u) * w : (u - v) * w;
    } else {
      F t = v * w;
      *pu = p.inverse ? u - t : u + t;
      *pv = p.inverse ? u + t : u - t;
    }
  }
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

// c * g^e from two small tables: lo[e mod 2^lo_bits] (with the constant c folded in) times
// hi[e >> lo_bits]; one multiply per element instead of a table of the whole size.
template <class F>
struct PowTable {
  const F* lo = nullptr;
  const F* hi = nullptr;
  int lo_bits = 0;
  CUZK_HD F at(size_t e) const {
    return load(lo + (e & ((size_t(1) << lo_bits) - 1))) * load(hi + (e >> lo_bits));
  }
};

// The element-wise step around the passes:
//  permute: natural <-> bit-reversed order (in place, by swapping each pair once);
//  scale: multiply the element that ends at index i by table(i), or by table(rev(i)) when
//  rev_exponent (the H stage scales in bit-reversed order).
struct NttScaleMode {
  enum Mode { None, Constant, Table };
};
template <class F>
struct NttScale : NttScaleMode {
  bool permute = false;
  Mode mode = None;
  bool rev_exponent = false;
  F constant;  // Constant mode: every element times this
  PowTable<F> table;
  CUZK_HD F factor(size_t e) const { return mode == Constant ? constant : table.at(e); }
};

template <class F>
CUZK_HD void ntt_scale_elem(F* data, int k, const NttScale<F>& s, size_t i) {
  if (!s.permute) {
    if (s.mode == NttScaleMode::None) return;
    F x = load(data + i);
    store(data + i, x * s.factor(s.rev_exponent ? bit_reverse(i, k) : i));
    return;
  }
  size_t j = bit_reverse(i, k);
  if (j < i) return;  // the pair is handled from its smaller index
  F a = load(data + i), b = load(data + j);
  if (s.mode != NttScaleMode::None) {
    b = b * s.factor(i);
    if (j != i) a = a * s.factor(j);
  }
  store(data + i, b);
  if (j != i) store(data + j, a);
}

// h = a*b - c, element-wise (the quotient numerator on the coset).
template <class F>
CUZK_HD void h_combine_elem(F* a, const F* b, const F* c, size_t i) {
  store(a + i, load(a + i) * load(b + i) - load(c + i));
}

// Bit-reversal permutation (with the optional per-element scale of NttScale, permute = true) by
// tiles, for k >= 2 kPermBits: index i = (a, m, c) with a the top and c the bottom kPermBits bits;
// rev(i) = (rev c, rev m, rev a). Block m (taken when m <= rev m) loads the two 16 x 16 tiles
// {(a, m, c)} and {(a, rev m, c)} with rows of 16 consecutive elements (coalesced), and writes each
// position from the other tile's transposed, bit-reversed position: one read and one write of the
// data, in 512-byte runs, instead of scattered 32-byte accesses.
constexpr int kPermBits = 4;
constexpr u32 kPermSide = 1u << kPermBits;
constexpr u32 kPermStride = kPermSide + 1;  // padded rows: fewer bank conflicts on the transposed read
constexpr u32 kPermThreads = kPermSide * kPermSide;
CUZK_HD size_t ntt_perm_blocks(int k) { return size_t(1) << (k - 2 * kPermBits); }
// Phase 0: load both tiles into tA, tB (kPermSide * kPermStride each); phase 1 (after a barrier): store.
template <class F>
CUZK_HD void ntt_perm_tile(F* data, int k, const NttScale<F>& s, F* tA, F* tB, size_t block, u32 tid, int phase) {
  const int mb = k - 2 * kPermBits;
  size_t m = block, mr = bit_reverse(m, mb);
  if (mr < m) return;
  u32 a = tid >> kPermBits, c = tid & (kPermSide - 1);
  size_t iA = (size_t(a) << (k - kPermBits)) | (m << kPermBits) | c;
  size_t iB = (size_t(a) << (k - kPermBits)) | (mr << kPermBits) | c;
  if (phase == 0) {
    tA[a * kPermStride + c] = load(data + iA);
    if (mr != m) tB[a * kPermStride + c] = load(data + iB);
    return;
  }
  u32 ra = (u32)bit_reverse(a, kPermBits), rc = (u32)bit_reverse(c, kPermBits);
  F* src = mr != m ? tB : tA;  // position (a, m, c) takes (rev c, rev m, rev a)
  F vA = src[rc * kPermStride + ra];
  if (s.mode != NttScaleMode::None) vA = vA * s.factor(iA);
  store(data + iA, vA);
  if (mr != m) {
    F vB = tA[rc * kPermStride + ra];
    if (s.mode != NttScaleMode::None) vB = vB * s.factor(iB);
    store(data + iB, vB);
  }
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
