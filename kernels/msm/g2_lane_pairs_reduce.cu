// The bucket-side G2 kernels over lane pairs (g2_lane_pairs.cuh): the upper reduction levels
// (k_acc_level), the chunked running sums (k_chunks) and the chunk-group sums (k_group_sum) of
// msm/engine.cu, with two threads per task: one thread per G2 task sits at 255 registers with
// 1-1.8 KB of stack, and k_chunks runs only nb/32 threads, so each chain is long and latency-bound.
#include "kernels/msm/g2_lane_pairs_acc0.cuh"

namespace cuzk {
namespace gpu {

namespace {

template <class C>
__global__ void __launch_bounds__(kPairThreads) k_acc_level_pair(const XYZZ<C>* in, const u32* in_toff,
                                                                 const u32* in_ntask, const u32* toff, const u32* map,
                                                                 u32 l1, u32 total, XYZZ<C>* out) {
  u32 t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
  if (t >= total) return;
  DevPairEx ex{threadIdx.x & 1u, 3u << (threadIdx.x & 30u)};
  u32 b = map[t];
  u32 base = in_toff[b], stop_all = base + in_ntask[b];
  u32 begin = base + (t - toff[b]) * l1;
  u32 stop = min(begin + l1, stop_all);
  pair_acc_partials(ex, in, begin, stop, out + t);
}

// tree: as k_chunks, the block's kPairThreads / 2 chunk sums are also summed in shared memory.
template <class C>
__global__ void __launch_bounds__(kPairThreads) k_chunks_pair(const XYZZ<C>* buckets, u32 per_window, u32 K, u32 n,
                                                              bool tree, XYZZ<C>* out) {
  using F = typename C::F::Base;
  __shared__ __align__(16) unsigned char raw[kPairThreads / 4 * sizeof(XYZZ<C>)];
  u32 t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
  DevPairEx ex{threadIdx.x & 1u, 3u << (threadIdx.x & 30u)};
  if (!tree) {
    if (t >= n) return;
    u32 w = t / per_window, j = t % per_window;
    pair_chunk_sum(ex, buckets + (size_t)w * per_window * K, j, K, out + t);
    return;
  }
  XYZZ<C>* sm = reinterpret_cast<XYZZ<C>*>(raw);
  const u32 p = threadIdx.x >> 1;  // the pair within the block; both its lanes take every branch
  u32 w = t / per_window, j = t % per_window;
  PairXYZZ<F> v = pair_chunk_value(ex, buckets + (size_t)w * per_window * K, j, K);
  for (u32 h = blockDim.x >> 2; h > 0; h >>= 1) {
    if (p >= h && p < 2 * h) pair_store(ex, sm + (p - h), v);
    __syncthreads();
    if (p < h) v = pair_add(ex, v, pair_load(ex, sm + p));
    __syncthreads();
  }
  if (p == 0) pair_store(ex, out + blockIdx.x, v);
}

template <class C>
__global__ void __launch_bounds__(kPairThreads) k_group_sum_pair(const XYZZ<C>* in, u32 gs, u32 n_out,
                                                                 XYZZ<C>* out) {
  u32 t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
  if (t >= n_out) return;
  DevPairEx ex{threadIdx.x & 1u, 3u << (threadIdx.x & 30u)};
  pair_acc_partials(ex, in, t * gs, t * gs + gs, out + t);
}

}  // namespace

template <class C>
void msm_acc_level_g2_pair(const XYZZ<C>* in, const u32* in_toff, const u32* in_ntask, const u32* toff,
                           const u32* map, u32 l1, u32 total, XYZZ<C>* out, cudaStream_t s) {
  unsigned grid = grid_for(2 * (size_t)total, kPairThreads);
  k_acc_level_pair<C><<<grid, kPairThreads, 0, s>>>(in, in_toff, in_ntask, toff, map, l1, total, out);
  CUZK_CUDA_LAUNCHED("k_acc_level_pair");
}

template <class C>
void msm_chunks_g2_pair(const XYZZ<C>* buckets, u32 per_window, u32 K, u32 n, bool tree, XYZZ<C>* out,
                        cudaStream_t s) {
  unsigned grid = grid_for(2 * (size_t)n, kPairThreads);
  k_chunks_pair<C><<<grid, kPairThreads, 0, s>>>(buckets, per_window, K, n, tree, out);
  CUZK_CUDA_LAUNCHED("k_chunks_pair");
}

template <class C>
void msm_group_sum_g2_pair(const XYZZ<C>* in, u32 gs, u32 n_out, XYZZ<C>* out, cudaStream_t s) {
  unsigned grid = grid_for(2 * (size_t)n_out, kPairThreads);
  k_group_sum_pair<C><<<grid, kPairThreads, 0, s>>>(in, gs, n_out, out);
  CUZK_CUDA_LAUNCHED("k_group_sum_pair");
}

#define CUZK_INSTANTIATE(C)                                                                                  \
  template void msm_acc_level_g2_pair<Dev<C>::G2>(const Dev<C>::G2xyzz*, const u32*, const u32*, const u32*,        \
                                                  const u32*, u32, u32, Dev<C>::G2xyzz*, cudaStream_t);             \
  template void msm_chunks_g2_pair<Dev<C>::G2>(const Dev<C>::G2xyzz*, u32, u32, u32, bool, Dev<C>::G2xyzz*,         \
                                               cudaStream_t);                                                      \
  template void msm_group_sum_g2_pair<Dev<C>::G2>(const Dev<C>::G2xyzz*, u32, u32, Dev<C>::G2xyzz*, cudaStream_t);
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace gpu
}  // namespace cuzk
