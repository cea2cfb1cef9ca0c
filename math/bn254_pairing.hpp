// BN254's Fq6, Fq12 (math/tower.hpp over xi = 9 + u) and its optimal ate pairing, for verifying
// proofs on the host (the prover never pairs).
#pragma once
#include <cstddef>

#include "bn254.hpp"
#include "tower.hpp"

namespace cuzk {
namespace bn254 {

struct PairingParams {
  // BN parameter x: q = 36x^4 + 36x^3 + 24x^2 + 6x + 1, r = 36x^4 + 36x^3 + 18x^2 + 6x + 1.
  static constexpr u64 X = 4965661367192848881ULL;
  using F2 = Fq2;
  // gamma = xi^((q-1)/6) (w^q = gamma w), gamma^2 = xi^((q-1)/3), gamma^4 = xi^(2(q-1)/3).
  static F2 frob_w();
  static F2 frob_v();
  static F2 frob_v2();
};

using Fq6 = Fp6<PairingParams>;
using Fq12 = Fp12<PairingParams>;

// e(P, Q) = (f_{6x+2,Q}(P) l_{T,pi(Q)}(P) l_{T',-pi^2(Q)}(P))^(2x(6x^2+3x+1)(q^12 - 1)/r): the optimal
// ate pairing raised to a fixed power prime to r, the value snarkjs and @noble/curves compute.
// Points must be in the prime-order subgroups; pairs with an infinity contribute 1.
Fq12 multi_miller_loop(const G1Affine* ps, const G2Affine* qs, size_t n);
Fq12 miller_loop(const G1Affine& p, const G2Affine& q);
Fq12 final_exponentiation(const Fq12& f);
Fq12 pairing(const G1Affine& p, const G2Affine& q);
// prod e(p_i, q_i) == 1, with one Miller loop over all pairs and a single final exponentiation.
bool pairing_product_is_one(const G1Affine* ps, const G2Affine* qs, size_t n);

}  // namespace bn254
}  // namespace cuzk
