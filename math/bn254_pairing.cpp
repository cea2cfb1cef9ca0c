// BN254's optimal ate pairing: a Miller loop on the D-type twist with projective steps (no
// inversion per step) and sparse line products, and the final exponentiation.
#include "bn254_pairing.hpp"

#include "twist_steps.hpp"

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
// so a step's raw line (twist_steps.hpp) gives slot w^0 its yP term, w^1 its xP term and w^3 its
// constant.
//
// f * l for l = a + b w with a = ay yP (in Fq2) and b = ax xP + c v in Fq6: by Karatsuba over w an
// Fq2 scaling of an Fq6, two sparse Fq6 products and their additions, instead of a full product.
Fq12 mul_line(const Fq12& f, const RawLine<Fq2>& l, const G1Affine& p) {
  const Fq2 l0{l.ay.c0 * p.y, l.ay.c1 * p.y}, l1{l.ax.c0 * p.x, l.ax.c1 * p.x};
  Fq6 aa = {f.c0.c0 * l0, f.c0.c1 * l0, f.c0.c2 * l0};
  Fq6 bb = f.c1.mul_by_01(l1, l.c);
  Fq6 t = (f.c0 + f.c1).mul_by_01(l1 + l0, l.c);
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
  LoopPairs<G1Affine, G2Affine, Fq2> pairs(ps, qs, n);
  Fq12 f = Fq12::one();
  if (pairs.size() == 0) return f;
  const Fq2 b3 = G2Curve::b().dbl() + G2Curve::b();
  auto mul_by_3b = [&](const Fq2& s) { return s * b3; };
  int top = 127;
  while (!((loop >> top) & 1)) top--;
  for (int bit = top - 1; bit >= 0; bit--) {
    if (bit != top - 1) f = f.sqr();
    for (size_t k = 0; k < pairs.size(); k++) f = mul_line(f, double_step(pairs.t[k], mul_by_3b), pairs.p[k]);
    if ((loop >> bit) & 1)
      for (size_t k = 0; k < pairs.size(); k++) f = mul_line(f, add_step(pairs.t[k], pairs.q[k]), pairs.p[k]);
  }
  // The two closing chords of the optimal ate pairing: with Q1 = psi(Q) and Q2 = -psi^2(Q).
  const Psi psi;
  for (size_t k = 0; k < pairs.size(); k++) {
    const G2Affine q1 = psi(pairs.q[k]);
    const G2Affine f2 = psi(q1);
    f = mul_line(f, add_step(pairs.t[k], q1), pairs.p[k]);
    f = mul_line(f, add_step(pairs.t[k], G2Affine{f2.x, -f2.y}), pairs.p[k]);
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
