// MSM kernel bodies (Pippenger with signed digits and sorted buckets), as host/device functions of
// one thread's index so that msm/engine.cu's kernels are thin wrappers and the host emulation tests
// run the same code.
//
// The pipeline for sum_i k_i P_i, window width c, W windows, B = 2^(c-1) buckets per window:
//  1. prepare: k_i from Montgomery form to a plain integer, folded to [0, (r-1)/2] (k > (r-1)/2
//     becomes r - k with the point negated), so -1, -2, ... cost as little as 1, 2, ... and the top
//     window needs only 254 bits. The fold flag is kept in bit 255.
//  2. emit: for each nonzero signed digit d of k_i in window w, one entry (key = w*B + |d|-1,
//     value = i | sign << 31). Zero scalars and zero digits emit nothing, so witness scalars that are
//     mostly 0, 1 and small values shrink the work to what they actually hold.
//  3. sort entries by key (radix sort), find each bucket's range.
//  4. accumulate: each bucket's range is cut into tasks of at most L0 entries (one thread each,
//     XYZZ mixed additions); buckets with several tasks are summed again in tasks of at most L1
//     partial sums, until one sum per bucket remains. A bucket holding all the 1-scalars of a
//     witness is thereby spread over many threads instead of serialising one.
//  5. reduce each window: sum_b (b+1) S_b by running sums over chunks of K buckets (chunk j gives
//     R_j + jK T_j), then the chunks of a window are summed in a tree.
//  6. host: Horner over windows, sum_w 2^(wc) W_w.
// Over precomputed bases (msm_shifted_copies: the window copies 2^(wc) P_i of fixed key points) a
// "shared" plan sends every window's digits to one set of 2^(c-1) buckets, so steps 5-6 run for a
// single window and wider windows pay off (msm_auto_window_shared).
#pragma once
#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "kernels/device_util.cuh"

