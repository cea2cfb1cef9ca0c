// Timing and synthetic data for the benchmark entry points: CUDA events around each run, warm-up
// runs first, median of the timed runs; random field elements generated on the device.
#pragma once
#include <algorithm>
#include <vector>

#include "bench/gpu/gpu_bench.hpp"
#include "kernels/cuda_util.cuh"
#include "kernels/fp_device.cuh"

namespace cuzk {
namespace gpu {

namespace {

// SplitMix64 of (seed, i): cheap, stateless, good enough for benchmark inputs.
__device__ inline u64 mix64(u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform-looking elements below 2^253 < r (BLS12-381's r > 2^254, BN254's > 2^253: valid Montgomery
// representations of both, never zero in practice).
template <class F>
__global__ void k_fill_random_fr(F* out, size_t n, u64 seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    F x;
    for (int j = 0; j < 4; j++) {
      u64 v = mix64(seed ^ (i * 4 + j) * 0xd1b54a32d192ed03ull);
      x.w[2 * j] = (u32)v;
      x.w[2 * j + 1] = (u32)(v >> 32);
    }
    x.w[7] &= 0x1fffffffu;
    out[i] = x;
  }
}

template <class F>
inline void fill_random_fr(F* d, size_t n, u64 seed, cudaStream_t s) {
  static_assert(F::NW == 8, "scalar fields of 8 words");
  k_fill_random_fr<<<grid_for(std::min<size_t>(n, size_t(1) << 22), 256), 256, 0, s>>>(d, n, seed);
  CUZK_CUDA_LAUNCHED("k_fill_random_fr");
}

}  // namespace

// 32-bit multiply-adds of one Montgomery multiply with NW words: NW^2 word products for a*b and
// NW^2 for m*p, each needing its low and high half.
constexpr double mont_mul_imad(int nw) { return 2.0 * 2 * nw * nw; }
constexpr double kFqMulImad = mont_mul_imad(12);  // BLS12-381's Fq
constexpr double kFrMulImad = mont_mul_imad(8);

// The device's 32-bit integer multiply-add rate: SMs x 64 lanes x clock.
inline double imad_per_ms() {
  int dev = 0, sms = 0, khz = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
  return (double)sms * 64.0 * khz;  // per millisecond
}
constexpr double kBytesPerMs = 4.3e9;  // device-to-device copy rate measured on the H200 (4.3 TB/s)

template <class Fn>
BenchStats time_runs(cudaStream_t s, int warmup, int runs, Fn&& fn) {
  if (runs < 1) runs = 1;
  for (int i = 0; i < warmup; i++) fn();
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CUZK_CUDA_CHECK(cudaEventCreate(&a));
  CUZK_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int i = 0; i < runs; i++) {
    CUZK_CUDA_CHECK(cudaEventRecord(a, s));
    fn();
    CUZK_CUDA_CHECK(cudaEventRecord(b, s));
    CUZK_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  BenchStats r;
  r.runs = runs;
  r.min_ms = ms.front();
  r.max_ms = ms.back();
  r.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return r;
}

}  // namespace gpu
}  // namespace cuzk
