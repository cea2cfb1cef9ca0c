// The v2 NTT passes (kernels/ntt_core.cuh, "v2 passes"): register sub-rounds of up to R stages over
// a two-plane shared tile, lazy reduction, and the Fr multiply that uses r = 1 - 2^32 (mod 2^64).
// In a file of their own so that they compile beside ntt.cu; NttEngine::passes picks them.
#include <string>

#include "engines.cuh"
#include "ntt_v2_core.cuh"

namespace cuzk {
namespace gpu {

namespace {

// MinB: blocks per SM the register allocation must allow (R = 2: 3 -> at most 85 registers, 4 -> 64).
template <int R, bool DIT, bool Fast, int MinB>
__global__ void __launch_bounds__(1u << (kNttTileBits - R), MinB)
    k_ntt_pass_v2(DFr* data, const DFr* __restrict__ tw, NttPass p, NttFuse fz) {
  extern __shared__ uint4 smem_raw[];
  u32* sm = reinterpret_cast<u32*>(smem_raw);
  const int nsr = ntt_v2_subrounds(p.t, R);
  for (int sr = 0; sr < nsr; sr++) {
    if (sr > 0) __syncthreads();
    ntt_v2_round<R, DIT, Fast>(p, sr, data, sm, tw, blockIdx.x, threadIdx.x, fz);
  }
}

template <int R, bool Fast, int MinB>
void launch_v2(DFr* d, const DFr* tw, const NttPass* ps, int np, cudaStream_t s, const NttFuse& fz) {
  for (int i = 0; i < np; i++) {
    const NttPass& p = ps[i];
    u32 threads = ntt_v2_threads(p, R);
    size_t bytes = size_t(ntt_tile_size(p)) * sizeof(DFr);
    if (p.dit)
      k_ntt_pass_v2<R, true, Fast, MinB><<<(unsigned)ntt_blocks(p), threads, bytes, s>>>(d, tw, p, fz);
    else
      k_ntt_pass_v2<R, false, Fast, MinB><<<(unsigned)ntt_blocks(p), threads, bytes, s>>>(d, tw, p, fz);
    CUZK_CUDA_LAUNCHED("k_ntt_pass_v2");
  }
}

}  // namespace

int ntt_v2_radix_bits(int variant) { return variant == kNttV2R2 ? 1 : 2; }

void ntt_v2_launch(int variant, DFr* d, const DFr* tw, const NttPass* ps, int np, cudaStream_t s,
                   const NttFuse& fz) {
  switch (variant) {
    case kNttV2R4: launch_v2<2, true, 3>(d, tw, ps, np, s, fz); break;
    case kNttV2R4Plain: launch_v2<2, false, 3>(d, tw, ps, np, s, fz); break;
    case kNttV2R2: launch_v2<1, true, 2>(d, tw, ps, np, s, fz); break;
    case kNttV2R4Occ4: launch_v2<2, true, 4>(d, tw, ps, np, s, fz); break;
    default: throw GpuError("unknown NTT v2 variant " + std::to_string(variant));
  }
}

}  // namespace gpu
}  // namespace cuzk
