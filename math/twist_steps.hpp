// The Miller loop's point steps on a curve's quadratic twist E': y^2 = x^3 + b', shared by BLS12-381
// and BN254. T is kept in homogeneous projective coordinates (x = X/Z, y = Y/Z), so that no step
// inverts. Each step returns the raw coefficients of its line, which every curve places in the Fq12
// slots of its own twist type and multiplies by P's coordinates; a line is scaled by an Fq2 factor
// that the final exponentiation erases.
#pragma once
#include <cstddef>
#include <vector>

#include "curve.hpp"

namespace cuzk {

template <class F2>
struct TwistProj {
  F2 x, y, z;
};

// A line through points of E', read at P = (xP, yP) as c + ax xP + ay yP, each term in the slot
// its twist gives it.
template <class F2>
struct RawLine {
  F2 c, ax, ay;
};

// Doubling step: T <- 2T and the tangent at T, given 3b'. The slope is 3X^2 / (2YZ); scaled by 2YZ,
// the tangent's constant (3X^3 - 2Y^2 Z)/Z is Y^2 - 3b' Z^2 on the curve (3X^3 = 3(Y^2 Z - b' Z^3)):
//   c = Y^2 - 3b' Z^2,  ax = -3X^2,  ay = 2YZ.
// The doubled point, scaled by 4 to avoid halvings:
//   X3 = 2XY (Y^2 - 9b' Z^2),  Y3 = (Y^2 + 9b' Z^2)^2 - 108 b'^2 Z^4,  Z3 = 8 Y^3 Z.
// Cost: 3 Fq2 multiplies, 6 squarings and the product by 3b' (additions only where b' is small).
template <class F2, class Mul3b>
RawLine<F2> double_step(TwistProj<F2>& t, Mul3b mul_by_3b) {
  F2 b = t.y.sqr(), c = t.z.sqr();
  F2 e = mul_by_3b(c);                      // 3b' Z^2
  F2 f = e.dbl() + e;                       // 9b' Z^2
  F2 yz2 = (t.y + t.z).sqr() - b - c;       // 2YZ
  F2 xx = t.x.sqr();
  RawLine<F2> l{b - e, -(xx.dbl() + xx), yz2};
  F2 e2 = e.sqr();                          // 9 b'^2 Z^4
  F2 e12 = (e2.dbl() + e2).dbl().dbl();     // 108 b'^2 Z^4
  F2 x3 = (t.x * t.y * (b - f)).dbl();
  F2 y3 = (b + f).sqr() - e12;
  F2 z3 = (b * yz2).dbl().dbl();
  t = {x3, y3, z3};
  return l;
}

// Addition step: T <- T + Q (Q affine) and the chord through them. With theta = Y - yQ Z and
// L = X - xQ Z the slope is theta / L; the chord passes through Q, so scaled by L:
//   c = theta xQ - L yQ,  ax = -theta,  ay = L.
// The sum (projective chord formulas): D = L^2, E = L^3, F = Z theta^2, G = X D, H = E + F - 2G,
//   X3 = L H,  Y3 = theta (G - H) - E Y,  Z3 = Z E.
// L = 0 would mean T = +-Q, impossible for the multiples of Q on the r-torsion a loop meets.
// Cost: 11 multiplies, 2 squarings.
template <class F2, class A>
RawLine<F2> add_step(TwistProj<F2>& t, const A& q) {
  F2 theta = t.y - q.y * t.z;
  F2 lam = t.x - q.x * t.z;
  RawLine<F2> l{theta * q.x - lam * q.y, -theta, lam};
  F2 d = lam.sqr(), e = lam * d, f = t.z * theta.sqr(), g = t.x * d;
  F2 h = e + f - g.dbl();
  F2 x3 = lam * h;
  F2 y3 = theta * (g - h) - e * t.y;
  F2 z3 = t.z * e;
  t = {x3, y3, z3};
  return l;
}

// The pairs of a multi-pair loop without a point at infinity (their factor is 1), each with its
// running point T = Q.
template <class G1A, class G2A, class F2>
struct LoopPairs {
  std::vector<G1A> p;
  std::vector<G2A> q;
  std::vector<TwistProj<F2>> t;
  LoopPairs(const G1A* ps, const G2A* qs, size_t n) {
    for (size_t i = 0; i < n; i++) {
      if (ps[i].is_inf() || qs[i].is_inf()) continue;
      p.push_back(ps[i]);
      q.push_back(qs[i]);
      t.push_back({qs[i].x, qs[i].y, F2::one()});
    }
  }
  size_t size() const { return p.size(); }
};

}  // namespace cuzk
