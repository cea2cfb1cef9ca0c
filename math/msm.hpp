// Building blocks of Pippenger multi-scalar multiplication shared by the CPU driver (groth16/msm.cpp)
// and, later, the device kernels: XYZZ bucket coordinates, signed window digits, and the affine
// addition used by batch-affine bucket accumulation.
#pragma once
#include "curve.hpp"

namespace cuzk {

// Extended Jacobian "XYZZ" point (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ and ZZ^3 = ZZZ^2;
// ZZ = 0 is infinity. Mixed addition costs 8M + 2S against Jacobian's 7M + 4S, full addition
// 12M + 2S against 11M + 5S, and neither needs the doubling-by-squaring of Z, which is why MSM
// bucket sums use it.
template <class C>
struct XYZZ {
  using F = typename C::F;
  using Aff = Affine<C>;
  F x, y, zz, zzz;

  CUZK_HD static XYZZ infinity() { return {F::one(), F::one(), F::zero(), F::zero()}; }
  CUZK_HD static XYZZ from_affine(const Aff& a) {
    return a.is_inf() ? infinity() : XYZZ{a.x, a.y, F::one(), F::one()};
  }
  CUZK_HD bool is_inf() const { return zz.is_zero(); }
  CUZK_HD XYZZ operator-() const { return {x, -y, zz, zzz}; }

  // dbl-2008-s-1 (a = 0): U = 2Y, V = U^2, W = UV, S = XV, M = 3X^2, X3 = M^2 - 2S,
  // Y3 = M(S - X3) - WY, ZZ3 = V ZZ, ZZZ3 = W ZZZ; 6M + 3S.
  CUZK_HD XYZZ dbl() const {
    if (is_inf()) return *this;
    F u = y.dbl(), v = u.sqr(), w = u * v, s = x * v, x2 = x.sqr(), m = x2.dbl() + x2;
    XYZZ r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * y;
    r.zz = v * zz;
    r.zzz = w * zzz;
    return r;
  }

  // mdbl-2008-s-1: doubling an affine point straight into XYZZ (ZZ = V, ZZZ = W); 4M + 3S.
  CUZK_HD static XYZZ dbl_affine(const Aff& a) {
    F u = a.y.dbl(), v = u.sqr(), w = u * v, s = a.x * v, x2 = a.x.sqr(), m = x2.dbl() + x2;
    XYZZ r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * a.y;
    r.zz = v;
    r.zzz = w;
    return r;
  }

  // madd-2008-s: XYZZ + affine, 8M + 2S; P = R = 0 means the same point (double it), P = 0 alone
  // means the negation (infinity).
  CUZK_HD XYZZ add_affine(const Aff& q) const {
    if (q.is_inf()) return *this;
    if (is_inf()) return from_affine(q);
    F u2 = q.x * zz, s2 = q.y * zzz;
    F p = u2 - x, rr = s2 - y;
    if (p.is_zero()) return rr.is_zero() ? dbl_affine(q) : infinity();
    F pp = p.sqr(), ppp = p * pp, qq = x * pp;
    XYZZ r;
    r.x = rr.sqr() - ppp - qq.dbl();
    r.y = rr * (qq - r.x) - y * ppp;
    r.zz = zz * pp;
    r.zzz = zzz * ppp;
    return r;
  }

  // add-2008-s: XYZZ + XYZZ, 12M + 2S.
  CUZK_HD XYZZ operator+(const XYZZ& q) const {
    if (q.is_inf()) return *this;
    if (is_inf()) return q;
    F u1 = x * q.zz, u2 = q.x * zz, s1 = y * q.zzz, s2 = q.y * zzz;
    F p = u2 - u1, rr = s2 - s1;
    if (p.is_zero()) return rr.is_zero() ? dbl() : infinity();
    F pp = p.sqr(), ppp = p * pp, qq = u1 * pp;
    XYZZ r;
    r.x = rr.sqr() - ppp - qq.dbl();
    r.y = rr * (qq - r.x) - s1 * ppp;
    r.zz = zz * q.zz * pp;
    r.zzz = zzz * q.zzz * ppp;
    return r;
  }
  CUZK_HD XYZZ& operator+=(const XYZZ& q) { return *this = *this + q; }

