// The GPU benchmarks (cuzk-bench): device-resident timings of the kernels and of whole proofs through
// the `cuda` backend. Plain C++: gpu_bench.cpp is compiled by the host compiler.
#pragma once
#include <string>
#include <vector>

#include "kernels/gpu_api.hpp"

namespace cuzk {
namespace gpu {

// Timing of device-resident work with CUDA events: `warmup` untimed runs, then `runs` timed ones.
struct BenchStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
  // Estimated physical lower bound on this device: the 32-bit integer multiply-adds the work needs
  // (field multiplies of the algorithm as run, 2*2*NW^2 each) over SMs x 64 lanes x clock, or the
  // bytes it must move over the memory bandwidth, whichever is larger.
  double bound_ms = 0;
  std::string detail;  // e.g. the window width and digit entries used
};

// The kernel benchmarks are curve-generic: C a curve of math/curves.hpp, HC one of its groups and
// FrP its FrParams; each is instantiated for Bls12_381 and Bn254.
// ntt_passes: GpuOptions::ntt_passes (0: automatic).
template <class C>
BenchStats bench_ntt(int device, int log_n, bool inverse, int warmup, int runs, int ntt_passes);
// The fused H stage (three inverse NTTs, coset scaling, three forward NTTs, a*b-c) at 2^log_n.
template <class C>
BenchStats bench_h_stage(int device, int log_n, int warmup, int runs, int ntt_passes);
// Fr multiply throughput in registers, one entry per multiply formulation (field_bench.cu).
std::vector<BenchStats> bench_field(int device, int warmup, int runs);
// Points and scalars are uploaded once; each run is scalar preparation + sort + buckets + reduction.
template <class HC, class FrP>
BenchStats bench_msm_g1(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window,
                        int warmup, int runs);
template <class HC, class FrP>
BenchStats bench_msm_g2(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window,
                        int warmup, int runs);
// Same-process A/B of the plain MSM (automatic window) and the MSM over precomputed bases (automatic
// shared window, table built once): 2 * rounds results, plain and precomputed alternating.
template <class HC, class FrP>
std::vector<BenchStats> bench_msm_g1_ab(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n,
                                        int warmup, int runs, int rounds);
template <class HC, class FrP>
std::vector<BenchStats> bench_msm_g2_ab(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n,
                                        int warmup, int runs, int rounds);

// The arithmetic bound of one whole proof on this device, each part counted as its own benchmark row
// counts it: every MSM's mixed additions (10 Fq products per digit entry, G2's Fq2 products as 3)
// and bucket sums (28 per bucket) at the window width that needs the fewest, over precomputed bases
// (one set of buckets for every window), with the digit entries estimated from its scalars' bit
// lengths; the H stage (six NTTs of n/2 log n Fr products, 4n for the coset scalings and a*b - c);
// and eval_products Fr products for a = A w, b = B w, c = a o b. w_hist / c_hist: how many of the
// witness values of A, B1, B2 (all of w) / of C (the private ones) have a folded value of b bits
// (b < 256), as MsmEngine::histogram counts them. The H MSM's scalars count as random.
struct ProofBound {
  double ms = 0, msm_ms = 0, ntt_ms = 0, eval_ms = 0;
};
template <class C>
ProofBound proof_bound(const unsigned long long* w_hist, const unsigned long long* c_hist, int log_domain,
                       double eval_products);

// The benchmark driver: prints one line per measurement and returns a process exit status (0 ok,
// 1 failure, 2 usage error, 3 no CUDA device).
int bench_main(const std::vector<std::string>& args);
const char* bench_usage();

}  // namespace gpu
}  // namespace cuzk
