// Batch-affine bucket accumulation, as host/device functions of one thread's index (msm.cu's
// kernels are thin wrappers; the host emulation tests run the same code). One template for G1 and
// G2: over Fq2 the products are Fq2 products and the one inversion goes through the norm.
//
// Why: the XYZZ bucket loop pays a mixed addition per digit entry, 8M + 2S with one reduction saved
// (g1_add_affine_sum2), about 9.5 Fq products. An affine addition whose slope denominator is inverted
// together with many others (Montgomery's trick) costs 2M + 1S for the sum and 3M for its share of
// the trick (its prefix product, and two products on the way back), plus the inversion spread over
// the whole batch: about 6.3. The price is memory: the sums and prefix products go through global
// memory (~500 bytes per addition, against ~100 for the register-resident XYZZ loop) and the
// inversion is a short serial chain per round.
//
// The accumulation runs in rounds. In round r, bucket b holds cnt[b] points at [off[b], off[b] +
// cnt[b]) of the round's input (round 0: the plan's sorted entries, read through their values, see
// MsmEntryPoints; later rounds: the previous round's output). Its floor(cnt/2) pairs (2i, 2i+1) are
// summed into the output at noff[b] + i, and an odd last point is copied to noff[b] + cnt/2, so the
// next round holds ceil(cnt/2) points per bucket; ceil(log2(max cnt)) rounds leave each bucket one
// point or none. A round's P pairs are numbered bucket by bucket (pair q belongs to the bucket with
// poff[b] <= q < poff[b] + cnt[b]/2, map[q] = b).
//
// Montgomery's trick over a round runs on T lanes: lane l takes the pairs l, l + T, l + 2T, ... (so a
// warp's loads are adjacent pairs). The product pass stores each pair's prefix (the product of the
// lane's earlier denominators) and the lane's product. The lane products are folded in groups of G
// up a few levels, each storing its prefixes, until one group is left; one thread inverts that
// group's product (field_inv) and walks its prefixes back, each level below does the same from its
// groups' inverses, and the apply pass walks each lane's pairs backwards: inv_q = inv * prefix_q,
// inv = inv * d_q, and finishes pair q's sum with inv_q (pair_finish).
#pragma once
#include "msm_core.cuh"

