// G2 level-0 accumulation over lane pairs for shared plans over precomputed bases (see
// msm_pair_kernels.cuh).
#include "msm_pair_kernels.cuh"

namespace cuzk {
namespace gpu {

void msm_acc0_g2_pair_shared(const DG2Affine* points, u32 idx_offset, u32 n_scalars, u32 stride,
                             const u32* vals, const u32* start, const u32* end, const u32* toff, const u32* map,
                             u32 l0, u32 total, const u32* order, DG2xyzz* out, cudaStream_t s) {
  launch_acc0_pair<true>(points, idx_offset, n_scalars, stride, vals, start, end, toff, map, l0, total, order, out, s);
}

}  // namespace gpu
}  // namespace cuzk
