// Optimal ate Miller loop (multi-pair, projective G2 steps with sparse line multiplication) and
// final exponentiation for BLS12-381.
#include "pairing.hpp"

#include "twist_steps.hpp"

#include <vector>

namespace cuzk {
namespace bls12_381 {

namespace {

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
// so a step's raw line (twist_steps.hpp) occupies Fq12 slots 0, 1 and 4.
Fq12 mul_line(const Fq12& f, const RawLine<Fq2>& l, const G1Affine& p) {
  return f.mul_by_014(l.c, l.ax * p.x, l.ay * p.y);
}

// g^x for g in the cyclotomic subgroup; x < 0 so g^x = conj(g^|x|).
Fq12 cyclotomic_exp_by_x(const Fq12& g) { return g.cyclotomic_pow_u64(PairingParams::X_ABS).conj(); }

}  // namespace

// Loop over the bits of |x| below the top one: square f, multiply in every pair's tangent line, and
// on a set bit every pair's chord line. The squaring chain is shared by all pairs. |x| has 64 bits of
// which 6 are set, so this is 63 doubling steps and 5 addition steps per pair.
Fq12 multi_miller_loop(const G1Affine* ps, const G2Affine* qs, size_t n) {
  LoopPairs<G1Affine, G2Affine, Fq2> pairs(ps, qs, n);
  Fq12 f = Fq12::one();
  if (pairs.size() == 0) return f;
  const u64 x = PairingParams::X_ABS;
  for (int bit = 62; bit >= 0; bit--) {
    if (bit != 62) f = f.sqr();
    for (size_t j = 0; j < pairs.size(); j++) f = mul_line(f, double_step(pairs.t[j], mul_by_3b), pairs.p[j]);
    if ((x >> bit) & 1)
      for (size_t j = 0; j < pairs.size(); j++) f = mul_line(f, add_step(pairs.t[j], pairs.q[j]), pairs.p[j]);
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
