// BN254's optimal ate pairing: an affine Miller loop on the D-type twist and the final exponentiation
// by its definition. Verification pairs a handful of points per proof, so clarity wins over the
// projective formulas the prover would need; the one inversion that every affine step needs is
// shared by all the pairs of a multi-pair loop (Montgomery's trick), which is what makes a batch of
// proofs cheap.
#include "bn254_pairing.hpp"

#include <vector>

namespace cuzk {
namespace bn254 {

namespace {

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

// f * l for a line l = l0 + l1 w + l3 w^3 as line() builds it, l0 in Fq: l = a + b w with
// a = l0 and b = l1 + l3 v in Fq6, so by Karatsuba over w the product takes an Fq scaling, two
// sparse Fq6 products and their additions, instead of a full Fq12 product.
Fq12 mul_by_line(const Fq12& f, const Fq12& l) {
  const Fq l0 = l.c0.c0.c0;
  const Fq2 &l1 = l.c1.c0, &l3 = l.c1.c1;
  Fq6 aa = {f.c0.c0 * l0, f.c0.c1 * l0, f.c0.c2 * l0};
  Fq6 bb = f.c1.mul_by_01(l1, l3);
  Fq6 t = (f.c0 + f.c1).mul_by_01(l1 + Fq2{l0, Fq::zero()}, l3);
  return {aa + bb.mul_by_v(), t - aa - bb};
}

// 1/d for public values: the norm's inverse by the variable-time binary algorithm.
Fq2 inv_public(const Fq2& d) {
  Fq t = (d.c0.sqr() + d.c1.sqr()).inv_vartime();
  return {d.c0 * t, -(d.c1 * t)};
}

// Inverts d[0..n) in place with one inversion (Montgomery's trick). None may be zero.
void invert_all(std::vector<Fq2>& d, std::vector<Fq2>& scratch) {
  const size_t n = d.size();
  scratch.resize(n);
  Fq2 acc = Fq2::one();
  for (size_t i = 0; i < n; i++) scratch[i] = acc, acc = acc * d[i];
  Fq2 inv = inv_public(acc);
  for (size_t i = n; i-- > 0;) {
    Fq2 t = inv * scratch[i];
    inv = inv * d[i];
    d[i] = t;
  }
}

// T <- 2T given 1/(2 yT), returning the tangent line at T evaluated at P.
Fq12 double_step(G2Affine& t, const G1Affine& p, const Fq2& inv_2y) {
  Fq2 xx = t.x.sqr();
  Fq2 lambda = (xx.dbl() + xx) * inv_2y;
  Fq12 l = line(lambda, t, p);
  Fq2 x3 = lambda.sqr() - t.x.dbl();
  t = G2Affine{x3, lambda * (t.x - x3) - t.y};
  return l;
}

// T <- T + Q given 1/(xQ - xT) (T != +-Q on the r-torsion for the multiples the loop meets),
// returning the chord.
Fq12 add_step(G2Affine& t, const G2Affine& q, const G1Affine& p, const Fq2& inv_dx) {
  Fq2 lambda = (q.y - t.y) * inv_dx;
  Fq12 l = line(lambda, t, p);
  Fq2 x3 = lambda.sqr() - t.x - q.x;
  t = G2Affine{x3, lambda * (t.x - x3) - t.y};
  return l;
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
  std::vector<size_t> live;
  for (size_t i = 0; i < n; i++)
    if (!ps[i].is_inf() && !qs[i].is_inf()) live.push_back(i);
  const size_t m = live.size();
  std::vector<G2Affine> t;
  for (size_t i : live) t.push_back(qs[i]);
  std::vector<Fq2> d(m), scratch;
  // Every pair's chord with its own addend (q[k]), the denominators inverted together.
  auto add_all = [&](Fq12& f, const std::vector<G2Affine>& q) {
    for (size_t k = 0; k < m; k++) d[k] = q[k].x - t[k].x;
    invert_all(d, scratch);
    for (size_t k = 0; k < m; k++) f = mul_by_line(f, add_step(t[k], q[k], ps[live[k]], d[k]));
  };
  std::vector<G2Affine> q(m);
  for (size_t k = 0; k < m; k++) q[k] = qs[live[k]];
  Fq12 f = Fq12::one();
  if (m == 0) return f;
  int top = 127;
  while (!((loop >> top) & 1)) top--;
  for (int bit = top - 1; bit >= 0; bit--) {
    f = f.sqr();
    for (size_t k = 0; k < m; k++) d[k] = t[k].y.dbl();
    invert_all(d, scratch);
    for (size_t k = 0; k < m; k++) f = mul_by_line(f, double_step(t[k], ps[live[k]], d[k]));
    if ((loop >> bit) & 1) add_all(f, q);
  }
  std::vector<G2Affine> q1(m), q2(m);
  const Psi psi;
  for (size_t k = 0; k < m; k++) {
    q1[k] = psi(q[k]);
    G2Affine f2 = psi(q1[k]);
    q2[k] = G2Affine{f2.x, -f2.y};
  }
  add_all(f, q1);
  add_all(f, q2);
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
