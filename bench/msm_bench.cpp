// Microbenchmarks of the CPU prover's kernels: G1/G2 MSM, NTT and the H stage, at 2^12..2^16
// (NTT up to 2^18), plus the field multiply they are built on; and of proof verification, one by
// one against batched, and of a proof's assembly from its MSM sums, on both curves.
//   cuzk_microbench --benchmark_filter=Msm   (threads follow CUZK_THREADS, default all CPUs)
//   cuzk_microbench --benchmark_filter='Verify|Assemble' (single-threaded; us_per_proof is the figure)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>

#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "groth16/verifier.hpp"

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

// A verification key and n valid proofs for it, made from known discrete logs instead of a
// circuit: with alpha1 = [alpha], beta2 = [beta], gamma2 = [gamma], delta2 = [delta] and
// IC_j = [k_j], a proof A = [a], B = [b], C = [c] with c = (ab - alpha beta - l gamma)/delta,
// l = k_0 + sum_j pub_j k_(j+1), satisfies the verification equation, which is all a verifier sees.
template <class C>
struct VerifyCase {
  using Fr = typename C::Fr;
  std::unique_ptr<groth16::PreparedKey<C>> pk;
  std::vector<std::vector<Fr>> pub;
  std::vector<groth16::Proof<C>> proofs;
  std::vector<groth16::ProofRef<C>> refs;

  VerifyCase(size_t n, uint32_t n_public) {
    std::mt19937_64 rng(n * 7 + n_public);
    auto g1 = [](const Fr& k) { return C::G1::from_affine(C::g1_generator()).mul(k.to_plain()).to_affine(); };
    auto g2 = [](const Fr& k) { return C::G2::from_affine(C::g2_generator()).mul(k.to_plain()).to_affine(); };
    auto rnd = [&] { return random_fr<Fr>(rng); };
    Fr alpha = rnd(), beta = rnd(), gamma = rnd(), delta = rnd();
    std::vector<Fr> k(n_public + 1);
    groth16::VerificationKey<C> vk;
    vk.n_public = n_public;
    vk.alpha1 = g1(alpha), vk.beta2 = g2(beta), vk.gamma2 = g2(gamma), vk.delta2 = g2(delta);
    for (auto& x : k) x = rnd(), vk.ic.push_back(g1(x));
    pk = std::make_unique<groth16::PreparedKey<C>>(vk);
    Fr delta_inv = delta.inv();
    for (size_t i = 0; i < n; i++) {
      std::vector<Fr> p(n_public);
      Fr l = k[0];
      for (uint32_t j = 0; j < n_public; j++) p[j] = rnd(), l += p[j] * k[j + 1];
      Fr a = rnd(), b = rnd(), c = (a * b - alpha * beta - l * gamma) * delta_inv;
      pub.push_back(std::move(p));
      proofs.push_back({g1(a), g2(b), g1(c)});
    }
    for (size_t i = 0; i < n; i++) refs.push_back({&pub[i], &proofs[i]});
  }
};

// Verification cases: 0 = one by one with the plain key (four Miller loops and a final
// exponentiation each), 1 = one by one with the prepared key (e(alpha, beta) cached: three Miller
// loops), 2 = verify_batch over all n, 3 = one by one with the public part prepared ahead (what is
// left of a lone proof's check once it exists: two Miller loops side by side).
template <class C>
void BM_Verify(benchmark::State& st) {
  const size_t n = (size_t)st.range(0);
  const int mode = (int)st.range(1);
  static std::map<size_t, std::unique_ptr<VerifyCase<C>>> cache;
  auto& vc = cache[n];
  if (!vc) vc = std::make_unique<VerifyCase<C>>(n, 4);
  for (auto _ : st) {
    size_t ok = 0;
    if (mode == 2) {
      for (bool v : groth16::verify_batch(*vc->pk, vc->refs)) ok += v;
    } else if (mode == 3) {
      st.PauseTiming();
      std::vector<groth16::PublicPart<C>> parts;
      for (size_t i = 0; i < n; i++) parts.push_back(groth16::prepare_public(*vc->pk, vc->pub[i]));
      st.ResumeTiming();
      for (size_t i = 0; i < n; i++) ok += groth16::verify_proof(*vc->pk, parts[i], vc->proofs[i]);
    } else {
      for (size_t i = 0; i < n; i++)
        ok += mode == 0 ? groth16::verify_proof(vc->pk->vk, vc->pub[i], vc->proofs[i])
                        : groth16::verify_proof(*vc->pk, vc->pub[i], vc->proofs[i]);
    }
    if (ok != n) st.SkipWithError("a valid proof did not verify");
  }
  st.counters["us_per_proof"] =
      benchmark::Counter(double(n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A proof's assembly on the host from its five MSM sums, affine output: mode 0 with its blinding
// (fresh r and s, and what they make of the key's points: groth16::draw_blinding), mode 1 with the
// blinding drawn ahead (what is left for a lone proof once the device has computed it).
template <class C>
void BM_Assemble(benchmark::State& st) {
  std::mt19937_64 rng(5);
  auto g1 = [&] { return C::G1::from_affine(C::g1_generator()).mul(random_fr<typename C::Fr>(rng).to_plain()); };
  auto g2 = [&] { return C::G2::from_affine(C::g2_generator()).mul(random_fr<typename C::Fr>(rng).to_plain()); };
  groth16::ZKey<C> zk;
  zk.alpha1 = g1().to_affine(), zk.beta1 = g1().to_affine(), zk.delta1 = g1().to_affine();
  zk.beta2 = g2().to_affine(), zk.delta2 = g2().to_affine();
  const groth16::RawMsms<C> m{g1(), g1(), g1(), g1(), g2()};
  const groth16::Blinding<C> ahead = groth16::draw_blinding(zk, {});
  for (auto _ : st) {
    if (st.range(0) == 0)
      benchmark::DoNotOptimize(groth16::assemble_proof(zk, m, {}));
    else
      benchmark::DoNotOptimize(groth16::assemble_proof(m, ahead));
  }
  st.counters["us_per_proof"] =
      benchmark::Counter(1e-6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_Assemble<Bls12_381>)->Name("BM_AssembleBls12_381")->DenseRange(0, 1)->ArgName("ahead")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Assemble<Bn254>)->Name("BM_AssembleBn254")->DenseRange(0, 1)->ArgName("ahead")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MsmG1)->ArgsProduct({{12, 14, 16}, {0, 1}})->ArgNames({"log_n", "witness"})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MsmG2)->ArgsProduct({{12, 14, 16}, {0, 1}})->ArgNames({"log_n", "witness"})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ntt)->DenseRange(12, 18, 2)->ArgName("log_n")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HCoset)->DenseRange(12, 16, 2)->ArgName("log_n")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FqMul);
BENCHMARK(BM_FrMul);
BENCHMARK(BM_Verify<Bls12_381>)->Name("BM_VerifyBls12_381")->ArgsProduct({{1, 8, 64}, {0, 1, 2, 3}})->ArgNames({"n", "mode"})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Verify<Bn254>)->Name("BM_VerifyBn254")->ArgsProduct({{1, 8, 64}, {0, 1, 2, 3}})->ArgNames({"n", "mode"})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
