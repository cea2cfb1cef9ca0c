#include "verifier.hpp"

#include <stdexcept>
#include <string>

#include "math/pairings.hpp"

namespace cuzk::groth16 {

namespace {

template <class C>
void check_g1(const typename C::G1Affine& p, const char* name) {
  if (!p.on_curve()) throw std::invalid_argument(std::string("proof point ") + name + " is not on the curve");
  if (!Pairing<C>::g1_in_subgroup(p))
    throw std::invalid_argument(std::string("proof point ") + name + " is not in the prime-order subgroup");
}

template <class C>
void check_g2(const typename C::G2Affine& p, const char* name) {
  if (!p.on_curve()) throw std::invalid_argument(std::string("proof point ") + name + " is not on the curve");
  if (!Pairing<C>::g2_in_subgroup(p))
    throw std::invalid_argument(std::string("proof point ") + name + " is not in the prime-order subgroup");
}

}  // namespace

// Groth16 check in snarkjs's form: with vk_x = IC[0] + sum_i pub[i] IC[i+1],
//   e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) = 1,
// as one multi-Miller loop over four pairs and a single final exponentiation.
template <class C>
bool verify_proof(const VerificationKey<C>& vk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof) {
  using G1 = typename C::G1;
  if (pub.size() != vk.n_public)
    throw std::invalid_argument("verify: expected " + std::to_string(vk.n_public) + " public signals, got " +
                                std::to_string(pub.size()));
  if (vk.ic.size() != (size_t)vk.n_public + 1)
    throw std::invalid_argument("verify: verification key has " + std::to_string(vk.ic.size()) +
                                " IC points, expected nPublic + 1 = " + std::to_string(vk.n_public + 1));
  check_g1<C>(proof.a, "pi_a");
  check_g2<C>(proof.b, "pi_b");
  check_g1<C>(proof.c, "pi_c");

  G1 acc = G1::from_affine(vk.ic[0]);
  for (size_t i = 0; i < pub.size(); i++) acc += G1::from_affine(vk.ic[i + 1]).mul(pub[i].to_plain());
  typename C::G1Affine vk_x = acc.to_affine();

  typename C::G1Affine ps[4] = {-proof.a, vk.alpha1, vk_x, proof.c};
  typename C::G2Affine qs[4] = {proof.b, vk.beta2, vk.gamma2, vk.delta2};
  return Pairing<C>::product_is_one(ps, qs, 4);
}

template bool verify_proof<Bls12_381>(const VerificationKey<Bls12_381>&, const std::vector<Bls12_381::Fr>&,
                                      const Proof<Bls12_381>&);
template bool verify_proof<Bn254>(const VerificationKey<Bn254>&, const std::vector<Bn254::Fr>&, const Proof<Bn254>&);

}  // namespace cuzk::groth16
