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
  HugeVec<BigInt<4>> k;  // both curves' r fit 4 limbs
  HugeVec<uint8_t> neg;  // 1 where the original scalar is r - k
  // Converts from Montgomery form and folds, threaded. F is the curve's Fr.
  template <class F>
  static MsmScalars prepare(const F* s, size_t n);
};

// sum s_i P_i over points[0..n) with the prepared scalars s.k[offset .. offset+n), for G1 or G2 of
// any curve (PC is the point group's curve struct, e.g. bn254::G2Curve).
template <class PC>
Jacobian<PC> msm(const Affine<PC>* points, const MsmScalars& s, size_t offset, size_t n);

// Several MSMs as one pool of window tasks: a thread done with one MSM's tasks goes on with the
// next MSM's instead of idling at a barrier while the other threads finish their last windows.
// Each result is written when run() returns; the points and scalars must live until then.
class MsmJobBase;
class MsmBatch {
 public:
  MsmBatch();
  ~MsmBatch();
  template <class PC>
  void add(const Affine<PC>* points, const MsmScalars& s, size_t offset, size_t n, Jacobian<PC>* out);
  void run();

 private:
  std::vector<std::unique_ptr<MsmJobBase>> jobs_;
};

}  // namespace cuzk

#define CUZK_CPU_MSM_NAMES(ns)                                                                               \
  namespace cuzk::ns {                                                                                      \
  inline G1 msm_g1(const G1Affine* p, const MsmScalars& s, size_t off, size_t n) { return cuzk::msm(p, s, off, n); } \
  inline G2 msm_g2(const G2Affine* p, const MsmScalars& s, size_t off, size_t n) { return cuzk::msm(p, s, off, n); } \
  }
CUZK_CPU_MSM_NAMES(bls12_381)
CUZK_CPU_MSM_NAMES(bn254)
