// The device-resident kernel benchmarks (NTT, H stage, MSM): CUDA events around each run, warm-up
// runs first, median of the timed runs, and next to each figure its estimated physical bound.
#include <algorithm>
#include <string>
#include <vector>

#include "bench/gpu/bench_util.cuh"
#include "bench/gpu/gpu_bench.hpp"
#include "kernels/engines.cuh"
#include "kernels/ntt_v2_core.cuh"

namespace cuzk {
namespace gpu {

namespace {

std::string window_detail(const MsmEngine& e) {
  return "window " + std::to_string(e.window()) + ", " + std::to_string(e.entries()) + " digit entries";
}

// Mixed additions (8M + 2S) for every digit entry, two full additions (12M + 2S) per bucket.
double msm_bound_ms(const MsmEngine& e, double base_muls_per_field_mul) {
  double muls = (double)e.entries() * 10 + (double)e.buckets() * 28;
  return muls * base_muls_per_field_mul * kFqMulImad / imad_per_ms();
}

}  // namespace

BenchStats bench_ntt(int device, int log_n, bool inverse, int warmup, int runs, int ntt_passes) {
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine eng(st.get(), ntt_passes);
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

BenchStats bench_h_stage(int device, int log_n, int warmup, int runs, int ntt_passes) {
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine eng(st.get(), ntt_passes);
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
template <class DA, class HA, class Pre, class Run>
std::vector<BenchStats> bench_ab(int device, const HA* points, const Fr* scalars, size_t n, int warmup, int runs,
                                 int rounds, double mul_factor, Pre pre, Run run) {
  MsmUpload<DA, HA> o(device, points, scalars, n);
  // The table for the automatic shared window, built once (timed on its own).
  o.eng.plan(o.sc.get(), n, 0, true);
  int c = o.eng.window();
  DevBuf<DA> table;
  table.resize(n * msm_windows(c));
  BenchStats tb = time_runs(o.st.get(), 0, 1, [&] { pre(o.pts.get(), n, c, table.get(), o.st.get()); });
  std::vector<BenchStats> out;
  for (int r = 0; r < rounds; r++) {
    for (int shared = 0; shared < 2; shared++) {
      BenchStats st = time_runs(o.st.get(), warmup, runs, [&] {
        o.eng.plan(o.sc.get(), n, shared ? c : 0, shared);
        run(o.eng, shared ? table.get() : o.pts.get());
      });
      st.detail = window_detail(o.eng) + (shared ? ", precomputed bases (table of " + std::to_string(msm_windows(c)) +
                                                       " copies built in " + std::to_string(tb.median_ms) + " ms)"
                                                 : "");
      st.bound_ms = msm_bound_ms(o.eng, mul_factor);
      out.push_back(st);
    }
  }
  return out;
}
}  // namespace

std::vector<BenchStats> bench_msm_g1_ab(int device, const G1Affine* points, const Fr* scalars, size_t n, int warmup,
                                        int runs, int rounds) {
  return bench_ab<DG1Affine, G1Affine>(device, points, scalars, n, warmup, runs, rounds, 1, msm_precompute_g1,
                                       [](MsmEngine& e, const DG1Affine* p) { e.run_g1(p); });
}
std::vector<BenchStats> bench_msm_g2_ab(int device, const G2Affine* points, const Fr* scalars, size_t n, int warmup,
                                        int runs, int rounds) {
  return bench_ab<DG2Affine, G2Affine>(device, points, scalars, n, warmup, runs, rounds, 3, msm_precompute_g2,
                                       [](MsmEngine& e, const DG2Affine* p) { e.run_g2(p); });
}

namespace {
// One MSM's plan and run, timed; mul_factor: Fq multiplies per field multiply of the curve (G2's Fq2
// multiply is three, Karatsuba).
template <class DA, class HA, class Run>
BenchStats bench_msm(int device, const HA* points, const Fr* scalars, size_t n, int window, int warmup, int runs,
                     double mul_factor, Run run) {
  MsmUpload<DA, HA> o(device, points, scalars, n);
  BenchStats r = time_runs(o.st.get(), warmup, runs, [&] {
    o.eng.plan(o.sc.get(), n, window);
    run(o.eng, o.pts.get());
  });
  r.detail = window_detail(o.eng);
  r.bound_ms = msm_bound_ms(o.eng, mul_factor);
  return r;
}
}  // namespace

BenchStats bench_msm_g1(int device, const G1Affine* points, const Fr* scalars, size_t n, int window, int warmup,
                        int runs) {
  return bench_msm<DG1Affine>(device, points, scalars, n, window, warmup, runs, 1,
                              [](MsmEngine& e, const DG1Affine* p) { e.run_g1(p); });
}

BenchStats bench_msm_g2(int device, const G2Affine* points, const Fr* scalars, size_t n, int window, int warmup,
                        int runs) {
  return bench_msm<DG2Affine>(device, points, scalars, n, window, warmup, runs, 3,
                              [](MsmEngine& e, const DG2Affine* p) { e.run_g2(p); });
}

}  // namespace gpu
}  // namespace cuzk
