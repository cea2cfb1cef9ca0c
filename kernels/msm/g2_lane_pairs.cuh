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
#include "kernels/msm/pippenger.cuh"

namespace cuzk {
namespace gpu {

template <class F>
CUZK_HD F pair_sel(bool one, const F& if_one, const F& if_zero) {
  F r;
CUZK_UNROLL
  for (int j = 0; j < F::NW; j++) r.w[j] = one ? if_one.w[j] : if_zero.w[j];
  return r;
}

template <class Ex, class F>
CUZK_HD F pair_swap(Ex& ex, const F& v) {
  F r;
CUZK_UNROLL
  for (int j = 0; j < F::NW; j++) r.w[j] = ex.swap(v.w[j]);
  return r;
}

// True on both lanes iff b holds on both.
template <class Ex>
CUZK_HD bool pair_all(Ex& ex, bool b) {
  u32 v = b ? 1u : 0u;
  return (v & ex.swap(v)) != 0;
}

// This lane's component of x*y (x, y: this lane's components of two Fq2 values).
template <class Ex, class F>
CUZK_HD F pair_mul(Ex& ex, const F& x, const F& y) {
  bool l1 = ex.lane != 0;
  F xp = pair_swap(ex, x);
  F a[2] = {x, pair_sel(l1, xp, fq_negp(xp))};
  u32 s = 0;
  // Row i: word i of y0 and of y1; one swap serves both (lane 0 owns y0, lane 1 owns y1).
  return mont_sum<2>(a, [&](int k, int i) -> u32 {
    if (k == 0) s = ex.swap(y.w[i]);
    return (k == 0) == l1 ? s : y.w[i];
  });
}

// This lane's component of x^2: lane 0 (x0 + x1)(x0 - x1), lane 1 (2 x0) x1.
template <class Ex, class F>
CUZK_HD F pair_sqr(Ex& ex, const F& x) {
  bool l1 = ex.lane != 0;
  F xp = pair_swap(ex, x);
  F a = pair_sel(l1, xp, x) + xp;
  F b = pair_sel(l1, x, x - xp);
  return a * b;
}

// This lane's component of r*s - y*t as one four-term sum:
//   lane 0: r0 s0 + (p - r1) s1 + (p - y0) t0 + y1 t1
//   lane 1: r1 s0 + r0 s1 + (p - y1) t0 + (p - y0) t1
template <class Ex, class F>
CUZK_HD F pair_mul_sub(Ex& ex, const F& r, const F& s, const F& y, const F& t) {
  bool l1 = ex.lane != 0;
  F rp = pair_swap(ex, r), yp = pair_swap(ex, y);
  F a[4] = {r, pair_sel(l1, rp, fq_negp(rp)), fq_negp(y), pair_sel(l1, fq_negp(yp), yp)};
  u32 ss = 0, ts = 0;
  return mont_sum<4>(a, [&](int k, int i) -> u32 {
    if (k == 0) ss = ex.swap(s.w[i]);
    if (k == 2) ts = ex.swap(t.w[i]);
    const F& v = k < 2 ? s : t;
    u32 sw = k < 2 ? ss : ts;
    bool want_c0 = (k & 1) == 0;
    return want_c0 == l1 ? sw : v.w[i];
  });
}

// One lane's share of an XYZZ G2 bucket sum: the lane's components of X, Y, ZZ, ZZZ, and whether the
// sum is still infinity (the same on both lanes).
template <class F>
struct PairAcc {
  F x, y, zz, zzz;
  bool inf;
};

// mdbl-2008-s-1 on the pair: the affine point (qx, qy) doubled into XYZZ.
template <class Ex, class F>
CUZK_HD void pair_dbl_affine(Ex& ex, const F& qx, const F& qy, PairAcc<F>& acc) {
  F u = qy.dbl();
  F v = pair_sqr(ex, u);
  F w = pair_mul(ex, u, v);
  F s = pair_mul(ex, qx, v);
  F x2 = pair_sqr(ex, qx);
  F m = x2.dbl() + x2;
  acc.x = pair_sqr(ex, m) - s.dbl();
  acc.y = pair_mul(ex, m, s - acc.x) - pair_mul(ex, w, qy);
  acc.zz = v;
  acc.zzz = w;
}

// madd-2008-s on the pair (as XYZZ::add_affine): acc += (qx, qy), an affine point not at infinity.
template <class Ex, class F>
CUZK_HD void pair_add_affine(Ex& ex, const F& qx, const F& qy, PairAcc<F>& acc) {
  if (acc.inf) {
    acc.x = qx;
    acc.y = qy;
    acc.zz = ex.lane ? F::zero() : F::one();
    acc.zzz = acc.zz;
    acc.inf = false;
    return;
  }
  F p = pair_mul(ex, qx, acc.zz) - acc.x;
  F r = pair_mul(ex, qy, acc.zzz) - acc.y;
  if (pair_all(ex, p.is_zero())) {
    if (pair_all(ex, r.is_zero()))
      pair_dbl_affine(ex, qx, qy, acc);
    else
      acc.inf = true;
    return;
  }
  F pp = pair_sqr(ex, p);
  F ppp = pair_mul(ex, p, pp);
  acc.zz = pair_mul(ex, acc.zz, pp);
  acc.zzz = pair_mul(ex, acc.zzz, ppp);
  F q = pair_mul(ex, acc.x, pp);
  acc.x = pair_sqr(ex, r) - ppp - q.dbl();
  acc.y = pair_mul_sub(ex, r, q - acc.x, acc.y, ppp);
}

// Level-0 task of G2 on a pair (msm_acc_entries / msm_acc_entries_shared): this lane's components of
// the bucket's partial sum, written to out (an XYZZ of G2, seen as 8 Fq: x0 x1 y0 y1 zz0 zz1 zzz0 zzz1).
// Shared: values w * n_scalars + i name the window-w copy at table[w * stride + i - idx_offset].
template <bool Shared, class Ex, class C>
CUZK_HD void pair_acc_entries(Ex& ex, const Affine<C>* points, u32 idx_offset, u32 n_scalars, u32 stride,
                              const u32* vals, u32 begin, u32 end, XYZZ<C>* out) {
  using F = typename C::F::Base;
  PairAcc<F> acc;
  acc.inf = true;
  acc.x = acc.y = acc.zz = acc.zzz = F::zero();
  u32 lane = ex.lane;
  for (u32 e = begin; e < end; e++) {
    u32 v = vals[e];
    u32 idx = v & ~kMsmNegBit;
    const Affine<C>* pt;
    if constexpr (Shared) {
      u32 w = idx / n_scalars, i = idx - w * n_scalars;
      if (i < idx_offset) continue;
      pt = points + ((size_t)w * stride + (i - idx_offset));
    } else {
      if (idx < idx_offset) continue;
      pt = points + (idx - idx_offset);
    }
    const F* q = reinterpret_cast<const F*>(pt);
    F qx = load(q + lane), qy = load(q + 2 + lane);
    if (pair_all(ex, qx.is_zero() && qy.is_zero())) continue;  // infinity adds nothing
    if (v & kMsmNegBit) qy = -qy;
    pair_add_affine(ex, qx, qy, acc);
  }
  F* o = reinterpret_cast<F*>(out);
  if (acc.inf) {  // XYZZ::infinity() = (1, 1, 0, 0)
    acc.x = acc.y = lane ? F::zero() : F::one();
    acc.zz = acc.zzz = F::zero();
  }
  store(o + lane, acc.x);
  store(o + 2 + lane, acc.y);
  store(o + 4 + lane, acc.zz);
  store(o + 6 + lane, acc.zzz);
}

// ---- The bucket-side G2 work on pairs: full XYZZ additions (k_acc_level, k_group_sum) and the
// chunked running sums (k_chunks), as msm_acc_partials / msm_chunk_sum with one lane per component.

// This lane's components of an XYZZ of G2; infinity is zz = 0 (on both lanes), as XYZZ::is_inf.
template <class F>
struct PairXYZZ {
  F x, y, zz, zzz;
};

template <class F, class Ex>
CUZK_HD PairXYZZ<F> pair_infinity(Ex& ex) {  // XYZZ::infinity() = (1, 1, 0, 0)
  F one = ex.lane ? F::zero() : F::one();
  return {one, one, F::zero(), F::zero()};
}
template <class Ex, class F>
CUZK_HD bool pair_is_inf(Ex& ex, const PairXYZZ<F>& a) {
  return pair_all(ex, a.zz.is_zero());
}
template <class Ex, class C>
CUZK_HD PairXYZZ<typename C::F::Base> pair_load(Ex& ex, const XYZZ<C>* p) {
  using F = typename C::F::Base;
  const F* q = reinterpret_cast<const F*>(p);
  return {load(q + ex.lane), load(q + 2 + ex.lane), load(q + 4 + ex.lane), load(q + 6 + ex.lane)};
}
template <class Ex, class C>
CUZK_HD void pair_store(Ex& ex, XYZZ<C>* p, const PairXYZZ<typename C::F::Base>& v) {
  using F = typename C::F::Base;
  F* q = reinterpret_cast<F*>(p);
  store(q + ex.lane, v.x);
  store(q + 2 + ex.lane, v.y);
  store(q + 4 + ex.lane, v.zz);
  store(q + 6 + ex.lane, v.zzz);
}

// dbl-2008-s-1 on the pair (XYZZ::dbl). A real call on the device: it has several call sites
// (inside every addition, and the double-and-add of the chunk sums) and is not the hot path. The
// exchange comes by value, so that its two words stay in registers.
template <class Ex, class F>
#if defined(__CUDACC__)
__host__ __device__ __noinline__
#else
inline
#endif
PairXYZZ<F> pair_dbl(Ex ex, const PairXYZZ<F>& a) {
  if (pair_is_inf(ex, a)) return a;
  F u = a.y.dbl();
  F v = pair_sqr(ex, u);
  F w = pair_mul(ex, u, v);
  F s = pair_mul(ex, a.x, v);
  F x2 = pair_sqr(ex, a.x);
  F m = x2.dbl() + x2;
  PairXYZZ<F> r;
  r.x = pair_sqr(ex, m) - s.dbl();
  r.y = pair_mul_sub(ex, m, s - r.x, w, a.y);
  r.zz = pair_mul(ex, v, a.zz);
  r.zzz = pair_mul(ex, w, a.zzz);
  return r;
}

// add-2008-s on the pair (XYZZ::operator+).
template <class Ex, class F>
CUZK_HD PairXYZZ<F> pair_add(Ex& ex, const PairXYZZ<F>& a, const PairXYZZ<F>& b) {
  static_assert(sizeof(Ex) <= 16, "the exchange is passed by value to pair_dbl");
  if (pair_is_inf(ex, b)) return a;
  if (pair_is_inf(ex, a)) return b;
  F u1 = pair_mul(ex, a.x, b.zz);
  F p = pair_mul(ex, b.x, a.zz) - u1;
  F s1 = pair_mul(ex, a.y, b.zzz);
  F r = pair_mul(ex, b.y, a.zzz) - s1;
  if (pair_all(ex, p.is_zero())) return pair_all(ex, r.is_zero()) ? pair_dbl(ex, a) : pair_infinity<F>(ex);
  F pp = pair_sqr(ex, p);
  F ppp = pair_mul(ex, p, pp);
  F qq = pair_mul(ex, u1, pp);
  PairXYZZ<F> o;
  o.zz = pair_mul(ex, pair_mul(ex, a.zz, b.zz), pp);
  o.zzz = pair_mul(ex, pair_mul(ex, a.zzz, b.zzz), ppp);
  o.x = pair_sqr(ex, r) - ppp - qq.dbl();
  o.y = pair_mul_sub(ex, r, qq - o.x, s1, ppp);
  return o;
}

// msm_acc_partials on the pair.
template <class Ex, class C>
CUZK_HD void pair_acc_partials(Ex& ex, const XYZZ<C>* in, u32 begin, u32 end, XYZZ<C>* out) {
  using F = typename C::F::Base;
  PairXYZZ<F> acc = pair_infinity<F>(ex);
  for (u32 e = begin; e < end; e++) acc = pair_add(ex, acc, pair_load(ex, in + e));
  pair_store(ex, out, acc);
}

// msm_chunk_sum on the pair: R + jK T for buckets [jK, jK + K), with the additions of the running
// sums through one call site (t += S_b and r += t alternate).
template <class Ex, class C>
CUZK_HD PairXYZZ<typename C::F::Base> pair_chunk_value(Ex& ex, const XYZZ<C>* buckets, u32 j, u32 K) {
  using F = typename C::F::Base;
  PairXYZZ<F> t = pair_infinity<F>(ex), r = t;
  for (u32 s = 0; s < 2 * K; s++) {
    bool to_t = (s & 1) == 0;
    PairXYZZ<F> rhs = to_t ? pair_load(ex, buckets + (size_t)j * K + (K - 1 - s / 2)) : t;
    PairXYZZ<F> sum = pair_add(ex, to_t ? t : r, rhs);
    if (to_t)
      t = sum;
    else
      r = sum;
  }
  if (j != 0 && !pair_is_inf(ex, t)) {
    u32 k = j * K;  // xyzz_mul_small: double-and-add from the top bit
    PairXYZZ<F> acc = pair_infinity<F>(ex);
    for (int bit = 31; bit >= 0; bit--) {
      acc = pair_dbl(ex, acc);
      if ((k >> bit) & 1) acc = pair_add(ex, acc, t);
    }
    r = pair_add(ex, r, acc);
  }
  return r;
}
template <class Ex, class C>
CUZK_HD void pair_chunk_sum(Ex& ex, const XYZZ<C>* buckets, u32 j, u32 K, XYZZ<C>* out) {
  pair_store(ex, out, pair_chunk_value(ex, buckets, j, K));
}

}  // namespace gpu
}  // namespace cuzk
