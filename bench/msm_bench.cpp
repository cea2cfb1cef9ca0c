// Microbenchmarks of the CPU prover's kernels: G1/G2 MSM, NTT and the H stage, at 2^12..2^16
// (NTT up to 2^18), plus the field multiply they are built on.
//   cuzk_microbench --benchmark_filter=Msm   (threads follow CUZK_THREADS, default all CPUs)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <random>

#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

Fr rand_fr(std::mt19937_64& rng) { return random_fr(rng); }

// Distinct points from a walk P, P + D, P + 2D, ... (one addition each), cached per size.
template <class C>
const std::vector<Affine<C>>& points(size_t n, const Affine<C>& gen) {
  static std::map<size_t, std::vector<Affine<C>>> cache;
  auto& v = cache[n];
  if (v.empty()) {
    std::mt19937_64 rng(n);
    Jacobian<C> g = Jacobian<C>::from_affine(gen), p = g.mul(rand_fr(rng).to_plain()), d = g.mul(rand_fr(rng).to_plain());
    std::vector<Jacobian<C>> jac(n);
    for (auto& x : jac) x = p, p = p + d;
    v = batch_to_affine(jac);
  }
  return v;
}

// Uniform scalars, or a witness-like mix (20% zero, 20% one, the rest uniform).
std::vector<Fr> scalars(size_t n, bool witness_like) {
  std::mt19937_64 rng(n * 2 + witness_like);
  std::vector<Fr> s(n);
  for (auto& x : s) {
    unsigned k = rng() % 5;
    x = !witness_like || k >= 2 ? rand_fr(rng) : k == 0 ? Fr::zero() : Fr::one();
  }
  return s;
}

void apply_threads() {
  if (const char* t = std::getenv("CUZK_THREADS")) set_thread_count(std::strtoul(t, nullptr, 10));
}

void BM_MsmG1(benchmark::State& st) {
  apply_threads();
  size_t n = size_t(1) << st.range(0);
  const auto& p = points<G1Curve>(n, g1_generator());
  auto s = scalars(n, st.range(1));
  for (auto _ : st) benchmark::DoNotOptimize(msm_g1(p.data(), s.data(), n));
  st.SetItemsProcessed(st.iterations() * n);
}

void BM_MsmG2(benchmark::State& st) {
  apply_threads();
  size_t n = size_t(1) << st.range(0);
  const auto& p = points<G2Curve>(n, g2_generator());
  auto s = scalars(n, st.range(1));
  for (auto _ : st) benchmark::DoNotOptimize(msm_g2(p.data(), s.data(), n));
  st.SetItemsProcessed(st.iterations() * n);
}

void BM_Ntt(benchmark::State& st) {
  apply_threads();
  int log_n = (int)st.range(0);
  auto v = scalars(size_t(1) << log_n, false);
  for (auto _ : st) {
    ntt(v.data(), log_n, false);
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(st.iterations() * (int64_t(1) << log_n));
}

void BM_HCoset(benchmark::State& st) {
  apply_threads();
  int log_n = (int)st.range(0);
  size_t n = size_t(1) << log_n;
  auto a = scalars(n, false), b = scalars(n, true), c = scalars(n, false);
  for (auto _ : st) benchmark::DoNotOptimize(compute_h_coset(a, b, c, log_n));
}

void BM_FqMul(benchmark::State& st) {
  Fq x = Fq::from_u64(3), y = Fq::from_u64(5);
  for (auto _ : st) {
    x = x * y;
    benchmark::DoNotOptimize(x);
  }
}

void BM_FrMul(benchmark::State& st) {
  Fr x = Fr::from_u64(3), y = Fr::from_u64(5);
  for (auto _ : st) {
    x = x * y;
    benchmark::DoNotOptimize(x);
  }
}

}  // namespace

BENCHMARK(BM_MsmG1)->ArgsProduct({{12, 14, 16}, {0, 1}})->ArgNames({"log_n", "witness"})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MsmG2)->ArgsProduct({{12, 14, 16}, {0, 1}})->ArgNames({"log_n", "witness"})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ntt)->DenseRange(12, 18, 2)->ArgName("log_n")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HCoset)->DenseRange(12, 16, 2)->ArgName("log_n")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FqMul);
BENCHMARK(BM_FrMul);

BENCHMARK_MAIN();
