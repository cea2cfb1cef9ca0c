// G2 bucket accumulation with two threads per Fq2 value ("pair" mapping).
//
// Why: the one-thread G2 mixed addition keeps 8 Fq2 values of state plus Karatsuba temporaries live
// (X, Y, ZZ, ZZZ, the affine point, P, R, ...), which puts k_acc0<DG2> at the 255-register cap with
// ~330 bytes of spills per thread and only 8 warps per SM. Here the two threads (lanes) of a pair each
// hold ONE component of every Fq2 value (lane 0 the c0's, lane 1 the c1's), so each holds the same
// number of words as a G1 thread, and the work of one Fq2 product splits evenly between them:
//   z = x y, u^2 = -1:   lane 0: z0 = x0 y0 + (p - x1) y1        (= x0 y0 - x1 y1)
//                         lane 1: z1 = x1 y0 + x0 y1
// Each lane computes a sum of two products with ONE Montgomery reduction (mont_sum<2>: 2 x 288 + 288
// = 864 32-bit multiply-adds), so the pair spends 1728 per Fq2 product, the same as three Montgomery
// multiplies (Karatsuba) in one thread. Squares: lane 0 (x0 + x1)(x0 - x1), lane 1 (2 x0) x1, one
// Montgomery multiply each (the one-thread square is two). The words of the second factors are
// fetched per row from the partner (one shuffle per row), so a product adds one 12-word temporary
// (the partner's first factor) to what is live. Y3 = R (Q - X3) - Y PPP is one four-term sum with
// one reduction (4 x 288 + 288 instead of 2 x 864 per lane).
//
// The exchange between the lanes is a template parameter (Ex::swap returns the partner's value of a
// word; Ex::lane is 0 or 1): __shfl_xor_sync on the device, two host threads in the emulation test.
// Both lanes of a pair always take the same branches (every test is combined over the pair).
#pragma once
#include "msm_core.cuh"

