// The CPU Pippenger driver behind msm_g1/msm_g2, with the scalar preparation split out so that the
// prover converts the witness once and reuses it for the A, B1, B2 and C MSMs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats.hpp"
#include "hugepages.hpp"

namespace cuzk {

// Scalars in the form the bucket method consumes: plain integers folded into [0, (r-1)/2]
// (s > (r-1)/2 becomes k = r - s with the point negated), so that small negative field
// elements such as -1 cost as little as small positive ones, and the top window needs 254 bits.
struct MsmScalars {
  HugeVec<bls12_381::Scalar> k;
  HugeVec<uint8_t> neg;  // 1 where the original scalar is r - k
  // Converts from Montgomery form and folds, threaded.
  static MsmScalars prepare(const Fr* s, size_t n);
};

// sum s_i P_i over points[0..n) with the prepared scalars s.k[offset .. offset+n).
G1 msm_g1(const G1Affine* points, const MsmScalars& s, size_t offset, size_t n);
G2 msm_g2(const G2Affine* points, const MsmScalars& s, size_t offset, size_t n);

}  // namespace cuzk
