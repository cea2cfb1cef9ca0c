// Groth16 verification: e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) = 1.
#pragma once
#include <string>
#include <vector>

#include "formats.hpp"

namespace cuzk::groth16 {

// True iff the proof is valid for these public signals. Throws std::invalid_argument when the
// number of public signals does not match the key, or a proof point is off the curve / not in the subgroup.
template <class C>
bool verify_proof(const VerificationKey<C>& vk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof);

}  // namespace cuzk::groth16

namespace cuzk::bls12_381 {
using groth16::verify_proof;
}
namespace cuzk::bn254 {
using groth16::verify_proof;
}
