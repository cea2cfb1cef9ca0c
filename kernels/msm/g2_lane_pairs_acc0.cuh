// The G2 level-0 accumulation kernels over lane pairs (g2_lane_pairs.cuh), shared by
// g2_lane_pairs_acc0_plain.cu and g2_lane_pairs_acc0_shared.cu: one file per kind of plan, so that
// the two sets compile in parallel.
#pragma once
#include "kernels/engines.cuh"
#include "kernels/msm/g2_lane_pairs.cuh"

namespace cuzk {
namespace gpu {

// The device exchange: lanes 2j and 2j+1 of a warp form a pair (blockDim is a multiple of 32). Both
// always reach the same shuffles, so the pair's own two-lane mask is valid even where pairs diverge.
struct DevPairEx {
  u32 lane, mask;
  __device__ __forceinline__ u32 swap(u32 v) { return __shfl_xor_sync(mask, v, 1); }
};


template <bool Shared, class C>
__global__ void __launch_bounds__(kPairThreads)
    k_acc0_pair(const Affine<C>* points, u32 idx_offset, u32 n_scalars, u32 stride, const u32* vals, const u32* start,
                const u32* end, const u32* toff, const u32* map, u32 l0, u32 total, const u32* order,
                XYZZ<C>* out) {
  u32 t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
  if (t >= total) return;  // the same for both lanes of a pair
  if (order) t = order[t];  // tasks of similar length side by side (MsmEngine::task_order)
  DevPairEx ex{threadIdx.x & 1u, 3u << (threadIdx.x & 30u)};
  u32 b = map[t];
  u32 begin = start[b] + (t - toff[b]) * l0;
  u32 stop = min(begin + l0, end[b]);
  pair_acc_entries<Shared>(ex, points, idx_offset, n_scalars, stride, vals, begin, stop, out + t);
}

template <bool Shared, class C>
void launch_acc0_pair(const Affine<C>* points, u32 idx_offset, u32 n_scalars, u32 stride,
                      const u32* vals, const u32* start, const u32* end, const u32* toff, const u32* map, u32 l0,
                      u32 total, const u32* order, XYZZ<C>* out, cudaStream_t s) {
  unsigned grid = grid_for(2 * (size_t)total, kPairThreads);
  k_acc0_pair<Shared, C><<<grid, kPairThreads, 0, s>>>(points, idx_offset, n_scalars, stride, vals, start, end, toff,
                                                    map, l0, total, order, out);
  CUZK_CUDA_LAUNCHED("k_acc0_pair");
}

}  // namespace gpu
}  // namespace cuzk