namespace cuzk {
namespace gpu {

// A round's input that is an array of affine points (every round after the first).
template <class C>
struct AffinePoints {
  const Affine<C>* a;
  CUZK_HD Affine<C> get(u32 e) const { return load(a + e); }
};

// Bucket b's share of the round: its pairs and the points it keeps for the next round.
CUZK_HD void aff_counts(const u32* cnt, u32* npairs, u32* ncnt, u32 b) {
  u32 c = cnt[b];
  npairs[b] = c >> 1;
  ncnt[b] = c - (c >> 1);
}

// After the exclusive scans of npairs (poff) and ncnt (noff): marks the bucket's first pair in the
// pair -> bucket map (zeroed before; an inclusive max-scan fills the rest) and copies an odd last
// point to the end of the bucket's output.
template <class C, class Src>
CUZK_HD void aff_carry(const Src& src, const u32* off, const u32* cnt, const u32* poff, const u32* noff, u32* map,
                       Affine<C>* out, u32 b) {
  u32 c = cnt[b], np = c >> 1;
  if (np) map[poff[b]] = b;
  if (c & 1) store(out + noff[b] + np, src.get(off[b] + c - 1));
}

// Pair q's two points (the input's entries e, e + 1) and where its sum goes.
struct AffPair {
  u32 e, out;
};
CUZK_HD AffPair aff_pair(const u32* map, const u32* off, const u32* poff, const u32* noff, u32 q) {
  u32 b = map[q], i = q - poff[b];
  return {off[b] + 2 * i, noff[b] + i};
}

// Product pass of lane l: pre[q] = the product of the lane's denominators before pair q, and
// lane_prod[l] = the product of all of them (one when the lane has no pair).
template <class C, class Src>
CUZK_HD void aff_product(const Src& src, const u32* map, const u32* off, const u32* poff, const u32* noff, u32 P,
                         u32 T, u32 l, typename C::F* pre, typename C::F* lane_prod) {
  using F = typename C::F;
  F run = F::one();
  for (u32 q = l; q < P; q += T) {
    AffPair pq = aff_pair(map, off, poff, noff, q);
    Affine<C> a = src.get(pq.e), b = src.get(pq.e + 1);
    store(pre + q, run);
    run = run * pair_denominator(a, b, pair_kind(a, b));
  }
  store(lane_prod + l, run);
}

// Apply pass of lane l, given lane_inv[l] = 1 / lane_prod[l]: the lane's pairs from the last,
// inv_q = inv * pre[q], then inv *= d_q; writes each pair's sum.
template <class C, class Src>
CUZK_HD void aff_apply(const Src& src, const u32* map, const u32* off, const u32* poff, const u32* noff, u32 P, u32 T,
                       u32 l, const typename C::F* pre, const typename C::F* lane_inv, Affine<C>* out) {
  using F = typename C::F;
  if (l >= P) return;
  F inv = load(lane_inv + l);
  for (u32 q = l + (P - 1 - l) / T * T;; q -= T) {
    AffPair pq = aff_pair(map, off, poff, noff, q);
    Affine<C> a = src.get(pq.e), b = src.get(pq.e + 1);
    PairKind k = pair_kind(a, b);
    F inv_q = inv * load(pre + q);
    inv = inv * pair_denominator(a, b, k);
    store(out + pq.out, pair_finish(a, b, k, inv_q));
    if (q < T) break;
  }
}

// One level of the trick over n values v: group g holds v[gG, min(gG + G, n)). Up: pre[i] = the
// product of the group's values before i, up[g] = the group's product.
template <class F>
CUZK_HD void aff_level_up(const F* v, u32 n, u32 G, F* pre, F* up, u32 g) {
  F run = F::one();
  u32 end = (g * G + G < n ? g * G + G : n);
  for (u32 i = g * G; i < end; i++) {
    store(pre + i, run);
    run = run * load(v + i);
  }
  store(up + g, run);
}
// Down, given up[g] = 1 / (the group's product): each v[i] of the group becomes 1 / v[i].
template <class F>
CUZK_HD void aff_level_down(F* v, u32 n, u32 G, const F* pre, const F* up, u32 g) {
  F inv = load(up + g);
  u32 begin = g * G, end = (begin + G < n ? begin + G : n);
  for (u32 i = end; i-- > begin;) {
    F vi = load(v + i);
    store(v + i, inv * load(pre + i));
    inv = inv * vi;
  }
}
// The top level, one thread: all n values of v inverted in place with one field inversion.
template <class F>
CUZK_HD void aff_level_top(F* v, u32 n, F* pre) {
  F prod;
  aff_level_up(v, n, n, pre, &prod, 0);
  prod = field_inv(prod);
  aff_level_down(v, n, n, pre, &prod, 0);
}

// The level sizes of the trick over T lane products, groups of G: n_0 = T, n_(k+1) = ceil(n_k / G),
// until n_k <= G or kAffMaxLevels - 1 levels; the top level inverts what is left in one thread.
// Returns the number of levels below the top (sizes gets levels + 1 entries).
constexpr int kAffMaxLevels = 8;
CUZK_HD int aff_levels(u32 T, u32 G, u32* sizes) {
  int k = 0;
  sizes[0] = T;
  while (sizes[k] > G && k + 1 < kAffMaxLevels) {
    sizes[k + 1] = (sizes[k] + G - 1) / G;
    k++;
  }
  return k;
}

// The entries are summed in chunks [e0, e1) of the sorted order (bounding the rounds' scratch): bucket
// b's share of a chunk, its range [start[b], end[b]) clipped to the chunk.
CUZK_HD void aff_clip(const u32* start, const u32* end, u32 e0, u32 e1, u32* cnt, u32* off, u32 b) {
  u32 s = start[b] > e0 ? start[b] : e0, e = end[b] < e1 ? end[b] : e1;
  cnt[b] = e > s ? e - s : 0;
  off[b] = s;
}

// After a chunk's last round: bucket b's sum so far (prev: the earlier chunks' sums, or null for the
// first chunk) plus its one remaining point, if any.
template <class C, class Src>
CUZK_HD XYZZ<C> aff_bucket(const Src& src, const u32* off, const u32* cnt, const XYZZ<C>* prev, u32 b) {
  XYZZ<C> acc = prev ? load(prev + b) : XYZZ<C>::infinity();
  return cnt[b] ? msm_madd(acc, src.get(off[b])) : acc;
}

// Rounds that bring buckets of at most max_count points down to one each.
CUZK_HD int aff_rounds(u32 max_count) {
  int r = 0;
  while (r < 32 && (u64(1) << r) < max_count) r++;
  return r;
}

// Upper bounds, from the entries m and the buckets nb alone, of a round's input points (m_r) and
// pairs (m_r / 2): round r + 1 holds sum ceil(cnt / 2) <= (m_r + min(nb, m_r)) / 2 points.
CUZK_HD u64 aff_next_points(u64 m_r, u64 nb) { return (m_r + (nb < m_r ? nb : m_r)) / 2; }

}  // namespace gpu
}  // namespace cuzk
