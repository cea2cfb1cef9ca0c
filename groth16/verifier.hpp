// Groth16 verification: e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) = 1, for one proof, and for
// many proofs of one key at once (a random linear combination of their equations).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "formats.hpp"
#include "math/pairings.hpp"

namespace cuzk::groth16 {

// True iff the proof is valid for these public signals. Throws std::invalid_argument when the
// number of public signals does not match the key, or a proof point is off the curve / not in the subgroup.
template <class C>
bool verify_proof(const VerificationKey<C>& vk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof);

// A verification key prepared for many checks: e(alpha, beta), a full pairing, is computed once
// here instead of once per proof, with its powers 0..15 for the batch check's exponentiation.
template <class C>
struct PreparedKey {
  using Fq12 = typename Pairing<C>::Fq12;
  VerificationKey<C> vk;
  std::array<Fq12, 16> alphabeta_pow;  // e(alpha, beta)^d for d = 0..15

  // Throws std::invalid_argument when the key has not nPublic + 1 IC points.
  explicit PreparedKey(VerificationKey<C> key);
  const Fq12& alphabeta() const { return alphabeta_pow[1]; }
};

// verify_proof with the prepared key: e(A, B) = e(alpha, beta) e(vk_x, gamma) e(C, delta) as three
// Miller loops and one final exponentiation, the result compared with the cached e(alpha, beta).
// Same contract (and exceptions) as the verify_proof above.
template <class C>
bool verify_proof(const PreparedKey<C>& pk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof);

// What a proof's check takes from its public signals alone, computed before the proof exists (while
// the device computes it): the Miller loop of e(-vk_x, gamma).
template <class C>
struct PublicPart {
  typename Pairing<C>::Fq12 ic_gamma;
};

// Throws std::invalid_argument when the number of public signals does not match the key.
template <class C>
PublicPart<C> prepare_public(const PreparedKey<C>& pk, const std::vector<typename C::Fr>& pub);

// verify_proof for public signals prepared ahead: what is left are the point checks, the Miller
// loops of e(A, B) and e(-C, delta), on two threads side by side, and the final exponentiation.
// This is the check of a proof that is alone, whose wait is its latency. Same exceptions as above,
// for the proof's points.
template <class C>
bool verify_proof(const PreparedKey<C>& pk, const PublicPart<C>& pub, const Proof<C>& proof);

// One proof of a batch: its public signals and the proof, neither owned.
template <class C>
struct ProofRef {
  const std::vector<typename C::Fr>* pub;
  const Proof<C>* proof;
};

// Verdicts for many proofs of one key, in order: true iff that proof is valid. A proof that
// verify_proof would refuse with an exception (a public-signal count that does not match the key,
// a point off the curve or outside its subgroup) is given false here; verify_proof tells why.
//
// All well-formed proofs are checked at once with random weights r_i (r_1 = 1, the others 128-bit
// and nonzero from the operating system's CSPRNG):
//   prod_i e(r_i A_i, B_i) = e(alpha, beta)^(sum r_i) e(sum r_i vk_x_i, gamma) e(sum r_i C_i, delta),
// that is n + 2 Miller loops and one final exponentiation. Each proof's equation says that
// X_i = e(A_i, B_i) / (e(alpha, beta) e(vk_x_i, gamma) e(C_i, delta)) is 1 in GT, a group of prime
// order r; the batch says prod X_i^(r_i) = 1. If some X_j != 1, then for any values of the other
// weights at most one r_j mod r satisfies it, so an invalid proof passes with probability at most
// 2^-128 (r_1 = 1 loses nothing: an X_1 != 1 alone makes the product differ from 1). Without the
// weights two invalid proofs whose errors cancel would pass. A failing batch is split in halves,
// recursively, with the same weights, until every proof has its own verdict: a half that holds
// clears its proofs, and when one half holds the other is known to fail (the whole is the product
// of the halves) without being checked again. A proof is only ever declared valid by a check that
// included it.
template <class C>
std::vector<bool> verify_batch(const PreparedKey<C>& pk, const std::vector<ProofRef<C>>& proofs);

// The batch equation above with the caller's weights (one per proof; none zero), for tests of the
// weighting itself. False for any proof that verify_batch would call malformed.
template <class C>
bool batch_equation_holds(const PreparedKey<C>& pk, const std::vector<ProofRef<C>>& proofs,
                          const std::vector<BigInt<2>>& weights);

}  // namespace cuzk::groth16

namespace cuzk::bls12_381 {
using groth16::verify_proof;
}
namespace cuzk::bn254 {
using groth16::verify_proof;
}
