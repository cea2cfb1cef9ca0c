// The radix-4 register passes of the NTT plan (plan.cuh), which NttEngine runs from 2^2 up: kernel
// bodies as host/device functions, like plan.cuh, so that tests/gpu/kernel_emu_test.cpp runs the
// same code on the CPU. Included by ntt/engine.cu, ntt/radix4_passes.cu, the GPU benchmarks and the
// tests, not through engines.cuh, so that a change here recompiles only those.
#pragma once
#include "kernels/ntt/elementwise.cuh"
#include "kernels/ntt/plan.cuh"

namespace cuzk {
namespace gpu {

// Same pass plan, tiles (2^10 elements) and twiddle table as the radix-2 passes (radix2_passes.cuh);
// they differ in four ways, each to do less work per butterfly or per byte moved:
//  1. Fr multiply for the twiddles that uses the shape of BLS12-381's r: r = 1 - 2^32 (mod 2^64), so
//     -r^-1 = -1 (mod 2^32) and the reduction's products m * r_0 and m * r_1 are plain additions
//     (m * 1 = m; m * (2^32 - 1) has low word -m = X_0 and high word m - (X_0 != 0) = X_0 ? ~X_0 : 0):
//     6 word products per reduction row instead of 8, i.e. 224 instead of 256 32-bit multiply-adds.
//  2. Lazy reduction: values between stages and passes are kept in [0, 2p) (2p < 2^256); a product
//     x w with x < 2p and the canonical twiddle w < p is < (2p^2 + 2^256 p) / 2^256 < 2p (BLS12-381:
//     1.91 p, BN254: 1.38 p) without
//     its final conditional subtraction, sums and differences are brought back to [0, 2p) by one
//     conditional subtraction / addition of 2p; the plan's last pass stores canonical values.
//  3. Register sub-rounds of up to R stages (radix 2^R, 2^R elements per thread, tile / 2^R threads):
//     the first sub-round reads device memory, the last writes it, t stages cost ceil(t/R) - 1 round
//     trips through shared memory and barriers instead of t.
//  4. Shared memory as two planes of 16-byte halves (words 0-3, then words 4-7 of every element),
//     so that consecutive threads' 16-byte accesses hit consecutive banks (the 32-byte elements of
//     the radix-2 tile give a 2-way conflict on every access), and 32-bit index arithmetic.
// Twiddle w^0 = 1 (and -1 for the inverse) is read from the table like any other (the table holds
// -1 at e = 2^(kt-1)), except where it is uniform over the whole pass position: in the sub-round at
// row bit 0 of a pass at lo = 0 the row bits below a stage are the thread's own register bits, so
// those butterflies are plain add/sub decided at compile time (the radix-4 unit there needs 1
// multiply instead of 4).

// Radix-4 sub-rounds: 4 elements per thread, 256 threads per 2^10-element tile.
constexpr int kNttRadixBits = 2;

// Words of 2p for the lazy add/sub.
template <class P>
constexpr u32 two_p_word(int j) {
  return (u32)(((P::MOD[j >> 1] << 1) | ((j >> 1) ? P::MOD[(j >> 1) - 1] >> 63 : 0)) >> (32 * (j & 1)));
}
#define CUZK_2P_WORDS(P)                                                                                      \
  two_p_word<P>(0), two_p_word<P>(1), two_p_word<P>(2), two_p_word<P>(3), two_p_word<P>(4), two_p_word<P>(5), \
      two_p_word<P>(6), two_p_word<P>(7)
#if defined(__CUDACC__)
static __constant__ u32 kBlsFr2P32[8] = {CUZK_2P_WORDS(bls12_381::FrParams)};
static __constant__ u32 kBnFr2P32[8] = {CUZK_2P_WORDS(bn254::FrParams)};
#endif
#undef CUZK_2P_WORDS
template <class P>
struct Fr2P;
#if defined(__CUDA_ARCH__)
#define CUZK_2P_WORD(dev, P, j) return dev[j]
#else
#define CUZK_2P_WORD(dev, P, j) return two_p_word<P>(j)
#endif
template <>
struct Fr2P<bls12_381::FrParams> {
  CUZK_HD static u32 word(int j) { CUZK_2P_WORD(kBlsFr2P32, bls12_381::FrParams, j); }
};
template <>
struct Fr2P<bn254::FrParams> {
  CUZK_HD static u32 word(int j) { CUZK_2P_WORD(kBnFr2P32, bn254::FrParams, j); }
};
#undef CUZK_2P_WORD
template <class F>
CUZK_HD u32 fr_2p_word(int j) {
  return Fr2P<typename F::Params>::word(j);
}

// Whether r has the shape fr_reduce_row's r-shaped rows use: r = 1 - 2^32 (mod 2^64), hence
// -r^-1 = -1 (mod 2^32). BLS12-381's r has it; BN254's (r = 0x...f0000001 mod 2^32) does not.
template <class P>
inline constexpr bool kFrRShaped = P::MOD[0] == 0xffffffff00000001ULL && (u32)P::INV == 0xffffffffu;
static_assert(kFrRShaped<bls12_381::FrParams> && !kFrRShaped<bn254::FrParams>);
// The lazy bounds below need 2p < 2^256 (DFp checks p < 2^(64 N - 1)): then 2p^2/2^256 + p < 2p.

// The two Fr multiplies of the passes: DFr's generic reduction rows (8 word products per row), and
// the r-shaped rows below (6 word products and a few additions). Inside the NTT the generic rows are
// the faster ones (ptxas fuses them into wide multiply-adds, fewer ALU instructions); the r-shaped
// rows win only at 2^25 and 2^26 under the 64-register cap of 4 blocks per SM (ntt_radix4_kernel).
constexpr int kFrMulGeneric = 0, kFrMulFast = 1;

// The pass kernel at 2^k: generic rows at 3 blocks per SM, or r-shaped rows at 4 blocks per SM at
// 2^25 and 2^26, the fastest measured at each size on the H200 (docs/PERFORMANCE.md); a field
// without the r shape (kFrRShaped) always takes the generic rows.
enum class NttRadix4Kernel { Generic3, Fast4 };
template <class F>
inline NttRadix4Kernel ntt_radix4_kernel(int k) {
  return kFrRShaped<typename F::Params> && (k == 25 || k == 26) ? NttRadix4Kernel::Fast4 : NttRadix4Kernel::Generic3;
}

// The r-shaped row: m * r_0 and m * r_1 as additions (see 1. above).
template <class F>
CUZK_HD void fr_reduce_row_rshaped(u32* X, u32* Y) {
  static_assert(kFrRShaped<typename F::Params>, "the r-shaped rows need r = 1 - 2^32 mod 2^64");
  using W = typename F::W;
  constexpr int NW = F::NW;
  const u32 x0 = X[0];
  // = -x0, by a multiply with the opaque factor so that the rows below fuse (kBlsFrInv32).
  const u32 m = x0 * W::inv();
  Carry c;
  X[0] = add_cc(x0, m, c);  // m * r_0 = m: the low word becomes 0, carry (x0 != 0)
  X[1] = addc_cc(X[1], 0, c);
CUZK_UNROLL
  for (int j = 2; j < NW; j += 2) {
    X[j] = madc_lo_cc(m, W::mod(j), X[j], c);
    X[j + 1] = madc_hi_cc(m, W::mod(j), X[j + 1], c);
  }
  X[NW] = addc(X[NW], 0, c);
  const u32 hi1 = x0 ? ~x0 : 0u;  // high word of m * (2^32 - 1); its low word is -m = x0
  Carry d;
  Y[0] = add_cc(Y[0], x0, d);
  Y[1] = addc_cc(Y[1], hi1, d);
CUZK_UNROLL
  for (int j = 3; j < NW; j += 2) {
    Y[j - 1] = madc_lo_cc(m, W::mod(j), Y[j - 1], d);
    Y[j] = madc_hi_cc(m, W::mod(j), Y[j], d);
  }
  Y[NW] = addc(Y[NW], 0, d);
}

// One CIOS reduction row of F::operator* (same X/Y even/odd halves); the r-shaped one uses
// r_0 = 1, r_1 = 2^32 - 1.
template <int Mul, class F>
CUZK_HD void fr_reduce_row(u32* X, u32* Y) {
  if constexpr (Mul == kFrMulGeneric) {
    F::reduce_row(X, Y);
  } else {
    fr_reduce_row_rshaped<F>(X, Y);
  }
}

template <int Mul, class F>
struct FrRow {
  CUZK_HD static void apply(u32* X, u32* Y) { fr_reduce_row<Mul, F>(X, Y); }
};

// a * b / 2^256 mod p in [0, 2p), for a < 2p and b < p (no final subtraction): F::operator*'s
// even/odd CIOS with fr_reduce_row<Mul>.
template <int Mul, class F>
CUZK_HD F fr_mul_lazy(const F& aa, const F& bb) {
  return F::template mul_rows<FrRow<Mul, F>>(aa, bb);
}

// a + b for a, b in [0, 2p), result in [0, 2p): the sum (up to 257 bits) minus 2p unless that borrows.
template <class F>
CUZK_HD F fr_add_lazy(const F& a, const F& b) {
  static_assert(F::NW == 8, "the lazy passes are over 8-word fields");
  F s, t;
  Carry c;
  s.w[0] = add_cc(a.w[0], b.w[0], c);
CUZK_UNROLL
  for (int j = 1; j < 8; j++) s.w[j] = addc_cc(a.w[j], b.w[j], c);
  u32 top = addc(0, 0, c);
  Carry d;
  t.w[0] = sub_cc(s.w[0], fr_2p_word<F>(0), d);
CUZK_UNROLL
  for (int j = 1; j < 8; j++) t.w[j] = subc_cc(s.w[j], fr_2p_word<F>(j), d);
  u32 keep = subc(top, 0, d);  // all ones when s < 2p (top = 0 and the subtraction borrowed), else 0
CUZK_UNROLL
  for (int j = 0; j < 8; j++) t.w[j] = (s.w[j] & keep) | (t.w[j] & ~keep);
  return t;
}
// a - b for a, b in [0, 2p), result in [0, 2p): plus 2p when it borrowed.
template <class F>
CUZK_HD F fr_sub_lazy(const F& a, const F& b) {
  F r;
  Carry c;
  r.w[0] = sub_cc(a.w[0], b.w[0], c);
CUZK_UNROLL
  for (int j = 1; j < 8; j++) r.w[j] = subc_cc(a.w[j], b.w[j], c);
  u32 mask = subc(0, 0, c);
  Carry d;
  r.w[0] = add_cc(r.w[0], fr_2p_word<F>(0) & mask, d);
CUZK_UNROLL
  for (int j = 1; j < 7; j++) r.w[j] = addc_cc(r.w[j], fr_2p_word<F>(j) & mask, d);
  r.w[7] = addc(r.w[7], fr_2p_word<F>(7) & mask, d);
  return r;
}

// The tile in shared memory: plane 0 holds words 0-3 of element f at 16-byte slot f, plane 1 words
// 4-7 at slot tile + f.
template <class F>
CUZK_HD F ntt_radix4_sget(const u32* sm, u32 tile, u32 f) {
  F x;
#if defined(__CUDA_ARCH__)
  const uint4* s = reinterpret_cast<const uint4*>(sm);
  uint4 lo = s[f], hi = s[tile + f];
  x.w[0] = lo.x, x.w[1] = lo.y, x.w[2] = lo.z, x.w[3] = lo.w;
  x.w[4] = hi.x, x.w[5] = hi.y, x.w[6] = hi.z, x.w[7] = hi.w;
#else
  for (int i = 0; i < 4; i++) {
    x.w[i] = sm[4 * f + i];
    x.w[4 + i] = sm[4 * (tile + f) + i];
  }
#endif
  return x;
}
template <class F>
CUZK_HD void ntt_radix4_sput(u32* sm, u32 tile, u32 f, const F& x) {
#if defined(__CUDA_ARCH__)
  uint4* s = reinterpret_cast<uint4*>(sm);
  s[f] = make_uint4(x.w[0], x.w[1], x.w[2], x.w[3]);
  s[tile + f] = make_uint4(x.w[4], x.w[5], x.w[6], x.w[7]);
#else
  for (int i = 0; i < 4; i++) {
    sm[4 * f + i] = x.w[i];
    sm[4 * (tile + f) + i] = x.w[4 + i];
  }
#endif
}

// The element-wise step after the passes, fused into the last pass's store (fz, NttScale): the value
// the DIF passes leave at index idx is the natural-order element rev_k(idx), so both scales NttEngine
// applies there are fz.factor(rev_k(idx)): the H stage's table(rev(i)) at i (rev_exponent), and the
// inverse's n^-1 or coset factor of the destination i = rev_k(idx) (permute, with perm_store). Saves
// the separate read and write of the data.
#if defined(__CUDACC__)
// scratch: n elements, needed by a plan whose last pass has perm_store (ntt_radix4_pass_io).
template <class F>
void ntt_radix4_launch(F* d, const F* tw, const NttPass* ps, int np, cudaStream_t s, const NttScale<F>& fz = NttScale<F>(),
                   F* scratch = nullptr);
#endif

// The natural-order DIF plan with the bit reversal in the last pass's store (NttEngine::forward /
// inverse): ntt_plan with perm_store on the last pass (lo = 0). 0 where it does not apply: a
// one-pass plan (the pass would have to run out of place from a copy; those sizes are small).
inline int ntt_radix4_perm_plan(int k, int kt, bool inverse, NttPass* out, int min_passes = 0) {
  int np = ntt_plan(k, kt, inverse, false, out, kNttTileBits, min_passes);
  if (np < 2) return 0;
  out[np - 1].perm_store = true;
  return np;
}

// Source and destination of pass i. In place on d, except around a perm_store pass, which cannot run
// in place: a tile reads the indices whose bits [t, k - g) are its block number (ntt_radix4_gid) and
// writes their reversals, whose bits [g, k - t) are fixed instead: sources of other tiles, which may
// not have read them yet. So the pass before it writes scratch, and the last pass reads scratch and
// writes d (same traffic as in place).
template <class F>
CUZK_HD void ntt_radix4_pass_io(const NttPass* ps, int np, int i, F* d, F* scratch, const F*& src, F*& dst) {
  const bool perm = ps[np - 1].perm_store;
  src = perm && i == np - 1 ? scratch : d;
  dst = perm && i == np - 2 ? scratch : d;
}

CUZK_HD int ntt_radix4_subrounds(int t, int R) { return (t + R - 1) / R; }
// Sub-round sr covers the row bits [s, s + q): DIT from bit 0 up, DIF from bit t down.
CUZK_HD void ntt_radix4_subround_bits(const NttPass& p, int R, int sr, int& s, int& q) {
  int a = R * sr, b = R * sr + R < p.t ? R * sr + R : p.t;
  q = b - a;
  s = p.dit ? a : p.t - b;
}
CUZK_HD u32 ntt_radix4_threads(const NttPass& p, int R) { return ntt_tile_size(p) >> R; }
// A register pass needs at least 2^R elements per tile.
CUZK_HD bool ntt_radix4_fits(int k, int R) { return k >= R; }

// Group gid of local group j (< G) of tile `block`: G consecutive group indices, block << g | j (G
// neighbouring columns at lo > 0, 2^(t+g) consecutive elements at lo = 0), except in a perm_store
// pass (lo = 0, so idx = gid << t | row): there the local groups are the TOP g bits of the group
// index, gid = rev_g(j) << (k-t-g) | block, so that
//   rev_k(idx) = rev_t(row) << (k-t) | rev_{k-t-g}(block) << g | j:
// for a given row the tile's G groups land on G consecutive destinations, local group j (= lane
// j mod G in a sub-round, see ntt_radix4_round_q) at offset j: G x 32 contiguous bytes per row, while
// each group's reads stay 2^t consecutive elements.
CUZK_HD u32 ntt_radix4_gid(const NttPass& p, u32 block, u32 j) {
  if (!p.perm_store) return (block << p.g_log) | j;
  return ((u32)bit_reverse(j, p.g_log) << (p.k - p.t - p.g_log)) | block;
}

// Global index of row `row` of group gid (ntt_index in 32 bits: k <= 28).
CUZK_HD u32 ntt_radix4_index(const NttPass& p, u32 gid, u32 row) {
  u32 low = gid & ((1u << p.lo) - 1), high = gid >> p.lo;
  return (high << (p.lo + p.t)) | (row << p.lo) | low;
}

// Sub-round sr of thread tid in block `block` (tid < ntt_radix4_threads(p, R)): E = 2^R elements, as
// 2^(R-Q) units of 2^Q elements each (Q = this sub-round's stage count); element m of the thread is
// row bits (m mod 2^Q) << s of unit tid + (m >> Q) * threads. A barrier separates sub-rounds; within
// one, every thread reads and writes only its own E tile positions. The unit's local group is
// tid mod G: consecutive lanes take consecutive local groups, i.e. in a perm_store pass's last
// sub-round consecutive destinations (ntt_radix4_gid), runs of G elements per row.
template <int R, int Q, bool DIT, int Mul, class F>
CUZK_HD void ntt_radix4_round_q(const NttPass& p, int s, bool from_global, bool to_global, const F* src, F* dst,
                            u32* sm, const F* tw, u32 block, u32 tid, const NttScale<F>& fz) {
  constexpr int E = 1 << R, U = E >> Q;
  constexpr u32 qmask = (1u << Q) - 1;
  const u32 nthreads = ntt_tile_size(p) >> R, tile = ntt_tile_size(p);
  const u32 G = 1u << p.g_log, lomask = (1u << p.lo) - 1;
  const u32 half = 1u << (p.kt - 1);
  // The sub-round at row bit 0 of a pass at lo = 0: j of a stage is the element's register bits
  // below it, known at compile time (uniform branch).
  const bool reg_twiddles = p.lo == 0 && s == 0;
  u32 rowb[U], lg[U], gid[U];
CUZK_UNROLL
  for (int k = 0; k < U; k++) {
    u32 u = tid + u32(k) * nthreads;
    u32 rest = u >> p.g_log;
    lg[k] = u & (G - 1);
    gid[k] = ntt_radix4_gid(p, block, lg[k]);
    rowb[k] = (rest & ((1u << s) - 1)) | ((rest >> s) << (s + Q));
  }
  F x[E];
CUZK_UNROLL
  for (int m = 0; m < E; m++) {
    const int k = m >> Q;
    u32 row = rowb[k] | ((u32(m) & qmask) << s);
    x[m] = from_global ? load(src + ntt_radix4_index(p, gid[k], row)) : ntt_radix4_sget<F>(sm, tile, row * G + lg[k]);
  }
CUZK_UNROLL
  for (int ci = 0; ci < Q; ci++) {
    const int c = DIT ? ci : Q - 1 - ci;
    const int hb = s + c, b = p.lo + hb;
    const u32 h = 1u << hb;
CUZK_UNROLL
    for (int m = 0; m < E; m++) {
      if (m & (1 << c)) continue;
      const int m1 = m | (1 << c), k = m >> Q;
      F u = x[m], v = x[m1];
      if (reg_twiddles && (m & ((1 << c) - 1)) == 0) {  // w = 1 (forward) or -1 (inverse): plain add/sub
        x[m] = fr_add_lazy(u, v);
        x[m1] = fr_sub_lazy(u, v);
        continue;
      }
      u32 row = rowb[k] | ((u32(m) & qmask) << s);
      u32 j = ((row & (h - 1)) << p.lo) | (gid[k] & lomask);
      u32 e = j << (p.kt - 1 - b);
      F w = load(tw + (p.inverse ? half - e : e));  // inverse: w = -omega^-e (e = 0: -1)
      if (!DIT) {
        x[m] = fr_add_lazy(u, v);
        x[m1] = fr_mul_lazy<Mul>(p.inverse ? fr_sub_lazy(v, u) : fr_sub_lazy(u, v), w);
      } else {
        F t = fr_mul_lazy<Mul>(v, w);
        x[m] = p.inverse ? fr_sub_lazy(u, t) : fr_add_lazy(u, t);
        x[m1] = p.inverse ? fr_add_lazy(u, t) : fr_sub_lazy(u, t);
      }
    }
  }
  const bool canon = to_global && p.last;
  const bool scale = canon && fz.mode != NttScaleMode::None;
CUZK_UNROLL
  for (int m = 0; m < E; m++) {
    const int k = m >> Q;
    u32 row = rowb[k] | ((u32(m) & qmask) << s);
    F y = canon ? F::reduce_once(x[m]) : x[m];
    if (to_global) {
      u32 idx = ntt_radix4_index(p, gid[k], row), nat = (u32)bit_reverse(idx, p.k);
      if (scale) y = y * fz.factor(nat);
      store(dst + (p.perm_store ? nat : idx), y);
    } else
      ntt_radix4_sput(sm, tile, row * G + lg[k], y);
  }
}

template <int R, bool DIT, int Mul, class F>
CUZK_HD void ntt_radix4_round(const NttPass& p, int sr, const F* src, F* dst, u32* sm, const F* tw, u32 block, u32 tid,
                          const NttScale<F>& fz = NttScale<F>()) {
  int s, q;
  ntt_radix4_subround_bits(p, R, sr, s, q);
  const int nsr = ntt_radix4_subrounds(p.t, R);
  const bool fg = sr == 0, tg = sr == nsr - 1;
  if (R >= 3 && q == 3) ntt_radix4_round_q<R, (R >= 3 ? 3 : 1), DIT, Mul, F>(p, s, fg, tg, src, dst, sm, tw, block, tid, fz);
  else if (R >= 2 && q == 2) ntt_radix4_round_q<R, (R >= 2 ? 2 : 1), DIT, Mul, F>(p, s, fg, tg, src, dst, sm, tw, block, tid, fz);
  else ntt_radix4_round_q<R, 1, DIT, Mul, F>(p, s, fg, tg, src, dst, sm, tw, block, tid, fz);
}


}  // namespace gpu
}  // namespace cuzk
