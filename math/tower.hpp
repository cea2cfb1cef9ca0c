// The towers above Fq2: Fp6 = F2[v]/(v^3 - xi) and Fp12 = Fp6[w]/(w^2 - v), for any quadratic field
// that provides mul_by_xi() (BLS12-381: xi = 1 + u, BN254: xi = 9 + u). The same layout as
// snarkjs/ffjavascript and @noble/curves, so coefficients compare 1:1: an Fp12 element is c0 + c1 w
// with ci = ci.c0 + ci.c1 v + ci.c2 v^2, w^2 = v, v^3 = xi, hence w^6 = xi. In the power basis of w
// the six F2 slots are c0.c0 = w^0, c1.c0 = w^1, c0.c1 = w^2, c1.c1 = w^3, c0.c2 = w^4, c1.c2 = w^5.
#pragma once
#include "fp2.hpp"

namespace cuzk {

// Cubic extension F2[v]/(v^3 - xi) over any quadratic field providing mul_by_xi(). T supplies the
// Frobenius constants: frob_v() = xi^((p-1)/3) (v^p = frob_v() v) and frob_v2() = xi^(2(p-1)/3).
template <class T>
struct Fp6 {
  using F2 = typename T::F2;
  F2 c0, c1, c2;

  CUZK_HD static Fp6 zero() { return {F2::zero(), F2::zero(), F2::zero()}; }
  CUZK_HD static Fp6 one() { return {F2::one(), F2::zero(), F2::zero()}; }
  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  CUZK_HD bool operator==(const Fp6& o) const { return c0 == o.c0 && c1 == o.c1 && c2 == o.c2; }
  CUZK_HD bool operator!=(const Fp6& o) const { return !(*this == o); }
  CUZK_HD Fp6 operator+(const Fp6& b) const { return {c0 + b.c0, c1 + b.c1, c2 + b.c2}; }
  CUZK_HD Fp6 operator-(const Fp6& b) const { return {c0 - b.c0, c1 - b.c1, c2 - b.c2}; }
  CUZK_HD Fp6 operator-() const { return {-c0, -c1, -c2}; }
  CUZK_HD Fp6 dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }
  CUZK_HD Fp6 operator*(const F2& s) const { return {c0 * s, c1 * s, c2 * s}; }

  // Karatsuba over three coefficients: 6 F2 multiplies instead of 9. With vi = ai bi,
  //   c0 = v0 + xi((a1+a2)(b1+b2) - v1 - v2)   (the v^3 and v^4 terms wrap around through xi)
  //   c1 = (a0+a1)(b0+b1) - v0 - v1 + xi v2
  //   c2 = (a0+a2)(b0+b2) - v0 - v2 + v1
  CUZK_HD Fp6 operator*(const Fp6& b) const {
    F2 v0 = c0 * b.c0, v1 = c1 * b.c1, v2 = c2 * b.c2;
    Fp6 r;
    r.c0 = v0 + ((c1 + c2) * (b.c1 + b.c2) - v1 - v2).mul_by_xi();
    r.c1 = (c0 + c1) * (b.c0 + b.c1) - v0 - v1 + v2.mul_by_xi();
    r.c2 = (c0 + c2) * (b.c0 + b.c2) - v0 - v2 + v1;
    return r;
  }
  // Chung-Hasan SQR2: 2 F2 multiplies and 3 F2 squarings. With s0 = a0^2, s1 = 2 a0 a1,
  // s2 = (a0 - a1 + a2)^2, s3 = 2 a1 a2, s4 = a2^2 the square is
  //   (s0 + xi s3) + (s1 + xi s4) v + (s1 + s2 + s3 - s0 - s4) v^2,
  // since s1 + s2 + s3 - s0 - s4 = a1^2 + 2 a0 a2.
  CUZK_HD Fp6 sqr() const {
    F2 s0 = c0.sqr(), s1 = (c0 * c1).dbl(), s2 = (c0 - c1 + c2).sqr(), s3 = (c1 * c2).dbl(), s4 = c2.sqr();
    return {s0 + s3.mul_by_xi(), s1 + s4.mul_by_xi(), s1 + s2 + s3 - s0 - s4};
  }
  CUZK_HD Fp6& operator+=(const Fp6& b) { return *this = *this + b; }
  CUZK_HD Fp6& operator-=(const Fp6& b) { return *this = *this - b; }
  CUZK_HD Fp6& operator*=(const Fp6& b) { return *this = *this * b; }