namespace cuzk {
namespace gpu {

CUZK_HD DFq pair_sel(bool one, const DFq& if_one, const DFq& if_zero) {
  DFq r;
CUZK_UNROLL
  for (int j = 0; j < DFq::NW; j++) r.w[j] = one ? if_one.w[j] : if_zero.w[j];
  return r;
}

template <class Ex>
CUZK_HD DFq pair_swap(Ex& ex, const DFq& v) {
  DFq r;
CUZK_UNROLL
  for (int j = 0; j < DFq::NW; j++) r.w[j] = ex.swap(v.w[j]);
  return r;
}

// True on both lanes iff b holds on both.
template <class Ex>
CUZK_HD bool pair_all(Ex& ex, bool b) {
  u32 v = b ? 1u : 0u;
  return (v & ex.swap(v)) != 0;
}

// This lane's component of x*y (x, y: this lane's components of two Fq2 values).
template <class Ex>
CUZK_HD DFq pair_mul(Ex& ex, const DFq& x, const DFq& y) {
  bool l1 = ex.lane != 0;
  DFq xp = pair_swap(ex, x);
  DFq a[2] = {x, pair_sel(l1, xp, fq_negp(xp))};
  u32 s = 0;
  // Row i: word i of y0 and of y1; one swap serves both (lane 0 owns y0, lane 1 owns y1).
  return mont_sum<2>(a, [&](int k, int i) -> u32 {
    if (k == 0) s = ex.swap(y.w[i]);
    return (k == 0) == l1 ? s : y.w[i];
  });
}

// This lane's component of x^2: lane 0 (x0 + x1)(x0 - x1), lane 1 (2 x0) x1.
template <class Ex>
CUZK_HD DFq pair_sqr(Ex& ex, const DFq& x) {
  bool l1 = ex.lane != 0;
  DFq xp = pair_swap(ex, x);
  DFq a = pair_sel(l1, xp, x) + xp;
  DFq b = pair_sel(l1, x, x - xp);
  return a * b;
}

// This lane's component of r*s - y*t as one four-term sum:
//   lane 0: r0 s0 + (p - r1) s1 + (p - y0) t0 + y1 t1
//   lane 1: r1 s0 + r0 s1 + (p - y1) t0 + (p - y0) t1
template <class Ex>
CUZK_HD DFq pair_mul_sub(Ex& ex, const DFq& r, const DFq& s, const DFq& y, const DFq& t) {
  bool l1 = ex.lane != 0;
  DFq rp = pair_swap(ex, r), yp = pair_swap(ex, y);
  DFq a[4] = {r, pair_sel(l1, rp, fq_negp(rp)), fq_negp(y), pair_sel(l1, fq_negp(yp), yp)};
  u32 ss = 0, ts = 0;
  return mont_sum<4>(a, [&](int k, int i) -> u32 {
    if (k == 0) ss = ex.swap(s.w[i]);
    if (k == 2) ts = ex.swap(t.w[i]);
    const DFq& v = k < 2 ? s : t;
    u32 sw = k < 2 ? ss : ts;
    bool want_c0 = (k & 1) == 0;
    return want_c0 == l1 ? sw : v.w[i];
  });
}

// One lane's share of an XYZZ G2 bucket sum: the lane's components of X, Y, ZZ, ZZZ, and whether the
// sum is still infinity (the same on both lanes).
struct PairAcc {
  DFq x, y, zz, zzz;
  bool inf;
};

// mdbl-2008-s-1 on the pair: the affine point (qx, qy) doubled into XYZZ.
template <class Ex>
CUZK_HD void pair_dbl_affine(Ex& ex, const DFq& qx, const DFq& qy, PairAcc& acc) {
  DFq u = qy.dbl();
  DFq v = pair_sqr(ex, u);
  DFq w = pair_mul(ex, u, v);
  DFq s = pair_mul(ex, qx, v);
  DFq x2 = pair_sqr(ex, qx);
  DFq m = x2.dbl() + x2;
  acc.x = pair_sqr(ex, m) - s.dbl();
  acc.y = pair_mul(ex, m, s - acc.x) - pair_mul(ex, w, qy);
  acc.zz = v;
  acc.zzz = w;
}

// madd-2008-s on the pair (as XYZZ::add_affine): acc += (qx, qy), an affine point not at infinity.
template <class Ex>
CUZK_HD void pair_add_affine(Ex& ex, const DFq& qx, const DFq& qy, PairAcc& acc) {
  if (acc.inf) {
    acc.x = qx;
    acc.y = qy;
    acc.zz = ex.lane ? DFq::zero() : DFq::one();
    acc.zzz = acc.zz;
    acc.inf = false;
    return;
  }
  DFq p = pair_mul(ex, qx, acc.zz) - acc.x;
  DFq r = pair_mul(ex, qy, acc.zzz) - acc.y;
  if (pair_all(ex, p.is_zero())) {
    if (pair_all(ex, r.is_zero()))
      pair_dbl_affine(ex, qx, qy, acc);
    else
      acc.inf = true;
    return;
  }
  DFq pp = pair_sqr(ex, p);
  DFq ppp = pair_mul(ex, p, pp);
  acc.zz = pair_mul(ex, acc.zz, pp);
  acc.zzz = pair_mul(ex, acc.zzz, ppp);
  DFq q = pair_mul(ex, acc.x, pp);
  acc.x = pair_sqr(ex, r) - ppp - q.dbl();
  acc.y = pair_mul_sub(ex, r, q - acc.x, acc.y, ppp);
}

// Level-0 task of G2 on a pair (msm_acc_entries / msm_acc_entries_shared): this lane's components of
// the bucket's partial sum, written to out (an XYZZ<DG2>, seen as 8 DFq: x0 x1 y0 y1 zz0 zz1 zzz0 zzz1).
// Shared: values w * n_scalars + i name the window-w copy at table[w * stride + i - idx_offset].
template <bool Shared, class Ex>
CUZK_HD void pair_acc_entries(Ex& ex, const DG2Affine* points, u32 idx_offset, u32 n_scalars, u32 stride,
                              const u32* vals, u32 begin, u32 end, DG2xyzz* out) {
  PairAcc acc;
  acc.inf = true;
  acc.x = acc.y = acc.zz = acc.zzz = DFq::zero();
  u32 lane = ex.lane;
  for (u32 e = begin; e < end; e++) {
    u32 v = vals[e];
    u32 idx = v & ~kMsmNegBit;
    const DG2Affine* pt;
    if constexpr (Shared) {
      u32 w = idx / n_scalars, i = idx - w * n_scalars;
      if (i < idx_offset) continue;
      pt = points + ((size_t)w * stride + (i - idx_offset));
    } else {
      if (idx < idx_offset) continue;
      pt = points + (idx - idx_offset);
    }
    const DFq* q = reinterpret_cast<const DFq*>(pt);
    DFq qx = load(q + lane), qy = load(q + 2 + lane);
    if (pair_all(ex, qx.is_zero() && qy.is_zero())) continue;  // infinity adds nothing
    if (v & kMsmNegBit) qy = -qy;
    pair_add_affine(ex, qx, qy, acc);
  }
  DFq* o = reinterpret_cast<DFq*>(out);
  if (acc.inf) {  // XYZZ::infinity() = (1, 1, 0, 0)
    acc.x = acc.y = lane ? DFq::zero() : DFq::one();
    acc.zz = acc.zzz = DFq::zero();
  }
  store(o + lane, acc.x);
  store(o + 2 + lane, acc.y);
  store(o + 4 + lane, acc.zz);
  store(o + 6 + lane, acc.zzz);
}

// ---- The bucket-side G2 work on pairs: full XYZZ additions (k_acc_level, k_group_sum) and the
// chunked running sums (k_chunks), as msm_acc_partials / msm_chunk_sum with one lane per component.

// This lane's components of an XYZZ<DG2>; infinity is zz = 0 (on both lanes), as XYZZ::is_inf.
struct PairXYZZ {
  DFq x, y, zz, zzz;
};

template <class Ex>
CUZK_HD PairXYZZ pair_infinity(Ex& ex) {  // XYZZ::infinity() = (1, 1, 0, 0)
  DFq one = ex.lane ? DFq::zero() : DFq::one();
  return {one, one, DFq::zero(), DFq::zero()};
}
template <class Ex>
CUZK_HD bool pair_is_inf(Ex& ex, const PairXYZZ& a) {
  return pair_all(ex, a.zz.is_zero());
}
template <class Ex>
CUZK_HD PairXYZZ pair_load(Ex& ex, const DG2xyzz* p) {
  const DFq* q = reinterpret_cast<const DFq*>(p);
  return {load(q + ex.lane), load(q + 2 + ex.lane), load(q + 4 + ex.lane), load(q + 6 + ex.lane)};
}
template <class Ex>
CUZK_HD void pair_store(Ex& ex, DG2xyzz* p, const PairXYZZ& v) {
  DFq* q = reinterpret_cast<DFq*>(p);
  store(q + ex.lane, v.x);
  store(q + 2 + ex.lane, v.y);
  store(q + 4 + ex.lane, v.zz);
  store(q + 6 + ex.lane, v.zzz);
}

// dbl-2008-s-1 on the pair (XYZZ::dbl). A real call on the device: it has several call sites
// (inside every addition, and the double-and-add of the chunk sums) and is not the hot path. The
// exchange comes by value, so that its two words stay in registers.
template <class Ex>
#if defined(__CUDACC__)
__host__ __device__ __noinline__
#else
inline
#endif
PairXYZZ pair_dbl(Ex ex, const PairXYZZ& a) {
  if (pair_is_inf(ex, a)) return a;
  DFq u = a.y.dbl();
  DFq v = pair_sqr(ex, u);
  DFq w = pair_mul(ex, u, v);
  DFq s = pair_mul(ex, a.x, v);
  DFq x2 = pair_sqr(ex, a.x);
  DFq m = x2.dbl() + x2;
  PairXYZZ r;
  r.x = pair_sqr(ex, m) - s.dbl();
  r.y = pair_mul_sub(ex, m, s - r.x, w, a.y);
  r.zz = pair_mul(ex, v, a.zz);
  r.zzz = pair_mul(ex, w, a.zzz);
  return r;
}

// add-2008-s on the pair (XYZZ::operator+).
template <class Ex>
CUZK_HD PairXYZZ pair_add(Ex& ex, const PairXYZZ& a, const PairXYZZ& b) {
  static_assert(sizeof(Ex) <= 16, "the exchange is passed by value to pair_dbl");
  if (pair_is_inf(ex, b)) return a;
  if (pair_is_inf(ex, a)) return b;
  DFq u1 = pair_mul(ex, a.x, b.zz);
  DFq p = pair_mul(ex, b.x, a.zz) - u1;
  DFq s1 = pair_mul(ex, a.y, b.zzz);
  DFq r = pair_mul(ex, b.y, a.zzz) - s1;
  if (pair_all(ex, p.is_zero())) return pair_all(ex, r.is_zero()) ? pair_dbl(ex, a) : pair_infinity(ex);
  DFq pp = pair_sqr(ex, p);
  DFq ppp = pair_mul(ex, p, pp);
  DFq qq = pair_mul(ex, u1, pp);
  PairXYZZ o;
  o.zz = pair_mul(ex, pair_mul(ex, a.zz, b.zz), pp);
  o.zzz = pair_mul(ex, pair_mul(ex, a.zzz, b.zzz), ppp);
  o.x = pair_sqr(ex, r) - ppp - qq.dbl();
  o.y = pair_mul_sub(ex, r, qq - o.x, s1, ppp);
  return o;
}

// msm_acc_partials on the pair.
template <class Ex>
CUZK_HD void pair_acc_partials(Ex& ex, const DG2xyzz* in, u32 begin, u32 end, DG2xyzz* out) {
  PairXYZZ acc = pair_infinity(ex);
  for (u32 e = begin; e < end; e++) acc = pair_add(ex, acc, pair_load(ex, in + e));
  pair_store(ex, out, acc);
}

// msm_chunk_sum on the pair: R + jK T for buckets [jK, jK + K), with the additions of the running
// sums through one call site (t += S_b and r += t alternate).
template <class Ex>
CUZK_HD void pair_chunk_sum(Ex& ex, const DG2xyzz* buckets, u32 j, u32 K, DG2xyzz* out) {
  PairXYZZ t = pair_infinity(ex), r = t;
  for (u32 s = 0; s < 2 * K; s++) {
    bool to_t = (s & 1) == 0;
    PairXYZZ rhs = to_t ? pair_load(ex, buckets + (size_t)j * K + (K - 1 - s / 2)) : t;
    PairXYZZ sum = pair_add(ex, to_t ? t : r, rhs);
    if (to_t)
      t = sum;
    else
      r = sum;
  }
  if (j != 0 && !pair_is_inf(ex, t)) {
    u32 k = j * K;  // xyzz_mul_small: double-and-add from the top bit
    PairXYZZ acc = pair_infinity(ex);
    for (int bit = 31; bit >= 0; bit--) {
      acc = pair_dbl(ex, acc);
      if ((k >> bit) & 1) acc = pair_add(ex, acc, t);
    }
    r = pair_add(ex, r, acc);
  }
  pair_store(ex, out, r);
}

}  // namespace gpu
}  // namespace cuzk
