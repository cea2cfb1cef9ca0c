// BLS12-381's Fq6, Fq12 (math/tower.hpp) and its optimal ate pairing with final exponentiation.
// API:
//   struct Fq6 { Fq2 c0, c1, c2; ... };   Fq6 = Fq2[v]/(v^3 - (1+u))
//   struct Fq12 { Fq6 c0, c1; ... };      Fq12 = Fq6[w]/(w^2 - v)
//   Fq12 miller_loop(const G1Affine&, const G2Affine&);
//   Fq12 final_exponentiation(const Fq12&);
//   Fq12 pairing(const G1Affine& p, const G2Affine& q);        // e(p, q), reduced
//   bool pairing_product_is_one(const G1Affine* ps, const G2Affine* qs, size_t n);  // prod e(p_i,q_i) == 1
#pragma once
#include "bls12_381.hpp"
#include "tower.hpp"

namespace cuzk {

namespace bls12_381 {

// Constants of the pairing and of the endomorphisms, in Montgomery form. Each is re-derived from
// its definition in tests/pairing_test.cpp.
struct PairingParams {
  // |x| for the BLS parameter x = -0xd201000000010000 (negative: the Miller loop ends with a conjugation).
  static constexpr u64 X_ABS = 0xd201000000010000ULL;
  static constexpr bool X_IS_NEGATIVE = true;
  // gamma = xi^((q-1)/6): w^q = gamma w.
  static constexpr u64 GAMMA1_C0[6] = {0x07089552b319d465ULL, 0xc6695f92b50a8313ULL, 0x97e83cccd117228fULL,
                                       0xa35baecab2dc29eeULL, 0x1ce393ea5daace4dULL, 0x08f2220fb0fb66ebULL};
  static constexpr u64 GAMMA1_C1[6] = {0xb2f66aad4ce5d646ULL, 0x5842a06bfc497cecULL, 0xcf4895d42599d394ULL,
                                       0xc11b9cba40a8e8d0ULL, 0x2e3813cbe5a0de89ULL, 0x110eefda88847fafULL};
  // gamma^2 = xi^((q-1)/3) (purely imaginary) and gamma^4 = xi^(2(q-1)/3) (real).
  static constexpr u64 GAMMA2_C1[6] = {0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL,
                                       0x8eb60ebe01bacb9eULL, 0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL};
  static constexpr u64 GAMMA4_C0[6] = {0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL,
                                       0xa20d1b8c7e881024ULL, 0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL};
  // psi (untwist-Frobenius-twist on E'): (x, y) -> (conj(x) PSI_X, conj(y) PSI_Y) with
  // PSI_X = xi^(-(q-1)/3) (purely imaginary) and PSI_Y = xi^(-(q-1)/2) (c0 and c1).
  static constexpr u64 PSI_X_C1[6] = {0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL,
                                      0xa20d1b8c7e881024ULL, 0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL};
  static constexpr u64 PSI_Y_C0[6] = {0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL,
                                      0x92ad2afd19103e18ULL, 0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL};
  static constexpr u64 PSI_Y_C1[6] = {0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL,
                                      0xd1ca2087da74d4a7ULL, 0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL};
  // beta: the primitive cube root of unity in Fq for which phi(x, y) = (beta x, y) acts on G1 as
  // multiplication by -x^2 mod r (the other root gives the conjugate eigenvalue).
  static constexpr u64 BETA[6] = {0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
                                  0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL};

  using F2 = Fq2;
  CUZK_HD static F2 frob_w() { return {Fq::from_mont_limbs(GAMMA1_C0), Fq::from_mont_limbs(GAMMA1_C1)}; }
  CUZK_HD static F2 frob_v() { return {Fq::zero(), Fq::from_mont_limbs(GAMMA2_C1)}; }
  CUZK_HD static F2 frob_v2() { return {Fq::from_mont_limbs(GAMMA4_C0), Fq::zero()}; }
  CUZK_HD static F2 psi_x() { return {Fq::zero(), Fq::from_mont_limbs(PSI_X_C1)}; }
  CUZK_HD static F2 psi_y() { return {Fq::from_mont_limbs(PSI_Y_C0), Fq::from_mont_limbs(PSI_Y_C1)}; }
  CUZK_HD static Fq beta() { return Fq::from_mont_limbs(BETA); }
};

using Fq6 = Fp6<PairingParams>;
using Fq12 = Fp12<PairingParams>;

// The pairing used here and by snarkjs and @noble/curves is
//   e(P, Q) = f_{x,Q}(P)^(3 (q^12 - 1)/r),
// the cube of the textbook optimal ate pairing: the hard part uses the decomposition
// 3 (q^4 - q^2 + 1)/r = (x-1)^2 (x+q)(x^2+q^2-1) + 3. Cubing is a bijection on GT (3 does not divide
// r), so it is just as bilinear and non-degenerate, and its values match snarkjs's vk_alphabeta_12.

// f_{x,Q}(P) before final exponentiation; 1 if either point is infinity. Points must be in the
// prime-order subgroups (the Miller loop never meets a vertical line then).
Fq12 miller_loop(const G1Affine& p, const G2Affine& q);
// prod_i f_{x,Q_i}(P_i) with one shared squaring chain; pairs with an infinity contribute 1.
Fq12 multi_miller_loop(const G1Affine* ps, const G2Affine* qs, size_t n);
// f^(3 (q^12 - 1)/r): easy part f^((q^6-1)(q^2+1)), then the hard part on the cyclotomic subgroup.
Fq12 final_exponentiation(const Fq12& f);
// e(p, q), reduced.
Fq12 pairing(const G1Affine& p, const G2Affine& q);
// prod e(p_i, q_i) == 1, with a multi-Miller loop and a single final exponentiation.
bool pairing_product_is_one(const G1Affine* ps, const G2Affine* qs, size_t n);

}  // namespace bls12_381
}  // namespace cuzk
