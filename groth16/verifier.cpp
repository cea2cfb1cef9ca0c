#include "verifier.hpp"

#include <stdexcept>
#include <string>

#include "math/pairing.hpp"
#include "math/subgroup.hpp"

namespace cuzk {

namespace {

void check_g1(const G1Affine& p, const char* name) {
  if (!p.on_curve()) throw std::invalid_argument(std::string("proof point ") + name + " is not on the curve");
  if (!bls12_381::g1_in_subgroup(p))
    throw std::invalid_argument(std::string("proof point ") + name + " is not in the prime-order subgroup");
}

void check_g2(const G2Affine& p, const char* name) {
  if (!p.on_curve()) throw std::invalid_argument(std::string("proof point ") + name + " is not on the curve");
  if (!bls12_381::g2_in_subgroup(p))
    throw std::invalid_argument(std::string("proof point ") + name + " is not in the prime-order subgroup");
}

}  // namespace

// Groth16 check in snarkjs's form: with vk_x = IC[0] + sum_i pub[i] IC[i+1],
//   e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) = 1,
// as one multi-Miller loop over four pairs and a single final exponentiation.
bool verify_proof(const VerificationKey& vk, const std::vector<Fr>& pub, const Proof& proof) {
  if (pub.size() != vk.n_public)
    throw std::invalid_argument("verify: expected " + std::to_string(vk.n_public) + " public signals, got " +
                                std::to_string(pub.size()));
  if (vk.ic.size() != (size_t)vk.n_public + 1)
    throw std::invalid_argument("verify: verification key has " + std::to_string(vk.ic.size()) +
                                " IC points, expected nPublic + 1 = " + std::to_string(vk.n_public + 1));
  check_g1(proof.a, "pi_a");
  check_g2(proof.b, "pi_b");
  check_g1(proof.c, "pi_c");

  G1 acc = G1::from_affine(vk.ic[0]);
  for (size_t i = 0; i < pub.size(); i++) acc += G1::from_affine(vk.ic[i + 1]).mul(pub[i].to_plain());
  G1Affine vk_x = acc.to_affine();

  G1Affine ps[4] = {-proof.a, vk.alpha1, vk_x, proof.c};
  G2Affine qs[4] = {proof.b, vk.beta2, vk.gamma2, vk.delta2};
  return bls12_381::pairing_product_is_one(ps, qs, 4);
}

}  // namespace cuzk