  // Same point in Jacobian form: Z = ZZZ gives X' = X ZZ^2 and Y' = Y ZZZ^2 (using ZZ^3 = ZZZ^2);
  // 2M + 2S, no inversion.
  CUZK_HD Jacobian<C> to_jacobian() const {
    if (is_inf()) return Jacobian<C>::infinity();
    return {x * zz.sqr(), y * zzz.sqr(), zzz};
  }
};

// Signed (Booth) digit of window w of width c (c <= 31) of a plain scalar k:
//   d_w = v_w + b_{wc-1} - 2^c b_{wc+c-1},  v_w = bits [wc, wc+c) of k,
// so that sum_w d_w 2^{wc} = k whenever k < 2^{Wc-1} (the correction terms telescope). Each digit
// lies in [-2^(c-1), 2^(c-1)], which halves the bucket count, and depends only on c+1 bits of k,
// so windows can be recoded independently (no carry chain across windows).
template <int N>
CUZK_HD int msm_signed_digit(const BigInt<N>& k, int w, int c) {
  u32 win = w == 0 ? k.bits(0, c) << 1 : k.bits(w * c - 1, c + 1);  // bit 0 is b_{wc-1}
  return (int)(win >> 1) + (int)(win & 1) - (int)((win >> c) << c);
}

// Windows needed for scalars of at most `bits` bits with window width c: Booth recoding needs the
// top bit of the last window clear.
CUZK_HD int msm_window_count(int bits, int c) { return (bits + 1 + c - 1) / c; }

// One affine addition whose slope denominator is inverted in a batch elsewhere. pair_denominator
// classifies p + q and returns what must be inverted: x2 - x1 (general case), 2 y1 (doubling), or
// one for the trivial cases (an operand at infinity, or q = -p), where the sum needs no slope. A
// point with y = 0 is its own negation (2-torsion, never in the prime-order groups): P + P is then
// the cancellation, so that no denominator is ever zero and one bad point cannot void a whole batch.
enum class PairKind : uint8_t { General, Double, LeftInf, RightInf, Cancel };

template <class C>
CUZK_HD PairKind pair_kind(const Affine<C>& p, const Affine<C>& q) {
  if (p.is_inf()) return PairKind::LeftInf;
  if (q.is_inf()) return PairKind::RightInf;
  if (p.x != q.x) return PairKind::General;
  return p.y == q.y && !p.y.is_zero() ? PairKind::Double : PairKind::Cancel;
}

template <class C>
CUZK_HD typename C::F pair_denominator(const Affine<C>& p, const Affine<C>& q, PairKind k) {
  using F = typename C::F;
  if (k == PairKind::General) return q.x - p.x;
  if (k == PairKind::Double) return p.y.dbl();
  return F::one();
}

// Finishes p + q given inv = 1/denominator: lambda = (y2 - y1)/(x2 - x1) or 3x1^2/(2y1), then
// x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1. 2M + 1S on top of the shared inversion.
// inv may be lazily reduced (in [0, 2p), see Fp::mul_lazy); lambda, which is only multiplied, is too.
template <class C>
CUZK_HD Affine<C> pair_finish(const Affine<C>& p, const Affine<C>& q, PairKind k, const typename C::F& inv) {
  using F = typename C::F;
  switch (k) {
    case PairKind::LeftInf:
      return q;
    case PairKind::RightInf:
      return p;
    case PairKind::Cancel:
      return Affine<C>::infinity();
    default:
      break;
  }
  F lambda;
  if (k == PairKind::General) {
    lambda = (q.y - p.y).mul_lazy(inv);
  } else {
    F x2 = p.x.sqr();
    lambda = (x2.dbl() + x2).mul_lazy(inv);
  }
  Affine<C> r;
  r.x = lambda.sqr() - p.x - q.x;
  r.y = lambda * (p.x - r.x) - p.y;
  return r;
}

}  // namespace cuzk
