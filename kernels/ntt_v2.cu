// The v2 NTT passes (kernels/ntt_core.cuh, "v2 passes"): register sub-rounds of up to R stages over
// a two-plane shared tile, lazy reduction, and a choice of Fr multiply (kFrMul*, ntt_v2_core.cuh).
// In a file of their own so that they compile beside ntt.cu; NttEngine::passes picks them.
#include <algorithm>
#include <string>

#include "engines.cuh"
#include "ntt_v2_core.cuh"

namespace cuzk {
namespace gpu {

namespace {

// MinB: blocks per SM the register allocation must allow (R = 2: 3 -> at most 85 registers, 4 -> 64).
template <int R, bool DIT, int Mul, int MinB>
__global__ void __launch_bounds__(1u << (kNttTileBits - R), MinB)
    k_ntt_pass_v2(const DFr* src, DFr* dst, const DFr* __restrict__ tw, NttPass p, NttScale fz) {
  extern __shared__ uint4 smem_raw[];
  u32* sm = reinterpret_cast<u32*>(smem_raw);
  const int nsr = ntt_v2_subrounds(p.t, R);
  for (int sr = 0; sr < nsr; sr++) {
    if (sr > 0) __syncthreads();
    ntt_v2_round<R, DIT, Mul>(p, sr, src, dst, sm, tw, blockIdx.x, threadIdx.x, fz);
  }
}

// The prefetching pass (r4pf): persistent blocks over tiles, two tile buffers.
template <int R, bool DIT, int Mul, int MinB>
__global__ void __launch_bounds__(1u << (kNttTileBits - R), MinB)
    k_ntt_pass_v2_pf(const DFr* src, DFr* dst, const DFr* __restrict__ tw, NttPass p, NttScale fz, u32 ntiles) {
  extern __shared__ uint4 smem_raw[];
  u32* buf0 = reinterpret_cast<u32*>(smem_raw);
  const u32 tile_words = 8 * ntt_tile_size(p), nthreads = blockDim.x;
  const int nsr = ntt_v2_subrounds(p.t, R);
  int cur = 0;
  if (blockIdx.x < ntiles) ntt_v2_tile_prefetch(p, src, buf0, blockIdx.x, threadIdx.x, nthreads);
  ntt_v2_copy_commit();
  for (u32 t = blockIdx.x; t < ntiles; t += gridDim.x) {
    ntt_v2_copy_wait();
    __syncthreads();  // this tile's copies visible to all; everyone is done with the other buffer
    u32* sm = buf0 + cur * tile_words;
    if (t + gridDim.x < ntiles)
      ntt_v2_tile_prefetch(p, src, buf0 + (cur ^ 1) * tile_words, t + gridDim.x, threadIdx.x, nthreads);
    ntt_v2_copy_commit();
    for (int sr = 0; sr < nsr; sr++) {
      if (sr > 0) __syncthreads();
      ntt_v2_round<R, DIT, Mul>(p, sr, src, dst, sm, tw, t, threadIdx.x, fz, true);
    }
    cur ^= 1;
  }
}

template <int R, bool DIT, int Mul, int MinB>
void launch_v2_pf_one(const DFr* src, DFr* dst, const DFr* tw, const NttPass& p, cudaStream_t s, const NttScale& fz) {
  auto kern = k_ntt_pass_v2_pf<R, DIT, Mul, MinB>;
  u32 threads = ntt_v2_threads(p, R);
  size_t bytes = 2 * size_t(ntt_tile_size(p)) * sizeof(DFr);
  CUZK_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  // Resident blocks per device (blocks per SM x SMs), asked once per device and tile shape.
  static int resident[64][2] = {};
  int dev = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&dev));
  int slot = ntt_tile_size(p) == (1u << kNttTileBits) ? 1 : 0;
  if (dev >= 64) dev = 63;
  if (resident[dev][slot] == 0) {
    int per_sm = 0, sms = 0;
    CUZK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, (int)threads, bytes));
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    resident[dev][slot] = std::max(per_sm, 1) * sms;
  }
  size_t ntiles = ntt_blocks(p);
  size_t grid = std::min<size_t>(ntiles, (size_t)resident[dev][slot]);
  kern<<<(unsigned)grid, threads, bytes, s>>>(src, dst, tw, p, fz, (u32)ntiles);
  CUZK_CUDA_LAUNCHED("k_ntt_pass_v2_pf");
}

template <int R, int Mul, int MinB>
void launch_v2_pf(DFr* d, DFr* scratch, const DFr* tw, const NttPass* ps, int np, cudaStream_t s, const NttScale& fz) {
  for (int i = 0; i < np; i++) {
    const DFr* src;
    DFr* dst;
    ntt_v2_pass_io(ps, np, i, d, scratch, src, dst);
    if (ps[i].dit)
      launch_v2_pf_one<R, true, Mul, MinB>(src, dst, tw, ps[i], s, fz);
    else
      launch_v2_pf_one<R, false, Mul, MinB>(src, dst, tw, ps[i], s, fz);
  }
}

template <int R, int Mul, int MinB>
void launch_v2(DFr* d, DFr* scratch, const DFr* tw, const NttPass* ps, int np, cudaStream_t s, const NttScale& fz) {
  for (int i = 0; i < np; i++) {
    const NttPass& p = ps[i];
    const DFr* src;
    DFr* dst;
    ntt_v2_pass_io(ps, np, i, d, scratch, src, dst);
    u32 threads = ntt_v2_threads(p, R);
    size_t bytes = size_t(ntt_tile_size(p)) * sizeof(DFr);
    if (p.dit)
      k_ntt_pass_v2<R, true, Mul, MinB><<<(unsigned)ntt_blocks(p), threads, bytes, s>>>(src, dst, tw, p, fz);
    else
      k_ntt_pass_v2<R, false, Mul, MinB><<<(unsigned)ntt_blocks(p), threads, bytes, s>>>(src, dst, tw, p, fz);
    CUZK_CUDA_LAUNCHED("k_ntt_pass_v2");
  }
}

}  // namespace

int ntt_v2_radix_bits(int variant) { return variant == kNttV2R2 ? 1 : 2; }

void ntt_v2_launch(int variant, DFr* d, const DFr* tw, const NttPass* ps, int np, cudaStream_t s,
                   const NttScale& fz, DFr* scratch) {
  if (ps[np - 1].perm_store && (np < 2 || !scratch)) throw GpuError("ntt_v2_launch: perm_store needs 2+ passes and scratch");
  switch (variant) {
    case kNttV2R4: launch_v2<2, kFrMulFast, 3>(d, scratch, tw, ps, np, s, fz); break;
    case kNttV2R4Plain: launch_v2<2, kFrMulGeneric, 3>(d, scratch, tw, ps, np, s, fz); break;
    case kNttV2R2: launch_v2<1, kFrMulFast, 2>(d, scratch, tw, ps, np, s, fz); break;
    case kNttV2R4Occ4: launch_v2<2, kFrMulFast, 4>(d, scratch, tw, ps, np, s, fz); break;
    case kNttV2R4Pf: launch_v2_pf<2, kFrMulFast, 3>(d, scratch, tw, ps, np, s, fz); break;
    case kNttV2R4Neg: launch_v2<2, kFrMulFastNeg, 3>(d, scratch, tw, ps, np, s, fz); break;
    case kNttV2R4Occ4Neg: launch_v2<2, kFrMulFastNeg, 4>(d, scratch, tw, ps, np, s, fz); break;
    default: throw GpuError("unknown NTT v2 variant " + std::to_string(variant));
  }
}

}  // namespace gpu
}  // namespace cuzk
