// BN254's optimal ate pairing: a Miller loop on the D-type twist with projective steps (no
// inversion per step) and sparse line products, and the final exponentiation.
#include "bn254_pairing.hpp"

#include <vector>

namespace cuzk {
namespace bn254 {

namespace {

// y^(-x) on the cyclotomic subgroup, where the inverse is the conjugate.
Fq12 exp_by_neg_x(const Fq12& y) { return y.cyclotomic_pow_u64(PairingParams::X).conj(); }

// The D-type twist: psi(x', y') = (x' w^2, y' w^3) maps E': y^2 = x^3 + b' (b' = 3/xi) onto E. A
// line on E through psi(T) with the twist's slope lambda (E's slope is lambda w), evaluated at
// P = (xP, yP):
//   yP - yT w^3 - lambda w (xP - xT w^2) = yP - lambda xP w + (lambda xT - yT) w^3,
// i.e. slots w^0, w^1 and w^3 of Fq12. The loop keeps T in homogeneous projective coordinates
// (x = X/Z, y = Y/Z), so that no step inverts: each line is scaled by an Fq2 factor (lambda's
// denominator), which the final exponentiation erases as it erases the vertical lines.
struct TwistProj {
  Fq2 x, y, z;
};

// A line l0 + l1 w + l3 w^3, its P-dependent coefficients already multiplied in.
struct Line {
  Fq2 l0, l1, l3;
};

// Doubling step: T <- 2T and the tangent at T. The slope is 3X^2 / (2YZ); scaled by 2YZ the line is
// 2YZ yP - 3X^2 xP w + (3X^3 - 2Y^2 Z)/Z w^3, and on the curve 3X^3 = 3(Y^2 Z - b' Z^3), so the last
// coefficient is Y^2 - 3b' Z^2. The doubled point, scaled by 4 to avoid halvings:
//   X3 = 2XY (Y^2 - 9b' Z^2),  Y3 = (Y^2 + 9b' Z^2)^2 - 108 b'^2 Z^4,  Z3 = 8 Y^3 Z.
// Cost: 4 Fq2 multiplies (one by the constant 3b') and 6 squarings, then 2 Fq scalings by P.
Line double_step(TwistProj& t, const G1Affine& p, const Fq2& b3) {
  Fq2 b = t.y.sqr(), c = t.z.sqr();
  Fq2 e = c * b3;                            // 3b' Z^2
  Fq2 f = e.dbl() + e;                       // 9b' Z^2
  Fq2 yz2 = (t.y + t.z).sqr() - b - c;       // 2YZ
  Fq2 xx = t.x.sqr();
  Fq2 xx3 = xx.dbl() + xx;
  Line l{{yz2.c0 * p.y, yz2.c1 * p.y}, {-(xx3.c0 * p.x), -(xx3.c1 * p.x)}, b - e};
  Fq2 e2 = e.sqr();
  Fq2 e12 = (e2.dbl() + e2).dbl().dbl();     // 108 b'^2 Z^4
  Fq2 x3 = (t.x * t.y * (b - f)).dbl();
  Fq2 y3 = (b + f).sqr() - e12;
  Fq2 z3 = (b * yz2).dbl().dbl();
  t = {x3, y3, z3};
  return l;
}

// Addition step: T <- T + Q (Q affine) and the chord through them. With theta = Y - yQ Z and
// L = X - xQ Z the slope is theta / L; the chord also passes through Q, so scaled by L it reads
// L yP - theta xP w + (theta xQ - L yQ) w^3. The sum (projective chord formulas): D = L^2, E = L^3,
// F = Z theta^2, G = X D, H = E + F - 2G, X3 = L H, Y3 = theta (G - H) - E Y, Z3 = Z E.
// L = 0 would mean T = +-Q, impossible for the multiples of Q on the r-torsion the loop meets.
Line add_step(TwistProj& t, const G2Affine& q, const G1Affine& p) {
  Fq2 theta = t.y - q.y * t.z;
  Fq2 lam = t.x - q.x * t.z;
  Line l{{lam.c0 * p.y, lam.c1 * p.y}, {-(theta.c0 * p.x), -(theta.c1 * p.x)}, theta * q.x - lam * q.y};
  Fq2 d = lam.sqr(), e = lam * d, f = t.z * theta.sqr(), g = t.x * d;
  Fq2 h = e + f - g.dbl();
  Fq2 x3 = lam * h;
  Fq2 y3 = theta * (g - h) - e * t.y;
  Fq2 z3 = t.z * e;
  t = {x3, y3, z3};
  return l;
}

// f * l for l = a + b w with a = l0 (in Fq2) and b = l1 + l3 v in Fq6: by Karatsuba over w an Fq2
// scaling of an Fq6, two sparse Fq6 products and their additions, instead of a full Fq12 product.
Fq12 mul_by_line(const Fq12& f, const Line& l) {
  Fq6 aa = {f.c0.c0 * l.l0, f.c0.c1 * l.l0, f.c0.c2 * l.l0};
  Fq6 bb = f.c1.mul_by_01(l.l1, l.l3);
  Fq6 t = (f.c0 + f.c1).mul_by_01(l.l1 + l.l0, l.l3);
  return {aa + bb.mul_by_v(), t - aa - bb};
}

// The q-power Frobenius carried to E' (untwist, Frobenius, twist), psi: (x, y) -> (conj(x) gamma^2,
// conj(y) gamma^3). On Jacobian coordinates conj(Z) joins them: conj is a field automorphism, so
// x = X/Z^2 maps to conj(X)/conj(Z)^2.
struct Psi {
  Fq2 g2 = PairingParams::frob_v(), g3 = PairingParams::gamma3();
  G2Affine operator()(const G2Affine& q) const { return {q.x.conj() * g2, q.y.conj() * g3}; }
  G2 operator()(const G2& q) const { return {q.x.conj() * g2, q.y.conj() * g3, q.z.conj()}; }
};

}  // namespace

Fq12 multi_miller_loop(const G1Affine* ps, const G2Affine* qs, size_t n) {
  const u128 loop = (u128)6 * PairingParams::X + 2;  // 65 bits
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
  const Fq2 b3 = G2Curve::b().dbl() + G2Curve::b();
  int top = 127;
  while (!((loop >> top) & 1)) top--;
  for (int bit = top - 1; bit >= 0; bit--) {
    if (bit != top - 1) f = f.sqr();
    for (size_t k = 0; k < p.size(); k++) f = mul_by_line(f, double_step(t[k], p[k], b3));
    if ((loop >> bit) & 1)
      for (size_t k = 0; k < p.size(); k++) f = mul_by_line(f, add_step(t[k], q[k], p[k]));
  }
  // The two closing chords of the optimal ate pairing: with Q1 = psi(Q) and Q2 = -psi^2(Q).
  const Psi psi;
  for (size_t k = 0; k < p.size(); k++) {
    const G2Affine q1 = psi(q[k]);
    const G2Affine f2 = psi(q1);
    f = mul_by_line(f, add_step(t[k], q1, p[k]));
    f = mul_by_line(f, add_step(t[k], G2Affine{f2.x, -f2.y}, p[k]));
  }
  return f;
}

Fq12 miller_loop(const G1Affine& p, const G2Affine& q) { return multi_miller_loop(&p, &q, 1); }

// Easy part y = f^((q^6 - 1)(q^2 + 1)) with a conjugation, an inversion and one Frobenius. The hard
// part raises y to 2x(6x^2 + 3x + 1)(q^4 - q^2 + 1)/r, a multiple of the textbook exponent that the
// BN structure reaches with three exponentiations by x (Fuentes-Castaneda, Knapp and
// Rodriguez-Henriquez): with x-powers of y built up as
//   B = y^-2x, D = y^-6x, E = y^6x^2, K = y^(12x^3 + 6x^2 + 6x), L = K B, N = y^(12x^3 + 12x^2 + 6x + 1),
// the result is frob^3(L y^-1) * frob^2(K) * frob(L) * N. Raising to a fixed power prime to r keeps
// the pairing bilinear; this one is what snarkjs and @noble/curves compute, so values (the
// verification key's alphabeta) compare 1:1.
Fq12 final_exponentiation(const Fq12& f) {
  Fq12 y = f.conj() * f.inv();
  y = y.frobenius_map(2) * y;
  Fq12 a = exp_by_neg_x(y);            // y^-x
  Fq12 b = a.cyclotomic_sqr();         // y^-2x
  Fq12 d = b.cyclotomic_sqr() * b;     // y^-6x
  Fq12 e = exp_by_neg_x(d);            // y^6x^2
  Fq12 g = exp_by_neg_x(e.cyclotomic_sqr());  // y^-12x^3
  Fq12 k = g.conj() * e * d.conj();    // y^(12x^3 + 6x^2 + 6x)
  Fq12 l = k * b;                      // y^(12x^3 + 6x^2 + 4x)
  Fq12 n = k * e * y;                  // y^(12x^3 + 12x^2 + 6x + 1)
  Fq12 t = y.conj() * l;               // y^(12x^3 + 6x^2 + 4x - 1)
  return t.frobenius_map(3) * k.frobenius_map(2) * l.frobenius() * n;
}

Fq12 pairing(const G1Affine& p, const G2Affine& q) { return final_exponentiation(miller_loop(p, q)); }

bool pairing_product_is_one(const G1Affine* ps, const G2Affine* qs, size_t n) {
  return final_exponentiation(multi_miller_loop(ps, qs, n)).is_one();
}

// Dai, Lin, Zhao and Zhou (eprint 2022/348, BN curves): Q in E'(Fq2) lies in G2 iff
//   [x+1]Q + psi([x]Q) + psi^2([x]Q) = psi^3([2x]Q),
// with psi the Frobenius on E' (it acts on G2 as [q]). One multiplication by the 63-bit x instead of
// the 254 bits of [r]Q.
bool g2_in_subgroup(const G2Affine& q) {
  if (q.is_inf()) return true;
  const Psi psi;
  const G2 p = G2::from_affine(q);
  const G2 xp = p.mul(BigInt<1>{{PairingParams::X}});
  const G2 lhs = xp + p + psi(xp) + psi(psi(xp));
  const G2 rhs = psi(psi(psi(xp.dbl())));
  return lhs == rhs;
}

}  // namespace bn254
}  // namespace cuzk
