// MSM kernel bodies (Pippenger with signed digits and sorted buckets), as host/device functions of
// one thread's index so that msm.cu's kernels are thin wrappers and the host emulation tests run the
// same code.
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
#pragma once
#include "device_util.cuh"

namespace cuzk {
namespace gpu {

constexpr u32 kMsmNegBit = 0x80000000u;

// The folded plain scalar with its sign in bit 255.
CUZK_HD DFr msm_prepare_scalar(const DFr& mont) {
  DFr k = mont.to_plain();
  // (r-1)/2 compared word by word from the top.
  bool gt = false, decided = false;
CUZK_UNROLL
  for (int j = DFr::NW - 1; j >= 0; j--) {
    u32 h = (DFr::W::mod(j) >> 1) | (j + 1 < DFr::NW ? DFr::W::mod(j + 1) << 31 : 0);
    if (!decided && k.w[j] != h) {
      gt = k.w[j] > h;
      decided = true;
    }
  }
  if (gt) {
    k = -k;  // r - k, since k != 0 here
    k.w[DFr::NW - 1] |= kMsmNegBit;
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

// Scalar bits after folding and the windows they need.
constexpr int kMsmScalarBits = 254;
CUZK_HD int msm_windows(int c) { return (kMsmScalarBits + 1 + c - 1) / c; }

// The digits of one prepared scalar: calls f(key, value) for each nonzero one; returns how many.
template <class Fn>
CUZK_HD int msm_emit(const DFr& prepared, u32 index, int c, Fn&& f) {
  u32 k[8];
CUZK_UNROLL
  for (int j = 0; j < 8; j++) k[j] = prepared.w[j];
  u32 neg = k[7] & kMsmNegBit;
  k[7] &= ~kMsmNegBit;
  int nw = msm_windows(c), count = 0;
  for (int w = 0; w < nw; w++) {
    int d = msm_digit(k, w, c);
    if (d == 0) continue;
    u32 mag = d < 0 ? (u32)-d : (u32)d;
    u32 sign = (d < 0 ? kMsmNegBit : 0) ^ neg;
    f(((u32)w << (c - 1)) | (mag - 1), index | sign);
    count++;
  }
  return count;
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
    acc = acc.add_affine(p);
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

// Task t of a level belongs to bucket b for t in [off[b], off[b] + ntask[b]): written once per
// level so that each task finds its bucket with one load instead of a binary search.
CUZK_HD void msm_task_map(const u32* ntask, const u32* off, u32* map, u32 b) {
  u32 base = off[b], nt = ntask[b];
  for (u32 j = 0; j < nt; j++) map[base + j] = b;
}

}  // namespace gpu
}  // namespace cuzk
