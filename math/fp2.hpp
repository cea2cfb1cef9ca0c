// Quadratic extension F[u]/(u^2 + 1), the base field of G2 for BLS12-381 and BN254 (q = 3 mod 4 for
// both, so -1 is a non-square). XiA names the non-residue xi = XiA + u that the towers above build on:
// 1 for BLS12-381, 9 for BN254.
#pragma once
#include "fp.hpp"

namespace cuzk {

template <class F, int XiA = 1>
struct Fp2 {
  using Base = F;
  static constexpr int kXiA = XiA;
  F c0, c1;

  CUZK_HD static Fp2 zero() { return {F::zero(), F::zero()}; }
  CUZK_HD static Fp2 one() { return {F::one(), F::zero()}; }
  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  CUZK_HD bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  CUZK_HD bool operator!=(const Fp2& o) const { return !(*this == o); }
  CUZK_HD Fp2 operator+(const Fp2& b) const { return {c0 + b.c0, c1 + b.c1}; }
  CUZK_HD Fp2 operator-(const Fp2& b) const { return {c0 - b.c0, c1 - b.c1}; }
  CUZK_HD Fp2 operator-() const { return {-c0, -c1}; }
  CUZK_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  // Karatsuba: 3 base multiplies instead of 4.
  CUZK_HD Fp2 operator*(const Fp2& b) const {
    F v0 = c0 * b.c0, v1 = c1 * b.c1;
    return {v0 - v1, (c0 + c1) * (b.c0 + b.c1) - v0 - v1};
  }
  CUZK_HD Fp2 operator*(const F& b) const { return {c0 * b, c1 * b}; }
  // The base field's lazily reduced product has no Fq2 counterpart (Karatsuba adds and subtracts).
  CUZK_HD Fp2 mul_lazy(const Fp2& b) const { return *this * b; }
  // (a0 + a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u: 2 base multiplies.
  CUZK_HD Fp2 sqr() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
  CUZK_HD Fp2& operator+=(const Fp2& b) { return *this = *this + b; }
  CUZK_HD Fp2& operator-=(const Fp2& b) { return *this = *this - b; }
  CUZK_HD Fp2& operator*=(const Fp2& b) { return *this = *this * b; }
  CUZK_HD Fp2 conj() const { return {c0, -c1}; }
  // Multiply by the sextic non-residue xi = a + u used to build Fq6:
  // (c0 + c1 u)(a + u) = (a c0 - c1) + (c0 + a c1) u, with a c0 as additions (a is 1 or 9).
  CUZK_HD Fp2 mul_by_xi() const {
    if constexpr (XiA == 1) {
      return {c0 - c1, c0 + c1};
    } else {
      static_assert(XiA == 9, "mul_by_xi: xi = 1 + u or 9 + u");
      F a0 = c0.dbl().dbl().dbl() + c0, a1 = c1.dbl().dbl().dbl() + c1;  // 9x = 8x + x
      return {a0 - c1, c0 + a1};
    }
  }
  // 1/(a0 + a1 u) = (a0 - a1 u)/(a0^2 + a1^2): one base inversion.
  CUZK_HD Fp2 inv() const {
    F t = (c0.sqr() + c1.sqr()).inv();
    return {c0 * t, -(c1 * t)};
  }
  template <int M>
  CUZK_HD Fp2 pow(const BigInt<M>& e) const {
    Fp2 r = one();
    for (int i = e.num_bits() - 1; i >= 0; i--) {
      r = r.sqr();
      if (e.bit(i)) r = r * *this;
    }
    return r;
  }
  // Square root for u^2 = -1 and a base field with p = 3 mod 4, through the norm: if x = x0 + x1 u
  // squares to a = a0 + a1 u then n = sqrt(a0^2 + a1^2) lies in F, x0^2 = (a0 + n)/2 or (a0 - n)/2
  // (whichever is a square) and x1 = a1/(2 x0). Two base square roots and one inversion; used only
  // by G2 decompression. Returns false when a is not a square; either root may be returned.
  CUZK_HD bool sqrt(Fp2& out) const {
    if (c1.is_zero()) {
      F s;
      if (c0.sqrt(s)) {
        out = {s, F::zero()};
        return true;
      }
      if ((-c0).sqrt(s)) {  // a0 = -s^2 = (s u)^2
        out = {F::zero(), s};
        return true;
      }
      return false;
    }
    F n;
    if (!(c0.sqr() + c1.sqr()).sqrt(n)) return false;
    F half = F::from_u64(2).inv();
    F d = (c0 + n) * half, x0;
    if (!d.sqrt(x0)) {
      d = (c0 - n) * half;
      if (!d.sqrt(x0)) return false;
    }
    out = {x0, c1 * (x0.dbl()).inv()};
    return out.sqr() == *this;
  }
  // Ordering used by the compressed G2 sign bit (zcash/ietf convention): compare c1 first, then c0.
  CUZK_HD bool is_lexicographically_largest() const {
    if (!c1.is_zero()) return c1.is_lexicographically_largest();
    return c0.is_lexicographically_largest();
  }
};

}  // namespace cuzk