namespace cuzk {
namespace gpu {

constexpr u32 kMsmNegBit = 0x80000000u;

// Scalars of every curve are 8 words (r < 2^255 for BLS12-381, < 2^254 for BN254).
constexpr int kMsmScalarWords = 8;

// The folded plain scalar with its sign in bit 255.
template <class Fr>
CUZK_HD Fr msm_prepare_scalar(const Fr& mont) {
  static_assert(Fr::NW == kMsmScalarWords, "MSM scalars are 8 words");
  Fr k = mont.to_plain();
  // (r-1)/2 compared word by word from the top.
  bool gt = false, decided = false;
CUZK_UNROLL
  for (int j = Fr::NW - 1; j >= 0; j--) {
    u32 h = (Fr::W::mod(j) >> 1) | (j + 1 < Fr::NW ? Fr::W::mod(j + 1) << 31 : 0);
    if (!decided && k.w[j] != h) {
      gt = k.w[j] > h;
      decided = true;
    }
  }
  if (gt) {
    k = -k;  // r - k, since k != 0 here
    k.w[Fr::NW - 1] |= kMsmNegBit;
  }
  return k;
}

// Signed Booth digit of window w (width c <= 24): bits [wc-1, wc+c) of k, d = v + b_low - 2^c b_top.
// The digits of windows 0..W-1 sum (times 2^(wc)) to k as long as k < 2^(Wc-1).
CUZK_HD int msm_digit(const u32* k, int w, int c) {
  int pos = w * c - 1, width = c + 1;
  u32 win;
  if (pos < 0) {
    win = (k[0] << 1) & ((1u << width) - 1);
  } else {
    int wi = pos >> 5, sh = pos & 31;
    u32 v = wi < 8 ? k[wi] >> sh : 0;
    if (sh + width > 32 && wi + 1 < 8) v |= k[wi + 1] << (32 - sh);
    win = v & ((1u << width) - 1);
  }
  return (int)(win >> 1) + (int)(win & 1) - (int)((win >> c) << c);
}

// Scalar bits after folding and the windows they need: BLS12-381's folded scalars are < r/2 < 2^254;
// BN254's (< 2^253) take the same windows, at most one digit more than they need.
constexpr int kMsmScalarBits = 254;
CUZK_HD int msm_windows(int c) { return (kMsmScalarBits + 1 + c - 1) / c; }
constexpr int kMsmMinWindow = 4, kMsmMaxWindows = (kMsmScalarBits + kMsmMinWindow) / kMsmMinWindow;

// The sort entry of nonzero digit d of window w of scalar `index` (neg: the scalar's fold flag).
// shared_stride = 0: the key is (window, |d|-1) and the value the point index. shared_stride = s > 0
// (precomputed bases, see msm_shifted_copies): every window uses the same buckets, the key is |d|-1
// and the value is w*s + index, the entry of the window-w copy 2^(wc) P_index.
CUZK_HD void msm_entry(int w, int d, u32 index, u32 neg, int c, u32 shared_stride, u32& key, u32& val) {
  u32 mag = d < 0 ? (u32)-d : (u32)d;
  u32 sign = (d < 0 ? kMsmNegBit : 0) ^ neg;
  if (shared_stride) {
    key = mag - 1;
    val = ((u32)w * shared_stride + index) | sign;
  } else {
    key = ((u32)w << (c - 1)) | (mag - 1);
    val = index | sign;
  }
}

// A prepared scalar's plain words (fold flag cleared) and its fold flag.
template <class Fr>
CUZK_HD u32 msm_scalar_words(const Fr& prepared, u32 (&k)[kMsmScalarWords]) {
CUZK_UNROLL
  for (int j = 0; j < 8; j++) k[j] = prepared.w[j];
  u32 neg = k[7] & kMsmNegBit;
  k[7] &= ~kMsmNegBit;
  return neg;
}

// The digits of one prepared scalar: calls f(key, value) for each nonzero one (msm_entry); returns
// how many.
template <class Fr, class Fn>
CUZK_HD int msm_emit(const Fr& prepared, u32 index, int c, Fn&& f, u32 shared_stride = 0) {
  u32 k[8];
  u32 neg = msm_scalar_words(prepared, k);
  int nw = msm_windows(c), count = 0;
  for (int w = 0; w < nw; w++) {
    int d = msm_digit(k, w, c);
    if (d == 0) continue;
    u32 key, val;
    msm_entry(w, d, index, neg, c, shared_stride, key, val);
    f(key, val);
    count++;
  }
  return count;
}

// (sum_k a_k b_k) / 2^(32 NW) mod p, fully reduced, for K <= 4 and every a_k <= p, b_k < p.
// bw(k, i) returns word i of b_k (called once per (k, row), in row order).
//
// CIOS as in DFp::operator*, with the K products of a row added to the even/odd halves X, Y before
// that row's reduction. Bounds, R = 2^(32 NW): each row adds < K p 2^32 + p 2^32, so T < (K+1) p < R
// between rows; at the end T = (sum + M p)/R < K p^2 / R + p < 2p since K p < R, so one conditional
// subtraction makes it canonical. For K <= 4 that is 5 p < R: BLS12-381's Fq (p < 2^381, R = 2^384)
// and BN254's (p < 0.19 * 2^256, R = 2^256) both.
template <int K, class F, class BW>
CUZK_HD F mont_sum(const F (&a)[K], BW&& bw) {
  using P = typename F::Params;
  constexpr int NW = F::NW;
  static_assert(K >= 1 && K <= 4, "the bound (K+1) p < R is checked for K <= 4");
  static_assert(P::MOD[P::N - 1] < (~u64(0) - 5) / 5, "mont_sum needs 5 p < R");
  u32 X[NW + 1], Y[NW + 1];
  {
    u32 b0 = bw(0, 0);
CUZK_UNROLL
    for (int j = 0; j < NW; j += 2) {
      X[j] = mul_lo(a[0].w[j], b0);
      X[j + 1] = mul_hi(a[0].w[j], b0);
      Y[j] = mul_lo(a[0].w[j + 1], b0);
      Y[j + 1] = mul_hi(a[0].w[j + 1], b0);
    }
    X[NW] = 0;
    Y[NW] = 0;
CUZK_UNROLL
    for (int k = 1; k < K; k++) {
      u32 bk = bw(k, 0);
      F::template mac_half<0>(X, a[k], bk);
      F::template mac_half<1>(Y, a[k], bk);
    }
  }
  F::reduce_row(X, Y);
CUZK_UNROLL
  for (int i = 1; i < NW; i++) {
    u32 Xn[NW + 1], Yn[NW + 1];
    u32 bi = bw(0, i);
    Carry c;
    // T / 2^32: new even half Y + X_1 (word 0), new odd half X >> 64, plus the odd products of a_0.
    Xn[0] = add_cc(Y[0], X[1], c);
CUZK_UNROLL
    for (int j = 1; j < NW - 1; j += 2) {
      Yn[j - 1] = madc_lo_cc(a[0].w[j], bi, X[j + 1], c);
      Yn[j] = madc_hi_cc(a[0].w[j], bi, X[j + 2], c);
    }
    Yn[NW - 2] = madc_lo_cc(a[0].w[NW - 1], bi, X[NW], c);
    Yn[NW - 1] = madc_hi_cc(a[0].w[NW - 1], bi, 0, c);
    Yn[NW] = addc(0, 0, c);
    Carry d;
    Xn[0] = mad_lo_cc(a[0].w[0], bi, Xn[0], d);
    Xn[1] = madc_hi_cc(a[0].w[0], bi, Y[1], d);
CUZK_UNROLL
    for (int j = 2; j < NW; j += 2) {
      Xn[j] = madc_lo_cc(a[0].w[j], bi, Y[j], d);
      Xn[j + 1] = madc_hi_cc(a[0].w[j], bi, Y[j + 1], d);
    }
    Xn[NW] = addc(Y[NW], 0, d);
CUZK_UNROLL
    for (int k = 1; k < K; k++) {
      u32 bk = bw(k, i);
      F::template mac_half<1>(Yn, a[k], bk);
      F::template mac_half<0>(Xn, a[k], bk);
    }
    F::reduce_row(Xn, Yn);
CUZK_UNROLL
    for (int j = 0; j <= NW; j++) {
      X[j] = Xn[j];
      Y[j] = Yn[j];
    }
  }
  return F::reduce_once(F::fold_halves(X, Y));
}

// p - v for v in [0, p): a value in (0, p], a valid first factor of mont_sum (p itself contributes 0).
template <class F>
CUZK_HD F fq_negp(const F& v) {
  F r;
  Carry c;
  r.w[0] = sub_cc(F::W::mod(0), v.w[0], c);
CUZK_UNROLL
  for (int j = 1; j < F::NW - 1; j++) r.w[j] = subc_cc(F::W::mod(j), v.w[j], c);
  r.w[F::NW - 1] = subc(F::W::mod(F::NW - 1), v.w[F::NW - 1], c);
  return r;
}

// madd-2008-s for G1 (XYZZ::add_affine's formulas and results) with Y3 = R (Q - X3) + (p - Y) PPP
// as one two-product sum with a single Montgomery reduction (mont_sum<2>): 2 x 288 + 288 instead of
// 2 x 576 multiply-adds, i.e. 5% of the 10 multiplies of the bucket loop's addition.
template <class C>
CUZK_HD XYZZ<C> g1_add_affine_sum2(const XYZZ<C>& a, const Affine<C>& q) {
  using F = typename C::F;
  static_assert(kIsPrimeField<F>, "the two-product sum is over a prime field");
  if (q.is_inf()) return a;
  if (a.is_inf()) return XYZZ<C>::from_affine(q);
  F p = q.x * a.zz - a.x, rr = q.y * a.zzz - a.y;
  if (p.is_zero()) return rr.is_zero() ? XYZZ<C>::dbl_affine(q) : XYZZ<C>::infinity();
  F pp = p.sqr(), ppp = p * pp, qq = a.x * pp;
  XYZZ<C> r;
  r.x = rr.sqr() - ppp - qq.dbl();
  const F f[2] = {rr, fq_negp(a.y)}, g[2] = {qq - r.x, ppp};
  r.y = mont_sum<2>(f, [&](int k, int i) { return g[k].w[i]; });
  r.zz = a.zz * pp;
  r.zzz = a.zzz * ppp;
  return r;
}

// The bucket loop's mixed addition: g1_add_affine_sum2 for G1.
template <class C>
CUZK_HD XYZZ<C> msm_madd(const XYZZ<C>& a, const Affine<C>& q) {
  if constexpr (kIsPrimeField<typename C::F>)
    return g1_add_affine_sum2(a, q);
  else
    return a.add_affine(q);
}

// Largest b with off[b] <= t (off is an exclusive prefix sum with off[0] = 0): the bucket of task t.
CUZK_HD u32 msm_find_bucket(const u32* off, u32 nb, u32 t) {
  u32 lo = 0, hi = nb;
  while (hi - lo > 1) {
    u32 mid = (lo + hi) >> 1;
    if (off[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// Marks bucket ranges in the sorted keys: start[key] at the first entry, end[key] after the last.
CUZK_HD void msm_bucket_bounds(const u32* keys, u32 m, u32* start, u32* end, u32 i) {
  u32 k = keys[i];
  if (i == 0 || keys[i - 1] != k) start[k] = i;
  if (i + 1 == m || keys[i + 1] != k) end[k] = i + 1;
}

CUZK_HD u32 ceil_div(u32 a, u32 b) { return (a + b - 1) / b; }

// Level-0 task t: sums the affine points of up to L0 sorted entries of one bucket. Entries whose
// index is below idx_offset are skipped (the C MSM covers only the private wires), the others use
// points[index - idx_offset]. Points at infinity add nothing.
template <class C>
CUZK_HD XYZZ<C> msm_acc_entries(const Affine<C>* points, u32 idx_offset, const u32* vals, u32 begin, u32 end) {
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (u32 e = begin; e < end; e++) {
    u32 v = vals[e];
    u32 idx = v & ~kMsmNegBit;
    if (idx < idx_offset) continue;
    Affine<C> p = load(points + (idx - idx_offset));
    if (v & kMsmNegBit) p = -p;
    acc = msm_madd(acc, p);
  }
  return acc;
}

// Level-0 task over shared buckets: value w*n_scalars + i (plus the sign bit) names the window-w copy
// of point i, stored at table[w*stride + i - idx_offset] (stride = points per window copy).
template <class C>
CUZK_HD XYZZ<C> msm_acc_entries_shared(const Affine<C>* table, u32 idx_offset, u32 n_scalars, u32 stride,
                                       const u32* vals, u32 begin, u32 end) {
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (u32 e = begin; e < end; e++) {
    u32 v = vals[e];
    u32 idx = v & ~kMsmNegBit;
    u32 w = idx / n_scalars, i = idx - w * n_scalars;
    if (i < idx_offset) continue;
    Affine<C> p = load(table + ((size_t)w * stride + (i - idx_offset)));
    if (v & kMsmNegBit) p = -p;
    acc = msm_madd(acc, p);
  }
  return acc;
}

template <class C>
CUZK_HD XYZZ<C> msm_acc_partials(const XYZZ<C>* in, u32 begin, u32 end) {
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (u32 e = begin; e < end; e++) acc = xyzz_add(acc, load(in + e));
  return acc;
}

// k * p for a small non-negative k, double-and-add from the top bit.
template <class C>
CUZK_HD XYZZ<C> xyzz_mul_small(const XYZZ<C>& p, u32 k) {
  XYZZ<C> acc = XYZZ<C>::infinity();
  for (int bit = 31; bit >= 0; bit--) {
    acc = xyzz_dbl(acc);
    if ((k >> bit) & 1) acc = xyzz_add(acc, p);
  }
  return acc;
}

// Chunk j of a window (buckets [jK, jK+K), bucket b holding digit b+1):
//   running sums from the top give R = sum (b - jK + 1) S_b and T = sum S_b,
//   and the chunk's share of sum (b+1) S_b is R + jK T.
template <class C>
CUZK_HD XYZZ<C> msm_chunk_sum(const XYZZ<C>* buckets, u32 j, u32 K) {
  XYZZ<C> t = XYZZ<C>::infinity(), r = XYZZ<C>::infinity();
  for (u32 i = K; i-- > 0;) {
    t = xyzz_add(t, load(buckets + (size_t)j * K + i));
    r = xyzz_add(r, t);
  }
  if (j == 0 || t.is_inf()) return r;
  return xyzz_add(r, xyzz_mul_small(t, j * K));
}

// The window width that minimises a cost model fitted to H200 measurements of this pipeline
// (G1, random scalars, 2^20 and 2^24): about 0.54 ns per digit entry (sort + mixed addition) and
// 6 ns per bucket (task setup, finalisation, the chunked running sums), i.e. one bucket costs as
// much as ~11 entries. Witness scalars hold fewer entries, which favours slightly smaller windows;
// the model errs towards fewer buckets.
inline int msm_auto_window(size_t n) {
  int best = 8;
  double best_cost = 1e300;
  for (int c = 8; c <= 22; c++) {
    double w = msm_windows(c);
    double cost = (double)n * w + w * (double)(1u << (c - 1)) * 11.0;
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

// The same model for precomputed bases (msm_shifted_copies): all windows share one set of 2^(c-1)
// buckets, so the bucket term no longer grows with the window count and wider windows pay off.
// Fitted on the H200 (G1 2^24 at c = 20 / 21 / 22: 96.7 / 97.6 / 94.8 ms): ~0.47 ns per entry and
// ~3.8 ns per bucket, i.e. a bucket costs ~8 entries: c = 22 at 2^24 and 2^26.
inline int msm_auto_window_shared(size_t n) {
  int best = 8;
  double best_cost = 1e300;
  for (int c = 8; c <= 22; c++) {
    double w = msm_windows(c);
    double cost = (double)n * w + (double)(1u << (c - 1)) * 8.0;
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

// Bit length of a prepared scalar's plain words (fold flag cleared): 0 for zero, 1 for one, at most
// kMsmScalarBits.
CUZK_HD int msm_bit_length(const u32 (&k)[kMsmScalarWords]) {
  for (int j = kMsmScalarWords - 1; j >= 0; j--)
    if (k[j]) {
#ifdef __CUDA_ARCH__
      return 32 * j + 32 - __clz(k[j]);
#else
      return 32 * j + 32 - __builtin_clz(k[j]);
#endif
    }
  return 0;
}

// Scalars by the bit length of their folded value (hist[b]: how many have b bits, b < 256), which
// tells how many digit entries a plan of any window width will emit: a b-bit value has nonzero
// digits in at most ceil(b / c) windows (Booth's carry can add one; random bits leave a digit zero
// only 2^-c of the time). Witness scalars are mostly 0 (no entry) and 1 (one entry), so their plans
// hold far fewer entries than n * windows, and the best window is narrower than for random scalars.
constexpr int kMsmHistBins = 256;
inline double msm_entries_estimate(const u64* hist, int c) {
  double e = 0;
  for (int b = 1; b < kMsmHistBins; b++)
    if (hist[b]) e += (double)hist[b] * std::min(msm_windows(c), (b + c - 1) / c);
  return e;
}

// An upper bound on the digit entries of every window of width c together: a b-bit value has a
// nonzero digit only in windows w with wc - 1 <= b - 1 (window w reads bits [wc-1, wc+c)), so in at
// most floor(b / c) + 1 of them (one more than msm_entries_estimate counts: Booth's carry). A plan
// whose bound fits its entry cap needs no window batches however many windows it has.
inline size_t msm_entries_bound(const u64* hist, int c) {
  size_t e = 0;
  for (int b = 1; b < kMsmHistBins; b++)
    if (hist[b]) e += (size_t)hist[b] * (size_t)std::min(msm_windows(c), b / c + 1);
  return e;
}

// msm_auto_window's cost model over the estimated entries instead of n * windows. Measured on the
// H200 with porep-profile witness scalars (94% 0/1): the model picks c = 15 at 2^24 and 16 at 2^26,
// the fastest of the swept widths there (16.0 and 49.0 ms, against 19.4 and 122.6 ms at the widths
// n alone gives, 17 and 20); for random scalars it picks what msm_auto_window(n) picks.
inline int msm_auto_window_hist(const u64* hist) {
  int best = 8;
  double best_cost = 1e300;
  for (int c = 8; c <= 22; c++) {
    double w = msm_windows(c);
    double cost = msm_entries_estimate(hist, c) + w * (double)(1u << (c - 1)) * 11.0;
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

// Whether scalars this sparse go faster through a plain plan at msm_auto_window_hist's width than
// through precomputed bases at the tables' width c_shared: when their digits would fill less than a
// quarter of the shared plan's n * windows slots. Measured on the H200 (G1, plain at the histogram's
// width / precomputed at 22): porep witness scalars, 9% of the slots filled, 16.0 / 31.0 ms at 2^24
// and 49.0 / 57.7 ms at 2^26; circom-profile witness scalars and random ones, 40% and more, are faster
// over the tables (61.5 against 67.7 ms and 95.0 against 110.7 ms at 2^24).
inline bool msm_prefer_plain(const u64* hist, size_t n, int c_shared) {
  return msm_entries_estimate(hist, c_shared) < 0.25 * (double)n * msm_windows(c_shared);
}

// Field inversions for the one-time precomputation (Fermat: a^(p-2); Fq2 through the norm).
// inv(0) = 0.
template <class P>
CUZK_HD DFp<P> field_inv(const DFp<P>& a) {
  using F = DFp<P>;
  F r = F::one();
  for (int j = F::NW - 1; j >= 0; j--) {
    u32 e = F::W::mod(j) - (j == 0 ? 2u : 0u);  // p's low word is odd and > 2: no borrow
    for (int b = 31; b >= 0; b--) {
      r = r.sqr();
      if ((e >> b) & 1) r = r * a;
    }
  }
  return r;
}
template <class F, int XiA>
CUZK_HD Fp2<F, XiA> field_inv(const Fp2<F, XiA>& a) {
  F t = field_inv(a.c0 * a.c0 + a.c1 * a.c1);
  return {a.c0 * t, -(a.c1 * t)};
}

// Precomputed bases: the window-w copy of a point is 2^(wc) P, so that digit d of window w adds
// d * 2^(wc) P through bucket |d| shared by all windows, and the per-window reductions and the final
// doublings vanish. Writes out[w*stride] = 2^(wc) p for w < nw (affine; infinity stays infinity):
// c doublings per window in XYZZ, then one inversion for all windows of the point (Montgomery's trick).
constexpr int kMsmMaxSharedWindows = 32;  // c >= 8
template <class C>
CUZK_HD void msm_shifted_copies(const Affine<C>& p, int c, int nw, Affine<C>* out, size_t stride) {
  using F = typename C::F;
  store(out, p);
  if (p.is_inf()) {
    for (int j = 1; j < nw; j++) store(out + j * stride, p);
    return;
  }
  F zz[kMsmMaxSharedWindows], zzz[kMsmMaxSharedWindows], pre[kMsmMaxSharedWindows];
  XYZZ<C> acc = XYZZ<C>::from_affine(p);
  F prod = F::one();
  for (int j = 1; j < nw; j++) {
    for (int b = 0; b < c; b++) acc = xyzz_dbl(acc);
    store(out + j * stride, Affine<C>{acc.x, acc.y});  // X, Y; divided by ZZ, ZZZ below
    zz[j] = acc.zz;
    zzz[j] = acc.zzz;
    prod = prod * acc.zzz;
    pre[j] = prod;
  }
  if (nw < 2) return;
  F inv = field_inv(prod);  // 1 / (ZZZ_1 ... ZZZ_(nw-1))
  for (int j = nw - 1; j >= 1; j--) {
    F iz3 = j > 1 ? inv * pre[j - 1] : inv;  // 1 / ZZZ_j = 1/z^3
    inv = inv * zzz[j];
    F iz2 = (zz[j] * iz3).sqr();  // (z^2 / z^3)^2 = 1/ZZ_j
    Affine<C> a = load(out + j * stride);
    a.x = a.x * iz2;
    a.y = a.y * iz3;
    store(out + j * stride, a);
  }
}

// Task t of a level belongs to bucket b for t in [off[b], off[b] + ntask[b]): written once per
// level so that each task finds its bucket with one load instead of a binary search.
CUZK_HD void msm_task_map(const u32* ntask, const u32* off, u32* map, u32 b) {
  u32 base = off[b], nt = ntask[b];
  for (u32 j = 0; j < nt; j++) map[base + j] = b;
}

}  // namespace gpu
}  // namespace cuzk