  // Multiply by v: (a0 + a1 v + a2 v^2) v = xi a2 + a0 v + a1 v^2. Only additions.
  CUZK_HD Fp6 mul_by_v() const { return {c2.mul_by_xi(), c0, c1}; }
  // Multiply by the sparse b0 + b1 v (the shape of a Miller line's c0 half): 5 F2 multiplies.
  CUZK_HD Fp6 mul_by_01(const F2& b0, const F2& b1) const {
    F2 v0 = c0 * b0, v1 = c1 * b1;
    return {v0 + (c2 * b1).mul_by_xi(), (c0 + c1) * (b0 + b1) - v0 - v1, c2 * b0 + v1};
  }
  // Multiply by b1 v (the shape of a Miller line's c1 half): 3 F2 multiplies.
  CUZK_HD Fp6 mul_by_1(const F2& b1) const { return {(c2 * b1).mul_by_xi(), c0 * b1, c1 * b1}; }

  // Inverse through the adjugate: with t0 = a0^2 - xi a1 a2, t1 = xi a2^2 - a0 a1, t2 = a1^2 - a0 a2,
  // (a0 + a1 v + a2 v^2)(t0 + t1 v + t2 v^2) = a0 t0 + xi(a2 t1 + a1 t2), an element of F2, so one
  // F2 inversion suffices.
  CUZK_HD Fp6 inv() const {
    F2 t0 = c0.sqr() - (c1 * c2).mul_by_xi();
    F2 t1 = c2.sqr().mul_by_xi() - c0 * c1;
    F2 t2 = c1.sqr() - c0 * c2;
    F2 d = (c0 * t0 + (c2 * t1 + c1 * t2).mul_by_xi()).inv();
    return {t0 * d, t1 * d, t2 * d};
  }
  // x -> x^p: (a0 + a1 v + a2 v^2)^p = conj(a0) + conj(a1) v^p + conj(a2) v^2p, v^p = xi^((p-1)/3) v.
  CUZK_HD Fp6 frobenius() const {
    return {c0.conj(), c1.conj() * T::frob_v(), c2.conj() * T::frob_v2()};
  }
};

// Quadratic extension Fp6[w]/(w^2 - v). T additionally supplies frob_w() = xi^((p-1)/6) (w^p = frob_w() w).
template <class T>
struct Fp12 {
  using F2 = typename T::F2;
  using F6 = Fp6<T>;
  F6 c0, c1;

  CUZK_HD static Fp12 zero() { return {F6::zero(), F6::zero()}; }
  CUZK_HD static Fp12 one() { return {F6::one(), F6::zero()}; }
  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  CUZK_HD bool is_one() const { return *this == one(); }
  CUZK_HD bool operator==(const Fp12& o) const { return c0 == o.c0 && c1 == o.c1; }
  CUZK_HD bool operator!=(const Fp12& o) const { return !(*this == o); }
  CUZK_HD Fp12 operator+(const Fp12& b) const { return {c0 + b.c0, c1 + b.c1}; }
  CUZK_HD Fp12 operator-(const Fp12& b) const { return {c0 - b.c0, c1 - b.c1}; }
  CUZK_HD Fp12 operator-() const { return {-c0, -c1}; }

  // Karatsuba: 3 Fp6 multiplies (18 F2 multiplies). (a + b w)(a' + b' w) = aa' + bb' v + ((a+b)(a'+b') - aa' - bb') w.
  CUZK_HD Fp12 operator*(const Fp12& o) const {
    F6 aa = c0 * o.c0, bb = c1 * o.c1;
    return {aa + bb.mul_by_v(), (c0 + c1) * (o.c0 + o.c1) - aa - bb};
  }
  // Complex squaring: 2 Fp6 multiplies. (a + b w)^2 = (a+b)(a + v b) - ab - v ab + 2ab w.
  CUZK_HD Fp12 sqr() const {
    F6 ab = c0 * c1;
    return {(c0 + c1) * (c0 + c1.mul_by_v()) - ab - ab.mul_by_v(), ab.dbl()};
  }
  CUZK_HD Fp12& operator*=(const Fp12& b) { return *this = *this * b; }

  // 1/(a + b w) = (a - b w)/(a^2 - v b^2): one Fp6 inversion.
  CUZK_HD Fp12 inv() const {
    F6 d = (c0.sqr() - c1.sqr().mul_by_v()).inv();
    return {c0 * d, -(c1 * d)};
  }
  // x^(p^6): w^(p^6) = -w, so this is the conjugation of Fp12/Fp6. On the cyclotomic subgroup
  // (every reduced pairing value) it is the inverse.
  CUZK_HD Fp12 conj() const { return {c0, -c1}; }

