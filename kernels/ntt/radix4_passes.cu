// The radix-4 register passes of the NTT (radix4_passes.cuh): radix-4 sub-rounds over a two-plane
// shared tile, lazy reduction, and the Fr multiply that is fastest at the size (ntt_radix4_kernel).
// In a file of their own so that they compile in parallel with ntt/engine.cu, whose NttEngine
// launches them.
#include <string>

#include "kernels/engines.cuh"
#include "kernels/ntt/radix4_passes.cuh"

namespace cuzk {
namespace gpu {

namespace {

// MinB: blocks per SM the register allocation must allow (3 -> at most 85 registers, 4 -> 64).
template <class F, int R, bool DIT, int Mul, int MinB>
__global__ void __launch_bounds__(1u << (kNttTileBits - R), MinB)
    k_ntt_pass_radix4(const F* src, F* dst, const F* __restrict__ tw, NttPass p, NttScale<F> fz) {
  extern __shared__ uint4 smem_raw[];
  u32* sm = reinterpret_cast<u32*>(smem_raw);
  const int nsr = ntt_radix4_subrounds(p.t, R);
  for (int sr = 0; sr < nsr; sr++) {
    if (sr > 0) __syncthreads();
    ntt_radix4_round<R, DIT, Mul>(p, sr, src, dst, sm, tw, blockIdx.x, threadIdx.x, fz);
  }
}

template <int R, int Mul, int MinB, class F>
void launch_radix4(F* d, F* scratch, const F* tw, const NttPass* ps, int np, cudaStream_t s, const NttScale<F>& fz) {
  for (int i = 0; i < np; i++) {
    const NttPass& p = ps[i];
    const F* src;
    F* dst;
    ntt_radix4_pass_io(ps, np, i, d, scratch, src, dst);
    u32 threads = ntt_radix4_threads(p, R);
    size_t bytes = size_t(ntt_tile_size(p)) * sizeof(F);
    if (p.dit)
      k_ntt_pass_radix4<F, R, true, Mul, MinB><<<(unsigned)ntt_blocks(p), threads, bytes, s>>>(src, dst, tw, p, fz);
    else
      k_ntt_pass_radix4<F, R, false, Mul, MinB><<<(unsigned)ntt_blocks(p), threads, bytes, s>>>(src, dst, tw, p, fz);
    CUZK_CUDA_LAUNCHED("k_ntt_pass_radix4");
  }
}

}  // namespace

template <class F>
void ntt_radix4_launch(F* d, const F* tw, const NttPass* ps, int np, cudaStream_t s, const NttScale<F>& fz, F* scratch) {
  if (ps[np - 1].perm_store && (np < 2 || !scratch)) throw GpuError("ntt_radix4_launch: perm_store needs 2+ passes and scratch");
  if constexpr (kFrRShaped<typename F::Params>) {
    if (ntt_radix4_kernel<F>(ps[0].k) == NttRadix4Kernel::Fast4) {
      launch_radix4<kNttRadixBits, kFrMulFast, 4>(d, scratch, tw, ps, np, s, fz);
      return;
    }
  }
  launch_radix4<kNttRadixBits, kFrMulGeneric, 3>(d, scratch, tw, ps, np, s, fz);
}
template void ntt_radix4_launch(Dev<Bls12_381>::Fr*, const Dev<Bls12_381>::Fr*, const NttPass*, int, cudaStream_t,
                                const NttScale<Dev<Bls12_381>::Fr>&, Dev<Bls12_381>::Fr*);
template void ntt_radix4_launch(Dev<Bn254>::Fr*, const Dev<Bn254>::Fr*, const NttPass*, int, cudaStream_t,
                                const NttScale<Dev<Bn254>::Fr>&, Dev<Bn254>::Fr*);

}  // namespace gpu
}  // namespace cuzk
