// The CPU Pippenger driver behind msm_g1/msm_g2, with the scalar preparation split out so that the
// prover converts the witness once and reuses it for the A, B1, B2 and C MSMs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
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

// Several MSMs as one pool of window tasks: a thread done with one MSM's tasks goes on with the
// next MSM's instead of idling at a barrier while the other threads finish their last windows.
// Each result is written when run() returns; the points and scalars must live until then.
class MsmJobBase;
class MsmBatch {
 public:
  MsmBatch();
  ~MsmBatch();
  void add(const G1Affine* points, const MsmScalars& s, size_t offset, size_t n, G1* out);
  void add(const G2Affine* points, const MsmScalars& s, size_t offset, size_t n, G2* out);
  void run();

 private:
  std::vector<std::unique_ptr<MsmJobBase>> jobs_;
};

}  // namespace cuzk
