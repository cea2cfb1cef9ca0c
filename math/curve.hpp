// Short Weierstrass curves y^2 = x^3 + b (a = 0) over any field F: affine storage form and Jacobian
// arithmetic. C supplies `using F` and `static F b()`. Used for G1 (F = Fq) and G2 (F = Fq2).
#pragma once
#include <algorithm>
#include <array>
#include <vector>

#include "common.hpp"

namespace cuzk {

// Affine point. The point at infinity is (0, 0), which is never on a curve with b != 0; this
// matches snarkjs's encoding of infinity as all-zero bytes.
template <class C>
struct Affine {
  using Curve = C;
  using F = typename C::F;
  F x, y;
  CUZK_HD static Affine infinity() { return {F::zero(), F::zero()}; }
  CUZK_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
  CUZK_HD bool on_curve() const { return is_inf() || y.sqr() == x.sqr() * x + C::b(); }
  CUZK_HD bool operator==(const Affine& o) const { return x == o.x && y == o.y; }
  CUZK_HD bool operator!=(const Affine& o) const { return !(*this == o); }
  CUZK_HD Affine operator-() const { return is_inf() ? *this : Affine{x, -y}; }
};

// Jacobian point (X, Y, Z) for x = X/Z^2, y = Y/Z^3; Z = 0 is infinity.
template <class C>
struct Jacobian {
  using Curve = C;
  using F = typename C::F;
  using Aff = Affine<C>;
  F x, y, z;

  CUZK_HD static Jacobian infinity() { return {F::one(), F::one(), F::zero()}; }
  CUZK_HD static Jacobian from_affine(const Aff& a) {
    return a.is_inf() ? infinity() : Jacobian{a.x, a.y, F::one()};
  }
  CUZK_HD bool is_inf() const { return z.is_zero(); }
  CUZK_HD Jacobian operator-() const { return {x, -y, z}; }

  // dbl-2009-l (a = 0): 2M + 5S.
  CUZK_HD Jacobian dbl() const {
    if (is_inf()) return *this;
    F A = x.sqr(), B = y.sqr(), Cc = B.sqr();
    F D = ((x + B).sqr() - A - Cc).dbl();
    F E = A.dbl() + A, Fv = E.sqr();
    Jacobian r;
    r.x = Fv - D.dbl();
    F c8 = Cc.dbl().dbl().dbl();
    r.y = E * (D - r.x) - c8;
    r.z = (y * z).dbl();
    return r;
  }

  // add-2007-bl: 11M + 5S, with the doubling and inverse cases handled (MSM buckets hit both).
  CUZK_HD Jacobian operator+(const Jacobian& q) const {
    if (is_inf()) return q;
    if (q.is_inf()) return *this;
    F z1z1 = z.sqr(), z2z2 = q.z.sqr();
    F u1 = x * z2z2, u2 = q.x * z1z1;
    F s1 = y * q.z * z2z2, s2 = q.y * z * z1z1;
    F h = u2 - u1, rr = (s2 - s1).dbl();
    if (h.is_zero()) return rr.is_zero() ? dbl() : infinity();
    F i = h.dbl().sqr(), j = h * i, v = u1 * i;
    Jacobian r;
    r.x = rr.sqr() - j - v.dbl();
    r.y = rr * (v - r.x) - (s1 * j).dbl();
    r.z = ((z + q.z).sqr() - z1z1 - z2z2) * h;
    return r;
  }

  // madd-2007-bl, mixed Jacobian + affine: 7M + 4S.
  CUZK_HD Jacobian add_affine(const Aff& q) const {
    if (q.is_inf()) return *this;
    if (is_inf()) return from_affine(q);
    F z1z1 = z.sqr();
    F u2 = q.x * z1z1, s2 = q.y * z * z1z1;
    F h = u2 - x, rr = (s2 - y).dbl();
    if (h.is_zero()) return rr.is_zero() ? dbl() : infinity();
    F hh = h.sqr(), i = hh.dbl().dbl(), j = h * i, v = x * i;
    Jacobian r;
    r.x = rr.sqr() - j - v.dbl();
    r.y = rr * (v - r.x) - (y * j).dbl();
    r.z = (z + h).sqr() - z1z1 - hh;
    return r;
  }
  CUZK_HD Jacobian operator-(const Jacobian& q) const { return *this + (-q); }
  CUZK_HD Jacobian& operator+=(const Jacobian& q) { return *this = *this + q; }