  // Multiply by a Miller line value l0 + l1 v + l4 v w (slots 0, 1 and 4 of the Fp6 pair; the
  // M-type twist puts lines there): 13 F2 multiplies instead of 18.
  CUZK_HD Fp12 mul_by_014(const F2& l0, const F2& l1, const F2& l4) const {
    F6 aa = c0.mul_by_01(l0, l1);
    F6 bb = c1.mul_by_1(l4);
    F6 t = (c0 + c1).mul_by_01(l0, l1 + l4);
    return {aa + bb.mul_by_v(), t - aa - bb};
  }

  // x -> x^p. The c1 half carries one extra factor w^(p-1) = xi^((p-1)/6):
  // (b0 w + b1 v w + b2 v^2 w)^p = frob(b0 + b1 v + b2 v^2) * frob_w() * w.
  CUZK_HD Fp12 frobenius() const { return {c0.frobenius(), c1.frobenius() * T::frob_w()}; }
  // x -> x^(p^k) by k applications (k <= 11; the pairing needs k = 1, 2).
  CUZK_HD Fp12 frobenius_map(int k) const {
    Fp12 r = *this;
    for (int i = 0; i < k; i++) r = r.frobenius();
    return r;
  }

  // Granger-Scott squaring, valid only on the cyclotomic subgroup (x^(p^6+1) = 1, p^4-p^2+1 | order),
  // i.e. after the easy part of the final exponentiation. View Fp12 as Fp4[w]/(w^3 - s) with
  // Fp4 = F2[s]/(s^2 - xi), s = w^3, and x = A0 + A1 w + A2 w^2 with
  //   A0 = c0.c0 + c1.c1 s,  A1 = c1.c0 + c0.c2 s,  A2 = c0.c1 + c1.c2 s.
  // For such x: x^2 = (3 A0^2 - 2 conj(A0)) + (3 s A2^2 + 2 conj(A1)) w + (3 A1^2 - 2 conj(A2)) w^2,
  // where conj is s -> -s. Three Fp4 squarings = 6 F2 squarings, against 12 F2 multiplies for sqr().
  CUZK_HD Fp12 cyclotomic_sqr() const {
    F2 t00, t01, t10, t11, t20, t21;
    fp4_sqr(c0.c0, c1.c1, t00, t01);  // A0^2
    fp4_sqr(c1.c0, c0.c2, t10, t11);  // A1^2
    fp4_sqr(c0.c1, c1.c2, t20, t21);  // A2^2
    Fp12 r;
    // B0 = 3 A0^2 - 2 conj(A0): (3 t00 - 2 a, 3 t01 + 2 b) for A0 = a + b s.
    r.c0.c0 = (t00 - c0.c0).dbl() + t00;
    r.c1.c1 = (t01 + c1.c1).dbl() + t01;
    // B1 = 3 s A2^2 + 2 conj(A1), with s (t20 + t21 s) = xi t21 + t20 s.
    F2 st = t21.mul_by_xi();
    r.c1.c0 = (st + c1.c0).dbl() + st;
    r.c0.c2 = (t20 - c0.c2).dbl() + t20;
    // B2 = 3 A1^2 - 2 conj(A2).
    r.c0.c1 = (t10 - c0.c1).dbl() + t10;
    r.c1.c2 = (t11 + c1.c2).dbl() + t11;
    return r;
  }
  // x^e on the cyclotomic subgroup by cyclotomic square-and-multiply (e is a plain 64-bit exponent).
  CUZK_HD Fp12 cyclotomic_pow_u64(u64 e) const {
    Fp12 r = one();
    for (int i = 63; i >= 0; i--) {
      r = r.cyclotomic_sqr();
      if ((e >> i) & 1) r = r * *this;
    }
    return r;
  }
  // x^e for any element and any plain exponent (tests and reference checks).
  template <int M>
  CUZK_HD Fp12 pow(const BigInt<M>& e) const {
    Fp12 r = one();
    for (int i = e.num_bits() - 1; i >= 0; i--) {
      r = r.sqr();
      if (e.bit(i)) r = r * *this;
    }
    return r;
  }

 private:
  // (a + b s)^2 = (a^2 + xi b^2) + 2ab s in Fp4 = F2[s]/(s^2 - xi): 3 F2 squarings.
  CUZK_HD static void fp4_sqr(const F2& a, const F2& b, F2& r0, F2& r1) {
    F2 a2 = a.sqr(), b2 = b.sqr();
    r0 = a2 + b2.mul_by_xi();
    r1 = (a + b).sqr() - a2 - b2;
  }
};

}  // namespace cuzk
