// Fr multiply throughput with the data in registers (cuzk_gpu_bench field): one kernel per multiply
// formulation of kernels/ntt/radix4_passes.cuh, as chains of dependent products and as DIF
// butterflies, so that the rate of the multiply alone, and what ptxas made of it (cuobjdump -sass),
// can be set beside the NTT's.
// GPU-NOTES gives sppark's Fr multiply at 60.1e9/s on this H200.
#include <string>
#include <vector>

#include "bench/gpu/bench_util.cuh"
#include "bench/gpu/gpu_bench.hpp"
#include "kernels/ntt/radix4_passes.cuh"

namespace cuzk {
namespace gpu {

namespace {

constexpr int kFieldChains = 4;  // independent values per thread (latency hiding inside a warp)
// Mode beyond the fr_mul_lazy variants (kFrMul*): DFr::operator*, canonical.
constexpr int kFieldCanon = 4;

template <int Mode>
__device__ __forceinline__ DFr field_mul(const DFr& a, const DFr& b) {
  if constexpr (Mode == kFieldCanon)
    return a * b;
  else
    return fr_mul_lazy<Mode>(a, b);
}

// Same register budget as the NTT passes (256 threads, 3 blocks per SM). Bfly: two DIF butterflies
// (u + v, (u - v) w) per iteration over the four values; otherwise four products x w.
template <int Mode, bool Bfly>
__global__ void __launch_bounds__(256, 3) k_field_bench(DFr* io, const DFr* __restrict__ w, int iters) {
  const size_t n = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  DFr x[kFieldChains];
#pragma unroll
  for (int c = 0; c < kFieldChains; c++) x[c] = io[i + c * n];
  const DFr b = w[i & 1023];
#pragma unroll 1
  for (int it = 0; it < iters; it++) {
    if (Bfly) {
#pragma unroll
      for (int c = 0; c < kFieldChains; c += 2) {
        DFr u = x[c], v = x[c + 1];
        x[c] = fr_add_lazy(u, v);
        x[c + 1] = field_mul<Mode>(fr_sub_lazy(u, v), b);
      }
    } else {
#pragma unroll
      for (int c = 0; c < kFieldChains; c++) x[c] = field_mul<Mode>(x[c], b);
    }
  }
#pragma unroll
  for (int c = 0; c < kFieldChains; c++) io[i + c * n] = x[c];
}

template <int Mode, bool Bfly>
BenchStats run_field(const std::string& name, DFr* io, const DFr* w, int blocks, int iters, cudaStream_t s,
                     int warmup, int runs) {
  BenchStats r = time_runs(s, warmup, runs, [&] {
    k_field_bench<Mode, Bfly><<<blocks, 256, 0, s>>>(io, w, iters);
    CUZK_CUDA_LAUNCHED("k_field_bench");
  });
  const double muls = (double)blocks * 256 * iters * (Bfly ? kFieldChains / 2 : kFieldChains);
  const bool generic = Mode == kFrMulGeneric || Mode == kFieldCanon;
  r.bound_ms = muls * (generic ? kFrMulImad : 224.0) / imad_per_ms();
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s: %.1fe9 Fr multiplies/s", name.c_str(), muls / r.median_ms / 1e6);
  r.detail = buf;
  return r;
}

}  // namespace

std::vector<BenchStats> bench_field(int device, int warmup, int runs) {
  set_device(device);
  Stream st;
  int sms = 0;
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int blocks = sms * 3 * 8, iters = 512;
  const size_t n = (size_t)blocks * 256 * kFieldChains;
  DevBuf<DFr> io(n), w(1024);
  fill_random_fr(io.get(), n, 0xf1e1d, st.get());
  fill_random_fr(w.get(), 1024, 0x7a1d, st.get());
  cudaStream_t s = st.get();
  DFr* d = io.get();
  const DFr* t = w.get();
  return {run_field<kFieldCanon, false>("mul canonical (generic rows + final subtraction)", d, t, blocks, iters, s, warmup, runs),
          run_field<kFrMulGeneric, false>("mul lazy, generic rows", d, t, blocks, iters, s, warmup, runs),
          run_field<kFrMulFast, false>("mul lazy, r-shaped rows", d, t, blocks, iters, s, warmup, runs),
          run_field<kFrMulGeneric, true>("DIF butterfly, generic rows", d, t, blocks, iters, s, warmup, runs),
          run_field<kFrMulFast, true>("DIF butterfly, r-shaped rows", d, t, blocks, iters, s, warmup, runs)};
}

}  // namespace gpu
}  // namespace cuzk
