// The device-resident kernel benchmarks (NTT, H stage, MSM): CUDA events around each run, warm-up
// runs first, median of the timed runs, and next to each figure its estimated physical bound.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench/gpu/bench_util.cuh"
#include "bench/gpu/gpu_bench.hpp"
#include "kernels/engines.cuh"
#include "kernels/ntt/radix4_passes.cuh"

namespace cuzk {
namespace gpu {

namespace {

std::string window_detail(const MsmEngine& e) {
  return "window " + std::to_string(e.window()) + ", " + std::to_string(e.entries()) + " digit entries";
}

// Mixed additions (8M + 2S) for every digit entry, two full additions (12M + 2S) per bucket;
// fq_words: the words of the curve's Fq.
double msm_bound_ms(const MsmEngine& e, double base_muls_per_field_mul, int fq_words) {
  double muls = (double)e.entries() * 10 + (double)e.buckets() * 28;
  return muls * base_muls_per_field_mul * mont_mul_imad(fq_words) / imad_per_ms();
}

// Fq multiplies per field multiply of a device curve: G2's Fq2 multiply is three (Karatsuba).
template <class DC>
constexpr double kMulFactor = kIsPrimeField<typename DC::F> ? 1 : 3;
template <class DC>
constexpr int kFqWords = (int)(sizeof(typename DC::F) / sizeof(u32)) / (kIsPrimeField<typename DC::F> ? 1 : 2);

}  // namespace

template <class C>
BenchStats bench_ntt(int device, int log_n, bool inverse, int warmup, int runs, int ntt_passes) {
  using DFr = typename Dev<C>::Fr;
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine<DFr> eng(st.get(), ntt_passes);
  eng.reserve(log_n);
  DevBuf<DFr> d(n);
  fill_random_fr(d.get(), n, 0x5eed0000 + log_n, st.get());
  BenchStats r = time_runs(st.get(), warmup, runs, [&] {
    if (inverse)
      eng.inverse(d.get(), log_n, false);
    else
      eng.forward(d.get(), log_n, false);
  });
  NttPass ps[kNttMaxPasses];
  int np = eng.natural_plan(log_n, inverse, ps);
  const bool fused = np > 0 && ps[np - 1].perm_store;
  double compute = ((double)n / 2 * log_n + (inverse ? n : 0)) * kFrMulImad / imad_per_ms();
  double memory = (2.0 * np + (fused ? 0 : 2)) * n * sizeof(DFr) / kBytesPerMs;
  r.bound_ms = std::max(compute, memory);
  r.detail = std::to_string(np) + " passes (";
  for (int i = 0; i < np; i++) {
    if (i) r.detail += '+';
    r.detail += std::to_string(ps[i].t);
  }
  r.detail += fused ? " stages), bit reversal in the last pass" : " stages), separate bit reversal";
  return r;
}

template <class C>
BenchStats bench_h_stage(int device, int log_n, int warmup, int runs, int ntt_passes) {
  using DFr = typename Dev<C>::Fr;
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine<DFr> eng(st.get(), ntt_passes);
  eng.reserve(log_n);
  DevBuf<DFr> d(3 * n);
  fill_random_fr(d.get(), 3 * n, 0xabc00000 + log_n, st.get());
  BenchStats r = time_runs(st.get(), warmup, runs, [&] { eng.h_stage(d.get(), d.get() + n, d.get() + 2 * n, log_n); });
  NttPass ps[kNttMaxPasses];
  int np = eng.natural_plan(log_n, false, ps);
  double compute = (6.0 * n / 2 * log_n + 4.0 * n) * kFrMulImad / imad_per_ms();
  double memory = (3 * (4.0 * np + 2) + 4) * n * sizeof(DFr) / kBytesPerMs;
  r.bound_ms = std::max(compute, memory);
  r.detail = "3 x (inverse DIF, coset scale, forward DIT) + a*b-c";
  return r;
}

namespace {
// Same-process A/B: plain and precomputed-base MSM of the same data, alternating `rounds` times.
template <class HC, class FrP>
std::vector<BenchStats> bench_ab(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int warmup,
                                 int runs, int rounds) {
  using DC = DeviceCurve<HC>;
  MsmUpload<HC, Fp<FrP>> o(device, points, scalars, n);
  // The table for the automatic shared window, built once (timed on its own).
  o.eng.plan(o.sc.get(), n, 0, true);
  int c = o.eng.window();
  DevBuf<Affine<DC>> table;
  table.resize(n * msm_windows(c));
  BenchStats tb = time_runs(o.st.get(), 0, 1, [&] { msm_precompute(o.pts.get(), n, c, table.get(), o.st.get()); });
  std::vector<BenchStats> out;
  for (int r = 0; r < rounds; r++) {
    for (int shared = 0; shared < 2; shared++) {
      BenchStats st = time_runs(o.st.get(), warmup, runs, [&] {
        o.eng.plan(o.sc.get(), n, shared ? c : 0, shared);
        o.eng.run(shared ? table.get() : o.pts.get());
      });
      st.detail = window_detail(o.eng) + (shared ? ", precomputed bases (table of " + std::to_string(msm_windows(c)) +
                                                       " copies built in " + std::to_string(tb.median_ms) + " ms)"
                                                 : "");
      st.bound_ms = msm_bound_ms(o.eng, kMulFactor<DC>, kFqWords<DC>);
      out.push_back(st);
    }
  }
  return out;
}

// One MSM's plan and run, timed.
template <class HC, class FrP>
BenchStats bench_msm(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window, int warmup,
                     int runs) {
  using DC = DeviceCurve<HC>;
  MsmUpload<HC, Fp<FrP>> o(device, points, scalars, n);
  BenchStats r = time_runs(o.st.get(), warmup, runs, [&] {
    o.eng.plan(o.sc.get(), n, window);
    o.eng.run(o.pts.get());
  });
  r.detail = window_detail(o.eng);
  r.bound_ms = msm_bound_ms(o.eng, kMulFactor<DC>, kFqWords<DC>);
  return r;
}
}  // namespace

template <class HC, class FrP>
BenchStats bench_msm_g1(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window,
                        int warmup, int runs) {
  return bench_msm(device, points, scalars, n, window, warmup, runs);
}
template <class HC, class FrP>
BenchStats bench_msm_g2(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window,
                        int warmup, int runs) {
  return bench_msm(device, points, scalars, n, window, warmup, runs);
}
template <class HC, class FrP>
std::vector<BenchStats> bench_msm_g1_ab(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n,
                                        int warmup, int runs, int rounds) {
  return bench_ab(device, points, scalars, n, warmup, runs, rounds);
}
template <class HC, class FrP>
std::vector<BenchStats> bench_msm_g2_ab(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n,
                                        int warmup, int runs, int rounds) {
  return bench_ab(device, points, scalars, n, warmup, runs, rounds);
}

namespace {
// Fq products of the cheapest plan over precomputed bases for scalars with these bit lengths.
double msm_min_products(const u64* hist) {
  double best = 1e300;
  for (int c = kMsmMinWindow; c <= 22; c++)
    best = std::min(best, msm_entries_estimate(hist, c) * 10 + (double)(1u << (c - 1)) * 28);
  return best;
}
}  // namespace

template <class C>
ProofBound proof_bound(const unsigned long long* w_hist, const unsigned long long* c_hist, int log_domain,
                       double eval_products) {
  using DG1 = typename Dev<C>::G1;
  using DG2 = typename Dev<C>::G2;
  static_assert(sizeof(u64) == sizeof(unsigned long long), "histogram counters");
  const u64* wh = reinterpret_cast<const u64*>(w_hist);
  const u64* ch = reinterpret_cast<const u64*>(c_hist);
  const double n = std::ldexp(1.0, log_domain);
  u64 h_hist[kMsmHistBins] = {};
  h_hist[kMsmScalarBits] = (u64)n;
  const double g1 = (2 * msm_min_products(wh) + msm_min_products(ch) + msm_min_products(h_hist)) * kMulFactor<DG1>;
  const double g2 = msm_min_products(wh) * kMulFactor<DG2>;
  const double rate = imad_per_ms(), fq = mont_mul_imad(kFqWords<DG1>);
  ProofBound b;
  b.msm_ms = (g1 + g2) * fq / rate;
  b.ntt_ms = (6.0 * n / 2 * log_domain + 4.0 * n) * kFrMulImad / rate;
  b.eval_ms = eval_products * kFrMulImad / rate;
  b.ms = b.msm_ms + b.ntt_ms + b.eval_ms;
  return b;
}

#define CUZK_INSTANTIATE(C)                                                                                    \
  template ProofBound proof_bound<C>(const unsigned long long*, const unsigned long long*, int, double);      \
  template BenchStats bench_ntt<C>(int, int, bool, int, int, int);                                             \
  template BenchStats bench_h_stage<C>(int, int, int, int, int);                                               \
  template BenchStats bench_msm_g1(int, const C::G1Affine*, const C::Fr*, size_t, int, int, int);              \
  template BenchStats bench_msm_g2(int, const C::G2Affine*, const C::Fr*, size_t, int, int, int);              \
  template std::vector<BenchStats> bench_msm_g1_ab(int, const C::G1Affine*, const C::Fr*, size_t, int, int, int); \
  template std::vector<BenchStats> bench_msm_g2_ab(int, const C::G2Affine*, const C::Fr*, size_t, int, int, int);
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace gpu
}  // namespace cuzk
