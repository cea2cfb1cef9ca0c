// BN254's optimal ate pairing: an affine Miller loop on the D-type twist and the final exponentiation
// by its definition. Verification pairs a handful of points per proof, so clarity wins over the
// projective formulas the prover would need.
#include "bn254_pairing.hpp"

#include <vector>

namespace cuzk {
namespace bn254 {

namespace {

// gamma = xi^((q-1)/6), from its definition (a 252-bit power in Fq2, a few microseconds: it is
// computed where it is used rather than cached in a function-local static, which GCC 12 at -O1 and
// above computes as zero for this initializer).
Fq2 gamma() {
  const Fq::Repr exp = {{0x34b017592414d4e1ULL, 0xee9591c2e6bda1c2ULL, 0xf40d60f3c0403964ULL,
                         0x0810b7bdd032f006ULL}};  // (q - 1)/6
  return Fq2{Fq::from_u64(9), Fq::one()}.pow(exp);
}

// y^(-x) on the cyclotomic subgroup, where the inverse is the conjugate.
Fq12 exp_by_neg_x(const Fq12& y) { return y.cyclotomic_pow_u64(PairingParams::X).conj(); }

// The D-type twist: psi(x', y') = (x' w^2, y' w^3) maps E': y^2 = x^3 + 3/xi onto E. A line on E
// through psi(T) with the twist's slope lambda (E's slope is lambda w), evaluated at P = (xP, yP):
//   yP - yT w^3 - lambda w (xP - xT w^2) = yP - lambda xP w + (lambda xT - yT) w^3,
// i.e. slots w^0, w^1 and w^3 of Fq12. Vertical lines lie in Fq6 and are erased by the final
// exponentiation, so they are left out.
Fq12 line(const Fq2& lambda, const G2Affine& t, const G1Affine& p) {
  Fq12 l = Fq12::zero();
  l.c0.c0 = Fq2{p.y, Fq::zero()};
  l.c1.c0 = -(lambda * Fq2{p.x, Fq::zero()});
  l.c1.c1 = lambda * t.x - t.y;
  return l;
}

// T <- 2T, returning the tangent line at T evaluated at P.
Fq12 double_step(G2Affine& t, const G1Affine& p) {
  Fq2 xx = t.x.sqr();
  Fq2 lambda = (xx.dbl() + xx) * t.y.dbl().inv();
  Fq12 l = line(lambda, t, p);
  Fq2 x3 = lambda.sqr() - t.x.dbl();
  t = G2Affine{x3, lambda * (t.x - x3) - t.y};
  return l;
}

// T <- T + Q (T != +-Q on the r-torsion for the multiples the loop meets), returning the chord.
Fq12 add_step(G2Affine& t, const G2Affine& q, const G1Affine& p) {
  Fq2 lambda = (q.y - t.y) * (q.x - t.x).inv();
  Fq12 l = line(lambda, t, p);
  Fq2 x3 = lambda.sqr() - t.x - q.x;
  t = G2Affine{x3, lambda * (t.x - x3) - t.y};
  return l;
}

// The q-power Frobenius carried to E' (untwist, Frobenius, twist): (x, y) -> (conj(x) gamma^2,
// conj(y) gamma^3), and applied twice: (x gamma2, y gamma3) with the norms of gamma^2, gamma^3.
G2Affine frobenius(const G2Affine& q) {
  Fq2 g = gamma(), g2 = g.sqr();
  return {q.x.conj() * g2, q.y.conj() * (g2 * g)};
}

}  // namespace

Fq2 PairingParams::frob_w() { return gamma(); }
Fq2 PairingParams::frob_v() { return gamma().sqr(); }
Fq2 PairingParams::frob_v2() { return gamma().sqr().sqr(); }

Fq12 multi_miller_loop(const G1Affine* ps, const G2Affine* qs, size_t n) {
  const u128 loop = (u128)6 * PairingParams::X + 2;  // 65 bits
  std::vector<size_t> live;
  for (size_t i = 0; i < n; i++)
    if (!ps[i].is_inf() && !qs[i].is_inf()) live.push_back(i);
  std::vector<G2Affine> t;
  for (size_t i : live) t.push_back(qs[i]);
  Fq12 f = Fq12::one();
  int top = 127;
  while (!((loop >> top) & 1)) top--;
  for (int bit = top - 1; bit >= 0; bit--) {
    f = f.sqr();
    for (size_t k = 0; k < live.size(); k++) f *= double_step(t[k], ps[live[k]]);
    if ((loop >> bit) & 1)
      for (size_t k = 0; k < live.size(); k++) f *= add_step(t[k], qs[live[k]], ps[live[k]]);
  }
  for (size_t k = 0; k < live.size(); k++) {
    G2Affine q1 = frobenius(qs[live[k]]), q2 = frobenius(q1);
    f *= add_step(t[k], q1, ps[live[k]]);
    f *= add_step(t[k], G2Affine{q2.x, -q2.y}, ps[live[k]]);
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

}  // namespace bn254
}  // namespace cuzk
