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
  // gamma = xi^((q-1)/6) (w^q = gamma w) and its powers 2, 3 and 4, in Montgomery form: the
  // Frobenius maps of the final exponentiation and the twist's psi use them on every call, so they
  // are constants rather than a 252-bit power each time. tests/pairing_test.cpp re-derives them.
  static constexpr u64 GAMMA1_C0[4] = {0xaf9ba69633144907ULL, 0xca6b1d7387afb78aULL, 0x11bded5ef08a2087ULL,
                                       0x02f34d751a1f3a7cULL};
  static constexpr u64 GAMMA1_C1[4] = {0xa222ae234c492d72ULL, 0xd00f02a4565de15bULL, 0xdc2ff3a253dfc926ULL,
                                       0x10a75716b3899551ULL};
  static constexpr u64 GAMMA2_C0[4] = {0xb5773b104563ab30ULL, 0x347f91c8a9aa6454ULL, 0x7a007127242e0991ULL,
                                       0x1956bcd8118214ecULL};
  static constexpr u64 GAMMA2_C1[4] = {0x6e849f1ea0aa4757ULL, 0xaa1c7b6d89f89141ULL, 0xb6e713cdfae0ca3aULL,
                                       0x26694fbb4e82ebc3ULL};
  static constexpr u64 GAMMA3_C0[4] = {0xe4bbdd0c2936b629ULL, 0xbb30f162e133bacbULL, 0x31a9d1b6f9645366ULL,
                                       0x253570bea500f8ddULL};
  static constexpr u64 GAMMA3_C1[4] = {0xa1d77ce45ffe77c7ULL, 0x07affd117826d1dbULL, 0x6d16bd27bb7edc6bULL,
                                       0x2c87200285defeccULL};
  static constexpr u64 GAMMA4_C0[4] = {0x7361d77f843abe92ULL, 0xa5bb2bd3273411fbULL, 0x9c941f314b3e2399ULL,
                                       0x15df9cddbb9fd3ecULL};
  static constexpr u64 GAMMA4_C1[4] = {0x5dddfd154bd8c949ULL, 0x62cb29a5a4445b60ULL, 0x37bc870a0c7dd2b9ULL,
                                       0x24830a9d3171f0fdULL};
  // w^q = gamma w, v^q = gamma^2 v, v^2q = gamma^4 v^2; gamma^3 for psi's y.
  static F2 frob_w() { return {Fq::from_mont_limbs(GAMMA1_C0), Fq::from_mont_limbs(GAMMA1_C1)}; }
  static F2 frob_v() { return {Fq::from_mont_limbs(GAMMA2_C0), Fq::from_mont_limbs(GAMMA2_C1)}; }
  static F2 gamma3() { return {Fq::from_mont_limbs(GAMMA3_C0), Fq::from_mont_limbs(GAMMA3_C1)}; }
  static F2 frob_v2() { return {Fq::from_mont_limbs(GAMMA4_C0), Fq::from_mont_limbs(GAMMA4_C1)}; }
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
// Q (on the twist) is in the prime-order subgroup G2: an endomorphism test, the cost of one
// multiplication by x (tests cross-check it against [r]Q = O).
bool g2_in_subgroup(const G2Affine& q);

}  // namespace bn254
}  // namespace cuzk