  CUZK_HD Aff to_affine() const {
    if (is_inf()) return Aff::infinity();
    F zi = z.inv(), zi2 = zi.sqr();
    return {x * zi2, y * zi2 * zi};
  }
  // Projective equality without inversions: X1 Z2^2 = X2 Z1^2 and Y1 Z2^3 = Y2 Z1^3.
  CUZK_HD bool operator==(const Jacobian& q) const {
    if (is_inf() || q.is_inf()) return is_inf() && q.is_inf();
    F z1z1 = z.sqr(), z2z2 = q.z.sqr();
    return x * z2z2 == q.x * z1z1 && y * z2z2 * q.z == q.y * z1z1 * z;
  }
  CUZK_HD bool operator!=(const Jacobian& q) const { return !(*this == q); }

  // k*P by left-to-right double-and-add over a plain little-endian scalar (not constant time:
  // used for setup, verification and tests, never on secret data beyond the prover's r and s).
  template <int M>
  CUZK_HD Jacobian mul(const BigInt<M>& k) const {
    Jacobian r = infinity();
    for (int i = k.num_bits() - 1; i >= 0; i--) {
      r = r.dbl();
      if (k.bit(i)) r = r + *this;
    }
    return r;
  }
};

// Converts many Jacobian points to affine with a single inversion (Montgomery's trick).
template <class C>
std::vector<Affine<C>> batch_to_affine(const std::vector<Jacobian<C>>& pts) {
  using F = typename C::F;
  size_t n = pts.size();
  std::vector<F> zs(n), scratch(n);
  for (size_t i = 0; i < n; i++) zs[i] = pts[i].z;
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!zs[i].is_zero()) acc = acc * zs[i];
  }
  F inv = acc.inv();
  std::vector<Affine<C>> out(n);
  for (size_t i = n; i-- > 0;) {
    if (zs[i].is_zero()) {
      out[i] = Affine<C>::infinity();
      continue;
    }
    F zi = inv * scratch[i];
    inv = inv * zs[i];
    F zi2 = zi.sqr();
    out[i] = {pts[i].x * zi2, pts[i].y * zi2 * zi};
  }
  return out;
}

// The width-5 non-adjacent form of k, least significant digit first: digits odd in [-15, 15] or
// zero, at least four zeros after every non-zero one, so that sum d_i 2^i = k.
template <int M>
std::vector<int8_t> wnaf5(const BigInt<M>& k) {
  u64 v[M + 1];
  for (int i = 0; i < M; i++) v[i] = k.l[i];
  v[M] = 0;
  auto nonzero = [&] {
    for (int i = 0; i <= M; i++)
      if (v[i]) return true;
    return false;
  };
  std::vector<int8_t> out;
  out.reserve(M * 64 + 1);
  while (nonzero()) {
    int d = 0;
    if (v[0] & 1) {
      d = int(v[0] & 31);
      if (d >= 16) d -= 32;
      // v -= d: the low five bits become zero, with a borrow or carry into the limbs above.
      if (d > 0) {
        u64 b = u64(d);
        for (int i = 0; i <= M && b; i++) {
          u64 t = v[i];
          v[i] = t - b;
          b = t < b;
        }
      } else {
        u64 c = u64(-d);
        for (int i = 0; i <= M && c; i++) {
          v[i] += c;
          c = v[i] < c;
        }
      }
    }
    out.push_back(int8_t(d));
    for (int i = 0; i < M; i++) v[i] = (v[i] >> 1) | (v[i + 1] << 63);
    v[M] >>= 1;
  }
  return out;
}

// sum k_i P_i over a handful of points (Straus): one doubling chain serves every term, and each
// point enters by the width-5 NAF of its scalar from its odd multiples P, 3P, ..., 15P, so a
// 255-bit term costs about 51 additions instead of double-and-add's 128 additions and 255
// doublings. For the few multiplications of proof assembly and verification; not constant time
// (like mul).
template <class C, int M>
Jacobian<C> linear_combination(const Jacobian<C>* p, const BigInt<M>* k, size_t n) {
  std::vector<std::array<Jacobian<C>, 8>> odd(n);
  std::vector<std::vector<int8_t>> naf(n);
  size_t top = 0;
  for (size_t i = 0; i < n; i++) {
    naf[i] = wnaf5(k[i]);
    top = std::max(top, naf[i].size());
    if (naf[i].empty()) continue;
    const Jacobian<C> twice = p[i].dbl();
    odd[i][0] = p[i];
    for (int j = 1; j < 8; j++) odd[i][j] = odd[i][j - 1] + twice;
  }
  Jacobian<C> acc = Jacobian<C>::infinity();
  for (size_t b = top; b-- > 0;) {
    acc = acc.dbl();
    for (size_t i = 0; i < n; i++) {
      if (b >= naf[i].size() || !naf[i][b]) continue;
      int d = naf[i][b];
      acc += d > 0 ? odd[i][d >> 1] : -odd[i][(-d) >> 1];
    }
  }
  return acc;
}

}  // namespace cuzk
