// G2 level-0 accumulation over lane pairs for shared plans over precomputed bases (see
// g2_lane_pairs_acc0.cuh).
#include "kernels/msm/g2_lane_pairs_acc0.cuh"

namespace cuzk {
namespace gpu {

template <class C>
void msm_acc0_g2_pair_shared(const Affine<C>* points, u32 idx_offset, u32 n_scalars, u32 stride, const u32* vals,
                        const u32* start, const u32* end, const u32* toff, const u32* map, u32 l0, u32 total,
                        const u32* order, XYZZ<C>* out, cudaStream_t s) {
  launch_acc0_pair<true>(points, idx_offset, n_scalars, stride, vals, start, end, toff, map, l0, total, order, out, s);
}
#define CUZK_INSTANTIATE(C)                                                                             \
  template void msm_acc0_g2_pair_shared<Dev<C>::G2>(const Dev<C>::G2Affine*, u32, u32, u32, const u32*, const u32*, \
                                                 const u32*, const u32*, const u32*, u32, u32, const u32*,       \
                                                 Dev<C>::G2xyzz*, cudaStream_t);
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace gpu
}  // namespace cuzk
