// Optimal ate Miller loop (multi-pair, projective G2 steps with sparse line multiplication) and
// final exponentiation for BLS12-381.
#include "pairing.hpp"

#include <vector>

namespace cuzk {
namespace bls12_381 {

namespace {

// Homogeneous projective point on the twist E': y^2 = x^3 + b', b' = 4 xi; x = X/Z, y = Y/Z.
struct TwistProj {
  Fq2 x, y, z;
};

// A line through points of E', in the form l0 + lx * xP v + ly * yP v w once evaluated at P.
struct Line {
  Fq2 l0, lx, ly;
};

// 3 b' = 12 xi times s, by additions only.
Fq2 mul_by_3b(const Fq2& s) {
  Fq2 t = s.mul_by_xi();
  t = t.dbl() + t;           // 3 xi s
  return t.dbl().dbl();      // 12 xi s
}

// The M-type twist psi(x', y') = (x' / w^2, y' / w^3) maps E' to E (w^6 = xi turns 4 xi into 4).
// A line on E through psi(T) with slope lambda' / w, evaluated at P = (xP, yP) and multiplied by w^3
// (an Fq4 element, erased by the final exponentiation), reads
//   (lambda' xT - yT) - lambda' xP w^2 + yP w^3 = (lambda' xT - yT) - lambda' xP v + yP v w,
// so it occupies Fq12 slots 0, 1 and 4; any Fq2 scale factor is erased too.

// Doubling step: T <- 2T and the tangent line at T. Tangent slope lambda' = 3X^2 / (2YZ); scaled by 2YZ
// the line is (3X^3 - 2Y^2 Z)/Z - 3X^2 xP v + 2YZ yP v w, and 3X^3 = 3(Y^2 Z - b' Z^3) on the curve
// makes the constant Y^2 - 3b'Z^2. The doubled point (scaled by 4 to avoid halvings):
//   X3 = 2XY (Y^2 - 9b'Z^2),  Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4,  Z3 = 8 Y^3 Z.
// Cost: 3 Fq2 multiplies and 6 squarings.
Line double_step(TwistProj& t) {
  Fq2 b = t.y.sqr(), c = t.z.sqr();
  Fq2 e = mul_by_3b(c);                      // 3b' Z^2
  Fq2 f = e.dbl() + e;                       // 9b' Z^2
  Fq2 yz2 = (t.y + t.z).sqr() - b - c;       // 2YZ
  Fq2 xx = t.x.sqr();
  Line l{b - e, -(xx.dbl() + xx), yz2};
  Fq2 e2 = e.sqr();                          // 9 b'^2 Z^4
  Fq2 e12 = (e2.dbl() + e2).dbl().dbl();     // 108 b'^2 Z^4
  Fq2 x3 = (t.x * t.y * (b - f)).dbl();
  Fq2 y3 = (b + f).sqr() - e12;
  Fq2 z3 = (b * yz2).dbl().dbl();
  t = {x3, y3, z3};
  return l;
}

// Addition step: T <- T + Q (Q affine) and the line through them. With theta = Y - yQ Z and
// L = X - xQ Z the slope is theta / L; scaled by L the line is (theta xQ - L yQ) - theta xP v + L yP v w.
// Sum (projective chord formulas): D = L^2, E = L^3, F = Z theta^2, G = X D, H = E + F - 2G,
//   X3 = L H,  Y3 = theta (G - H) - E Y,  Z3 = Z E.
// L = 0 would mean T = +-Q, impossible for [k]Q with 1 < k < r on the r-torsion. Cost: 11 multiplies, 2 squarings.
Line add_step(TwistProj& t, const G2Affine& q) {
  Fq2 theta = t.y - q.y * t.z;
  Fq2 lam = t.x - q.x * t.z;
  Line l{theta * q.x - lam * q.y, -theta, lam};
  Fq2 d = lam.sqr(), e = lam * d, f = t.z * theta.sqr(), g = t.x * d;
  Fq2 h = e + f - g.dbl();
  Fq2 x3 = lam * h;
  Fq2 y3 = theta * (g - h) - e * t.y;
  Fq2 z3 = t.z * e;
  t = {x3, y3, z3};
  return l;
}

Fq12 mul_line(const Fq12& f, const Line& l, const G1Affine& p) {
  return f.mul_by_014(l.l0, l.lx * p.x, l.ly * p.y);
}

// g^x for g in the cyclotomic subgroup; x < 0 so g^x = conj(g^|x|).
Fq12 cyclotomic_exp_by_x(const Fq12& g) { return g.cyclotomic_pow_u64(PairingParams::X_ABS).conj(); }

}  // namespace

// Loop over the bits of |x| below the top one: square f, multiply in every pair's tangent line, and
// on a set bit every pair's chord line. The squaring chain is shared by all pairs. |x| has 64 bits of
// which 6 are set, so this is 63 doubling steps and 5 addition steps per pair.
Fq12 multi_miller_loop(const G1Affine* ps, const G2Affine* qs, size_t n) {
  std::vector<G1Affine> p;
  std::vector<G2Affine> q;
  std::vector<TwistProj> t;
  for (size_t i = 0; i < n; i++) {
    if (ps[i].is_inf() || qs[i].is_inf()) continue;
    p.push_back(ps[i]);
    q.push_back(qs[i]);
    t.push_back({qs[i].x, qs[i].y, Fq2::one()});
  }
  Fq12 f = Fq12::one();
  if (p.empty()) return f;
  const u64 x = PairingParams::X_ABS;
  for (int bit = 62; bit >= 0; bit--) {
    if (bit != 62) f = f.sqr();
    for (size_t j = 0; j < p.size(); j++) f = mul_line(f, double_step(t[j]), p[j]);
    if ((x >> bit) & 1)
      for (size_t j = 0; j < p.size(); j++) f = mul_line(f, add_step(t[j], q[j]), p[j]);
  }
  // f_{x,Q} = 1 / (f_{|x|,Q} * v_{[|x|]Q}) for negative x; the vertical line lies in a subfield and
  // 1/f equals conj(f) after the easy part, so conjugation is enough.
  if (PairingParams::X_IS_NEGATIVE) f = f.conj();
  return f;
}

Fq12 miller_loop(const G1Affine& p, const G2Affine& q) { return multi_miller_loop(&p, &q, 1); }

Fq12 final_exponentiation(const Fq12& f) {
  // Easy part, f^((q^6-1)(q^2+1)): conj(f)/f lands in the norm-1 subgroup, the q^2+1 power in the
  // cyclotomic subgroup where conj is the inverse and cyclotomic squaring applies.
  Fq12 m = f.conj() * f.inv();
  m = m.frobenius_map(2) * m;
  // Hard part, m^(3 (q^4-q^2+1)/r) with 3 (q^4-q^2+1)/r = (x-1)^2 (x+q)(x^2+q^2-1) + 3:
  // five exponentiations by x, three Frobenius maps and a handful of multiplies.
  Fq12 a = cyclotomic_exp_by_x(m) * m.conj();               // m^(x-1)
  a = cyclotomic_exp_by_x(a) * a.conj();                    // m^((x-1)^2)
  Fq12 b = cyclotomic_exp_by_x(a) * a.frobenius();          // ^(x+q)
  Fq12 c = cyclotomic_exp_by_x(cyclotomic_exp_by_x(b)) * b.frobenius_map(2) * b.conj();  // ^(x^2+q^2-1)
  return c * m.cyclotomic_sqr() * m;                        // * m^3
}

Fq12 pairing(const G1Affine& p, const G2Affine& q) { return final_exponentiation(miller_loop(p, q)); }

bool pairing_product_is_one(const G1Affine* ps, const G2Affine* qs, size_t n) {
  return final_exponentiation(multi_miller_loop(ps, qs, n)).is_one();
}

}  // namespace bls12_381
}  // namespace cuzk
