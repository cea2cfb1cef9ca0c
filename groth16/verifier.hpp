// Groth16 verification: e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) = 1.
#pragma once
#include <string>
#include <vector>

#include "formats.hpp"

namespace cuzk {

// True iff the proof is valid for these public signals. Throws std::invalid_argument when the
// number of public signals does not match the key, or a proof point is off the curve / not in the subgroup.
bool verify_proof(const VerificationKey& vk, const std::vector<Fr>& pub, const Proof& proof);

}  // namespace cuzk
