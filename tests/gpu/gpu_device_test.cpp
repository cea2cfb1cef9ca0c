// Differential tests of the CUDA backend against the CPU reference, on fresh random inputs every
// run: NTT at every size 2^1..2^20, 2^21..2^24 against the CPU and 2^25..2^27 sampled, the fused H stage, G1/G2 MSMs with lengths
// that are not powers of two, points at infinity, repeated and opposite points, scalars 0, 1, r-1,
// small and random, and whole proofs identical to the CPU backend's with r and s fixed.
// Every test skips cleanly when no CUDA device is present.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include <sys/mman.h>
#include <unistd.h>

#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"
#include "backend/backend.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "tests/gpu/curve_refs.hpp"
#include "tests/gpu/ntt_refs.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
namespace fs = std::filesystem;

namespace {

#define REQUIRE_GPU() \
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device"

// Each test's own stream of the process seed (tests/test_seed.hpp: printed, CUZK_TEST_SEED replays).
std::mt19937_64& rng() { return test::shared_test_rng(); }

Fr rand_fr() {
  for (;;) {
    u64 l[4] = {rng()(), rng()(), rng()(), rng()() >> 1};
    if (Fr::is_canonical(l)) return Fr::from_mont_limbs(l);
  }
}

std::vector<Fr> rand_vec(size_t n) {
  std::vector<Fr> v(n);
  for (auto& x : v) x = rand_fr();
  return v;
}

// Scalars mixing 0, 1, r-1, small positive and negative values and random ones.
std::vector<Fr> tricky_scalars(size_t n) {
  std::vector<Fr> s(n);
  for (auto& x : s) {
    switch (rng()() % 8) {
      case 0: x = Fr::zero(); break;
      case 1: x = Fr::one(); break;
      case 2: x = -Fr::one(); break;
      case 3: x = Fr::from_u64(rng()() % 100000); break;
      case 4: x = -Fr::from_u64(rng()() % 100000); break;
      default: x = rand_fr();
    }
  }
  return s;
}

// Random points from a random walk over a few random multiples of the generator, with infinities,
// repeats and negations sprinkled in.
template <class C>
std::vector<Affine<C>> rand_points(size_t n, const Affine<C>& gen) {
  std::vector<Jacobian<C>> base;
  for (int i = 0; i < 16; i++) base.push_back(Jacobian<C>::from_affine(gen).mul(rand_fr().to_plain()));
  std::vector<Jacobian<C>> pts(n);
  Jacobian<C> cur = base[0];
  for (size_t i = 0; i < n; i++) {
    cur = cur + base[rng()() % 16];
    pts[i] = cur;
  }
  std::vector<Affine<C>> aff = batch_to_affine(pts);
  for (size_t i = 1; i < n; i++) {
    if (i % 31 == 5) aff[i] = Affine<C>::infinity();
    if (i % 37 == 7) aff[i] = aff[i - 1];
    if (i % 41 == 11) aff[i] = -aff[i - 1];
  }
  return aff;
}

}  // namespace

TEST(GpuNtt, EverySizeTo2e20BothDirections) {
  REQUIRE_GPU();
  for (int k = 1; k <= 20; k++) {
    size_t n = size_t(1) << k;
    std::vector<Fr> x = rand_vec(n);
    for (int inverse = 0; inverse < 2; inverse++) {
      std::vector<Fr> ref = x, got = x;
      ntt(ref.data(), k, inverse);
      gpu::ntt(0, got.data(), k, inverse);
      ASSERT_TRUE(ref == got) << "k=" << k << " inverse=" << inverse;
    }
  }
}

TEST(GpuNtt, CosetTransformsRoundTripAndMatchCpu) {
  REQUIRE_GPU();
  for (int k : {1, 2, 9, 10, 11, 17, 20}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> x = rand_vec(n), ref = x, got = x;
    Fr g = root_of_unity(k + 1), gi = Fr::one();
    for (auto& e : ref) {
      e = e * gi;
      gi = gi * g;
    }
    ntt(ref.data(), k, false);
    gpu::ntt(0, got.data(), k, false, true);
    ASSERT_TRUE(ref == got) << "coset forward k=" << k;
    gpu::ntt(0, got.data(), k, true, true);
    ASSERT_TRUE(got == x) << "coset round trip k=" << k;
  }
}

TEST(GpuNtt, LargeSizes) {
  REQUIRE_GPU();
  for (int k : {21, 22, 23, 24}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> x = rand_vec(n), ref = x, got = x;
    ntt(ref.data(), k, false);
    gpu::ntt(0, got.data(), k, false);
    ASSERT_TRUE(ref == got) << "k=" << k;
    gpu::ntt(0, got.data(), k, true);
    ASSERT_TRUE(got == x) << "round trip k=" << k;
  }
}

namespace {
Fr pow_fr(Fr b, u64 e) {
  Fr r = Fr::one();
  for (; e; e >>= 1, b = b.sqr())
    if (e & 1) r = r * b;
  return r;
}
// sum_i x_i z^i, by Horner over 16 chunks in parallel.
Fr eval_poly(const std::vector<Fr>& x, const Fr& z) {
  const size_t parts = 16, n = x.size(), len = n / parts;
  std::vector<Fr> part(parts);
  std::vector<std::thread> th;
  for (size_t p = 0; p < parts; p++)
    th.emplace_back([&, p] {
      Fr acc = Fr::zero();
      for (size_t i = (p + 1) * len; i-- > p * len;) acc = acc * z + x[i];
      part[p] = acc * pow_fr(z, p * len);
    });
  for (auto& t : th) t.join();
  Fr s = Fr::zero();
  for (auto& v : part) s = s + v;
  return s;
}
}  // namespace

// 2^25 .. 2^27 (the largest plans: 3 passes of 9 stages): too slow for a whole CPU transform, so the
// forward output is checked at sampled frequencies against a direct evaluation, and the inverse by the
// exact round trip.
TEST(GpuNtt, LargestSizesSampledAndRoundTrip) {
  REQUIRE_GPU();
  for (int k : {25, 26, 27}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> x = rand_vec(n), got = x;
    gpu::ntt(0, got.data(), k, false);
    Fr w = root_of_unity(k);
    for (size_t f : {size_t(0), size_t(1), n - 1, size_t(rng()() % n), size_t(rng()() % n)})
      ASSERT_TRUE(got[f] == eval_poly(x, pow_fr(w, f))) << "k=" << k << " f=" << f;
    gpu::ntt(0, got.data(), k, true);
    ASSERT_TRUE(got == x) << "round trip k=" << k;
  }
}

// Every plan shape NttEngine runs (the radix-2 passes at 2^1; 1..3 register-tiled passes with radix-4
// sub-rounds of 1 and 2 stages, lo = 0 and lo > 0, 1 to 2^10 groups per tile; the bit reversal
// element-wise, tiled, or in the last pass's store) against the CPU: forward, inverse, coset forward
// and inverse, and the H stage. 2^25 and up, where the other Fr multiply runs, are sampled above.
TEST(GpuNtt, EveryPlanShapeMatchesCpu) {
  REQUIRE_GPU();
  for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 20, 21, 22, 24}) {
    std::vector<Fr> x = rand_vec(size_t(1) << k);
    NttRefs r(x, k);
    for (int inverse = 0; inverse < 2; inverse++)
      for (int coset = 0; coset < 2; coset++) {
        std::vector<Fr> got = x;
        gpu::ntt(0, got.data(), k, inverse, coset);
        EXPECT_TRUE(got == r.ref[inverse][coset]) << "k=" << k << " inverse=" << inverse << " coset=" << coset;
      }
  }
  for (int k : {1, 2, 5, 12, 17}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> a = rand_vec(n), b = rand_vec(n), c = rand_vec(n);
    EXPECT_TRUE(compute_h_coset(a, b, c, k) == gpu::compute_h_coset(0, a, b, c, k)) << "H stage k=" << k;
  }
}

TEST(GpuNtt, HStageMatchesCpu) {
  REQUIRE_GPU();
  for (int k : {1, 2, 5, 10, 11, 16, 21}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> a = rand_vec(n), b = rand_vec(n), c(n);
    for (size_t i = 0; i < n; i++) c[i] = (i % 3) ? a[i] * b[i] : rand_fr();
    std::vector<Fr> ref = compute_h_coset(a, b, c, k);
    std::vector<Fr> got = gpu::compute_h_coset(0, a, b, c, k);
    ASSERT_TRUE(ref == got) << "k=" << k;
  }
}

TEST(GpuMsm, G1OddLengthsAndEdgeScalars) {
  REQUIRE_GPU();
  for (size_t n : {1, 2, 3, 5, 31, 100, 1000, 4097, 65537}) {
    auto pts = rand_points<G1Curve>(n, g1_generator());
    auto sc = tricky_scalars(n);
    G1 ref = msm_g1(pts.data(), sc.data(), n);
    G1 got = gpu::msm_g1(0, pts.data(), sc.data(), n);
    ASSERT_EQ(got.to_affine(), ref.to_affine()) << "n=" << n;
  }
}

TEST(GpuMsm, G1EveryWindowWidth) {
  REQUIRE_GPU();
  size_t n = 3001;
  auto pts = rand_points<G1Curve>(n, g1_generator());
  auto sc = tricky_scalars(n);
  G1 ref = msm_g1(pts.data(), sc.data(), n);
  for (int c = 4; c <= 22; c += 3)
    ASSERT_EQ(gpu::msm_g1(0, pts.data(), sc.data(), n, c).to_affine(), ref.to_affine()) << "window " << c;
}

TEST(GpuMsm, G1DegenerateInputs) {
  REQUIRE_GPU();
  size_t n = 2000;
  auto pts = rand_points<G1Curve>(n, g1_generator());
  std::vector<Fr> zeros(n, Fr::zero()), ones(n, Fr::one()), minus(n, -Fr::one());
  EXPECT_TRUE(gpu::msm_g1(0, pts.data(), zeros.data(), n).is_inf());
  EXPECT_EQ(gpu::msm_g1(0, pts.data(), ones.data(), n).to_affine(), msm_g1(pts.data(), ones.data(), n).to_affine());
  EXPECT_EQ(gpu::msm_g1(0, pts.data(), minus.data(), n).to_affine(), msm_g1(pts.data(), minus.data(), n).to_affine());
  // All points at infinity; P + (-P) in one bucket; the same point n times (doublings in buckets).
  std::vector<G1Affine> inf(n, G1Affine::infinity());
  auto sc = tricky_scalars(n);
  EXPECT_TRUE(gpu::msm_g1(0, inf.data(), sc.data(), n).is_inf());
  std::vector<G1Affine> pm = {pts[0], -pts[0]};
  std::vector<Fr> same = {Fr::from_u64(5), Fr::from_u64(5)};
  EXPECT_TRUE(gpu::msm_g1(0, pm.data(), same.data(), 2).is_inf());
  std::vector<G1Affine> rep(n, pts[1]);
  EXPECT_EQ(gpu::msm_g1(0, rep.data(), sc.data(), n).to_affine(), msm_g1(rep.data(), sc.data(), n).to_affine());
  // Witness-like skew: many ones in one bucket across reduction levels.
  std::vector<Fr> skew(1 << 17, Fr::one());
  auto big = rand_points<G1Curve>(skew.size(), g1_generator());
  for (size_t i = 0; i < skew.size(); i += 4) skew[i] = Fr::from_u64(i % 7);
  EXPECT_EQ(gpu::msm_g1(0, big.data(), skew.data(), skew.size()).to_affine(),
            msm_g1(big.data(), skew.data(), skew.size()).to_affine());
  EXPECT_TRUE(gpu::msm_g1(0, pts.data(), sc.data(), 0).is_inf());
}

// Witness-like scalars of every kind (mostly 0 and 1, then small, full-size, r-1 and other negative
// ones) through the plain plan at the histogram's width, and the same and random scalars with the
// windows split into batches by an entry cap (one window per plan, and three), in G1 and G2.
TEST(GpuMsm, SparseScalarsAndWindowBatchesMatchCpu) {
  REQUIRE_GPU();
  size_t n = (1 << 15) + 3;
  auto p1 = rand_points<G1Curve>(n, g1_generator());
  auto p2 = rand_points<G2Curve>(n, g2_generator());
  std::vector<Fr> sparse(n), random = rand_vec(n);
  for (auto& x : sparse) {
    uint64_t k = rng()() % 100;
    x = k < 50 ? Fr::zero() : k < 90 ? Fr::one() : k < 93 ? Fr::from_u64(rng()() % 100000) : k < 95 ? -Fr::one()
        : k < 97 ? -Fr::from_u64(2 + rng()() % 1000) : rand_fr();
  }
  for (const auto* sc : {&sparse, &random}) {
    SCOPED_TRACE(sc == &sparse ? "sparse scalars" : "random scalars");
    G1 r1 = msm_g1(p1.data(), sc->data(), n);
    G2 r2 = msm_g2(p2.data(), sc->data(), n);
    for (size_t cap : {size_t(0), n, 3 * n}) {
      ASSERT_EQ(gpu::msm_g1(0, p1.data(), sc->data(), n, 0, cap).to_affine(), r1.to_affine()) << "cap " << cap;
      ASSERT_EQ(gpu::msm_g1(0, p1.data(), sc->data(), n, 9, cap).to_affine(), r1.to_affine()) << "c=9, cap " << cap;
      ASSERT_EQ(gpu::msm_g2(0, p2.data(), sc->data(), n, 0, cap).to_affine(), r2.to_affine()) << "cap " << cap;
    }
  }
}

// A cap below n * windows, but above what sparse scalars emit (msm_entries_bound): one plan of
// every window instead of window batches, with the same sum.
TEST(GpuMsm, SparseScalarsWithinTheCapNeedNoBatches) {
  REQUIRE_GPU();
  size_t n = size_t(1) << 20;
  auto p1 = rand_points<G1Curve>(n, g1_generator());
  std::vector<Fr> sc(n);
  for (auto& x : sc) {
    uint64_t k = rng()() % 100;
    x = k < 50 ? Fr::zero() : k < 94 ? Fr::one() : k < 97 ? -Fr::from_u64(1 + rng()() % 1000) : rand_fr();
  }
  G1 want = msm_g1(p1.data(), sc.data(), n);
  for (int c : {11, 0})
    ASSERT_EQ(gpu::msm_g1(0, p1.data(), sc.data(), n, c, 2 * n).to_affine(), want.to_affine()) << "c=" << c;
}

TEST(GpuMsm, G2MatchesCpu) {
  REQUIRE_GPU();
  for (size_t n : {1, 7, 300, 5003}) {
    auto pts = rand_points<G2Curve>(n, g2_generator());
    auto sc = tricky_scalars(n);
    G2 ref = msm_g2(pts.data(), sc.data(), n);
    ASSERT_EQ(gpu::msm_g2(0, pts.data(), sc.data(), n).to_affine(), ref.to_affine()) << "n=" << n;
  }
  size_t n = 1000;
  auto pts = rand_points<G2Curve>(n, g2_generator());
  std::vector<Fr> ones(n, Fr::one());
  EXPECT_EQ(gpu::msm_g2(0, pts.data(), ones.data(), n, 7).to_affine(), msm_g2(pts.data(), ones.data(), n).to_affine());
}

// G2 on lane pairs and G1 with the level-0 tasks longest first and the chunk sums as a tree, plain
// and over precomputed bases, at sizes and windows that give one and several reduction levels.
// The backend interface: every primitive of "cuda" against "cpu", chosen by name.
TEST(GpuBackend, PrimitivesByNameMatchCpu) {
  REQUIRE_GPU();
  auto cpu = make_backend("cpu"), cuda = make_backend("cuda");
  EXPECT_STREQ(cuda->name(), "cuda");
  EXPECT_STREQ(make_backend("auto")->name(), "cuda");
  for (size_t n : {1, 77, 4099}) {
    auto p1 = rand_points<G1Curve>(n, g1_generator());
    auto p2 = rand_points<G2Curve>(n, g2_generator());
    auto sc = tricky_scalars(n);
    EXPECT_EQ(cuda->msm_g1(p1.data(), sc.data(), n).to_affine(), cpu->msm_g1(p1.data(), sc.data(), n).to_affine());
    EXPECT_EQ(cuda->msm_g2(p2.data(), sc.data(), n).to_affine(), cpu->msm_g2(p2.data(), sc.data(), n).to_affine());
  }
  for (int k : {1, 9, 15}) {
    size_t n = size_t(1) << k;
    for (int inverse = 0; inverse < 2; inverse++) {
      std::vector<Fr> x = rand_vec(n), y = x;
      cpu->ntt(x.data(), k, inverse);
      cuda->ntt(y.data(), k, inverse);
      EXPECT_TRUE(x == y) << "k=" << k;
    }
    std::vector<Fr> a = rand_vec(n), b = rand_vec(n), c = rand_vec(n);
    EXPECT_TRUE(cpu->compute_h(a, b, c, k) == cuda->compute_h(a, b, c, k)) << "k=" << k;
  }
}

TEST(GpuMsm, ReductionLevelsMatchCpu) {
  REQUIRE_GPU();
  std::vector<std::pair<size_t, int>> cases = {{1, 0}, {300, 0}, {5003, 0}, {1000, 7}, {2049, 12}};
  size_t n1 = 3001;
  auto p1 = rand_points<G1Curve>(n1, g1_generator());
  auto s1 = tricky_scalars(n1);
  G1 r1 = msm_g1(p1.data(), s1.data(), n1);
  ASSERT_EQ(gpu::msm_g1(0, p1.data(), s1.data(), n1).to_affine(), r1.to_affine());
  ASSERT_EQ(gpu::msm_g1_precomputed(0, p1.data(), s1.data(), n1).to_affine(), r1.to_affine());
  for (auto [n, c] : cases) {
    auto pts = rand_points<G2Curve>(n, g2_generator());
    auto sc = tricky_scalars(n);
    if (c == 12)  // one huge bucket: several reduction levels
      for (size_t i = 0; i < n; i += 2) sc[i] = Fr::one();
    G2 ref = msm_g2(pts.data(), sc.data(), n);
    ASSERT_EQ(gpu::msm_g2(0, pts.data(), sc.data(), n, c).to_affine(), ref.to_affine()) << "n=" << n;
    ASSERT_EQ(gpu::msm_g2_precomputed(0, pts.data(), sc.data(), n, c < 8 ? 0 : c).to_affine(), ref.to_affine())
        << "precomputed n=" << n;
  }
}

// MSM over precomputed bases (window copies 2^(wc) P built on the device, one set of buckets for all
// windows): the same differential checks as above.
TEST(GpuMsm, PrecomputedBasesMatchCpu) {
  REQUIRE_GPU();
  for (size_t n : {1, 2, 3, 5, 31, 100, 1000, 4097, 65537}) {
    auto pts = rand_points<G1Curve>(n, g1_generator());
    auto sc = tricky_scalars(n);
    ASSERT_EQ(gpu::msm_g1_precomputed(0, pts.data(), sc.data(), n).to_affine(),
              msm_g1(pts.data(), sc.data(), n).to_affine())
        << "n=" << n;
  }
  size_t n = 3001;
  auto pts = rand_points<G1Curve>(n, g1_generator());
  auto sc = tricky_scalars(n);
  G1 ref = msm_g1(pts.data(), sc.data(), n);
  for (int c : {8, 11, 14, 17, 20, 22})
    ASSERT_EQ(gpu::msm_g1_precomputed(0, pts.data(), sc.data(), n, c).to_affine(), ref.to_affine()) << "window " << c;
  std::vector<Fr> zeros(n, Fr::zero()), ones(n, Fr::one()), minus(n, -Fr::one());
  EXPECT_TRUE(gpu::msm_g1_precomputed(0, pts.data(), zeros.data(), n).is_inf());
  EXPECT_EQ(gpu::msm_g1_precomputed(0, pts.data(), ones.data(), n).to_affine(),
            msm_g1(pts.data(), ones.data(), n).to_affine());
  EXPECT_EQ(gpu::msm_g1_precomputed(0, pts.data(), minus.data(), n).to_affine(),
            msm_g1(pts.data(), minus.data(), n).to_affine());
  std::vector<G1Affine> inf(n, G1Affine::infinity());
  EXPECT_TRUE(gpu::msm_g1_precomputed(0, inf.data(), sc.data(), n).is_inf());
  std::vector<G1Affine> rep(n, pts[1]);
  EXPECT_EQ(gpu::msm_g1_precomputed(0, rep.data(), sc.data(), n).to_affine(),
            msm_g1(rep.data(), sc.data(), n).to_affine());
  std::vector<Fr> skew(1 << 17, Fr::one());
  auto big = rand_points<G1Curve>(skew.size(), g1_generator());
  for (size_t i = 0; i < skew.size(); i += 4) skew[i] = Fr::from_u64(i % 7);
  EXPECT_EQ(gpu::msm_g1_precomputed(0, big.data(), skew.data(), skew.size()).to_affine(),
            msm_g1(big.data(), skew.data(), skew.size()).to_affine());
  EXPECT_TRUE(gpu::msm_g1_precomputed(0, pts.data(), sc.data(), 0).is_inf());
  for (size_t m : {1, 7, 300, 5003}) {
    auto p2 = rand_points<G2Curve>(m, g2_generator());
    auto s2 = tricky_scalars(m);
    ASSERT_EQ(gpu::msm_g2_precomputed(0, p2.data(), s2.data(), m).to_affine(), msm_g2(p2.data(), s2.data(), m).to_affine())
        << "G2 n=" << m;
  }
}

// ---- whole proofs ----

namespace {

template <class C>
struct CircuitOn {
  std::shared_ptr<const groth16::ZKey<C>> zk;
  std::vector<typename C::Fr> w;
};
using Circuit = CircuitOn<Bls12_381>;

template <class C = Bls12_381>
CircuitOn<C> generated(int log_n, uint64_t seed, groth16::GenProfile profile = groth16::GenProfile::circom) {
  groth16::R1cs<C> r1cs;
  std::vector<typename C::Fr> w;
  groth16::gen_circuit(log_n, seed, r1cs, w, profile);
  auto zk = std::make_shared<const groth16::ZKey<C>>(
      groth16::setup_zkey(r1cs, groth16::toxic_from_seed<C>(std::string("gpu-test"))));
  return {zk, w};
}

// With the default options a small key gets precomputed tables for all five point sets, so the
// whole-proof tests below run the MSMs over precomputed bases.
template <class C>
void expect_all_tables(const groth16::ProverBackend<C>& gpu) {
  gpu::PrecomputeInfo pi;
  ASSERT_TRUE(cuda_backend_precompute(gpu, pi));
  EXPECT_EQ(pi.sets, "a,b1,c,h,b2");
  EXPECT_EQ(pi.skipped, "");
  EXPECT_GT(pi.table_bytes, 0u);
}

template <class C>
void expect_same_proofs(const CircuitOn<C>& c, int proofs) {
  using F = typename C::Fr;
  auto cpu = make_cpu_prover<C>(c.zk);
  auto gpu = make_cuda_prover<C>(c.zk);
  expect_all_tables(*gpu);
  groth16::VerificationKey<C> vk = groth16::vk_from_zkey(*c.zk);
  std::vector<F> pub = groth16::public_signals(c.w, c.zk->n_public);
  for (int i = 0; i < proofs; i++) {  // the resident key serves several proofs
    groth16::ProveOptions<C> opt;
    opt.r = i == 0 ? F::zero() : random_fr<F>(rng());
    opt.s = i == 0 ? F::zero() : random_fr<F>(rng());
    groth16::RawMsms<C> rc, rg;
    groth16::Proof<C> pc = cpu->prove(c.w, opt, &rc);
    groth16::Proof<C> pg = gpu->prove(c.w, opt, &rg);
    EXPECT_EQ(rg.a.to_affine(), rc.a.to_affine());
    EXPECT_EQ(rg.b1.to_affine(), rc.b1.to_affine());
    EXPECT_EQ(rg.b2.to_affine(), rc.b2.to_affine());
    EXPECT_EQ(rg.c.to_affine(), rc.c.to_affine());
    EXPECT_EQ(rg.h.to_affine(), rc.h.to_affine());
    EXPECT_EQ(pg.a, pc.a);
    EXPECT_EQ(pg.b, pc.b);
    EXPECT_EQ(pg.c, pc.c);
    EXPECT_TRUE(verify_proof(vk, pub, pg));
  }
}

fs::path reference_dir() {
  if (const char* e = std::getenv("CUZK_REFERENCE_DIR")) return e;
  for (fs::path p : {fs::path(CUZK_SOURCE_DIR) / "tests/fixtures/reference", fs::path("tests/fixtures/reference")})
    if (fs::exists(p)) return p;
  return {};
}

}  // namespace

TEST(GpuProver, GeneratedCircuitsMatchCpuBackend) {
  REQUIRE_GPU();
  for (int log_n : {4, 8, 12}) expect_same_proofs(generated(log_n, 1000 + rng()() % 1000), log_n == 12 ? 3 : 2);
}

// BN254 through the same resident-key prover: raw MSMs and proofs equal the CPU backend's, and the
// proofs verify.
TEST(GpuProver, Bn254GeneratedCircuitsMatchCpuBackend) {
  REQUIRE_GPU();
  for (int log_n : {4, 8, 12, 16})
    expect_same_proofs(generated<Bn254>(log_n, 3000 + rng()() % 1000), log_n >= 12 ? 3 : 2);
}

// PoRep-profile witnesses (94% 0/1) take the plain plan at the width their bit lengths call for
// instead of the tables (msm_prefer_plain): raw MSMs and proofs still equal the CPU backend's.
TEST(GpuProver, PorepCircuitsMatchCpuBackend) {
  REQUIRE_GPU();
  for (int log_n : {12, 16}) {
    expect_same_proofs(generated(log_n, 5000 + rng()() % 1000, groth16::GenProfile::porep), 2);
    expect_same_proofs(generated<Bn254>(log_n, 6000 + rng()() % 1000, groth16::GenProfile::porep), 2);
  }
}

TEST(GpuProver, SnarkjsKeyMatchesCpuAndSnarkjsProof) {
  REQUIRE_GPU();
  fs::path dir = reference_dir() / "merkle_known_toxic";
  // The vectors are in the tree: a missing file is a broken checkout, never a reason to pass.
  ASSERT_TRUE(fs::exists(dir / "merkle_fast.zkey")) << "reference vectors not found in " << dir;
  Circuit c{std::make_shared<const ZKey>(read_zkey((dir / "merkle_fast.zkey").string())),
            read_wtns((dir / "witness.wtns").string())};
  expect_same_proofs(c, 2);
  // snarkjs's own deterministic proof with r = 7, s = 11.
  auto gpu = make_cuda_prover(c.zk);
  ProveOptions opt;
  opt.r = Fr::from_u64(7);
  opt.s = Fr::from_u64(11);
  Proof want = read_proof_json((dir / "det_r7_s11/proof.json").string());
  Proof got = gpu->prove(c.w, opt);
  EXPECT_EQ(got.a, want.a);
  EXPECT_EQ(got.b, want.b);
  EXPECT_EQ(got.c, want.c);
}

// Precomputed tables for all, some or none of the point sets (the plain path for the rest; mixed
// sets need a shared and a plain plan of the same witness), tables switched off at run time, and
// tables refused for lack of memory: every variant gives the CPU backend's proof for the same r, s.
TEST(GpuProver, PrecomputedTablesOnOffAndPartialGiveSameProofs) {
  REQUIRE_GPU();
  Circuit c = generated(10, 4000 + rng()() % 1000);
  auto cpu = make_cpu_prover(c.zk);
  VerificationKey vk = vk_from_zkey(*c.zk);
  std::vector<Fr> pub = public_signals(c.w, c.zk->n_public);
  ProveOptions opt;
  opt.r = rand_fr();
  opt.s = rand_fr();
  RawMsms rc;
  Proof pc = cpu->prove(c.w, opt, &rc);
  struct Variant {
    bool enabled;
    std::string sets;
    size_t headroom;
    std::string want_sets, want_skipped;
  };
  const size_t huge = size_t(1) << 50;  // more than any device has: every table is refused
  for (const Variant& v : {Variant{true, "a,b1,c,h,b2", size_t(1) << 20, "a,b1,c,h,b2", ""},
                           Variant{false, "a,b1,c,h,b2", size_t(1) << 20, "", ""},
                           Variant{true, "h,b1", size_t(1) << 20, "h,b1", ""},
                           Variant{true, " b2 , c,a ", size_t(1) << 20, "b2,c,a", ""},
                           Variant{true, "a,b1,c,h,b2", huge, "", "a,b1,c,h,b2"}}) {
    SCOPED_TRACE("enabled " + std::to_string(v.enabled) + ", sets '" + v.sets + "'");
    gpu::PrecomputeOptions po;
    po.enabled = v.enabled;
    po.sets = v.sets;
    po.headroom_bytes = v.headroom;
    gpu::GpuOptions go;
    go.precompute = po;
    auto gpu = make_cuda_prover(c.zk, 0, go);
    gpu::PrecomputeInfo pi;
    ASSERT_TRUE(cuda_backend_precompute(*gpu, pi));
    EXPECT_EQ(pi.sets, v.want_sets);
    EXPECT_EQ(pi.skipped, v.want_skipped);
    EXPECT_EQ(pi.table_bytes == 0, v.want_sets.empty());
    for (int on : {1, 0, 1}) {  // the same backend with its tables used, unused, used again
      EXPECT_TRUE(cuda_backend_use_precomputed(*gpu, on != 0));
      RawMsms rg;
      Proof pg = gpu->prove(c.w, opt, &rg);
      EXPECT_EQ(rg.a.to_affine(), rc.a.to_affine());
      EXPECT_EQ(rg.b1.to_affine(), rc.b1.to_affine());
      EXPECT_EQ(rg.b2.to_affine(), rc.b2.to_affine());
      EXPECT_EQ(rg.c.to_affine(), rc.c.to_affine());
      EXPECT_EQ(rg.h.to_affine(), rc.h.to_affine());
      EXPECT_EQ(pg.a, pc.a);
      EXPECT_EQ(pg.b, pc.b);
      EXPECT_EQ(pg.c, pc.c);
      EXPECT_TRUE(verify_proof(vk, pub, pg));
    }
  }
}

// The options as the config spells them, and their ranges.
TEST(GpuProver, OptionsParseAndValidate) {
  gpu::PrecomputeOptions d = gpu::PrecomputeOptions::parse("auto");
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.sets, "a,b1,c,h,b2");
  EXPECT_FALSE(gpu::PrecomputeOptions::parse("off").enabled);
  EXPECT_EQ(gpu::PrecomputeOptions::parse("h,a").sets, "h,a");
  EXPECT_EQ(gpu::PrecomputeOptions::parse("h", size_t(512) << 20).headroom_bytes, size_t(512) << 20);
  EXPECT_THROW(gpu::PrecomputeOptions::parse("a,q"), std::invalid_argument);
  gpu::GpuOptions o;
  EXPECT_NO_THROW(o.validate());
  for (int w : {1, 7, 23}) {
    o.msm_window = w;
    EXPECT_THROW(o.validate(), std::invalid_argument) << w;
  }
  o.msm_window = 20;
  o.ntt_passes = 9;
  EXPECT_THROW(o.validate(), std::invalid_argument);
  o.ntt_passes = 4;
  EXPECT_NO_THROW(o.validate());
}

// Whole proofs with the tunables away from their defaults (a fixed MSM window, NTT plans of 4 and 8
// passes, some sets without tables) are the cpu backend's proofs.
TEST(GpuProver, TunedOptionsGiveTheSameProofs) {
  REQUIRE_GPU();
  Circuit c = generated(12, 21);
  ProveOptions opt;
  opt.r = Fr::from_u64(5);
  opt.s = Fr::from_u64(9);
  Proof want = make_cpu_prover(c.zk)->prove(c.w, opt);
  for (int passes : {4, 8}) {
    gpu::GpuOptions g;
    g.msm_window = 10;
    g.ntt_passes = passes;
    g.precompute = gpu::PrecomputeOptions::parse("h,b2");
    auto prover = make_cuda_prover(c.zk, 0, g);
    Proof got = prover->prove(c.w, opt);
    EXPECT_EQ(got.a, want.a) << passes;
    EXPECT_EQ(got.b, want.b) << passes;
    EXPECT_EQ(got.c, want.c) << passes;
  }
}

// A key that leaves too little device memory for every MSM window at once (2^27 on the H200) is
// proved in window batches: simulated here by capping the MSM scratch (GpuOptions::msm_scratch_bytes).
// Proofs equal the CPU backend's in both profiles; the smaller caps must split the windows, and a cap
// below one window per engine is refused clearly.
TEST(GpuProver, WindowBatchesWhenMemoryIsShortGiveTheSameProofs) {
  REQUIRE_GPU();
  for (auto profile : {groth16::GenProfile::circom, groth16::GenProfile::porep}) {
    Circuit c = generated(12, 31, profile);
    ProveOptions opt;
    opt.r = Fr::from_u64(7);
    opt.s = Fr::from_u64(11);
    Proof want = make_cpu_prover(c.zk)->prove(c.w, opt);
    for (size_t cap_kb : {size_t(65536), size_t(8192), size_t(2048), size_t(256)}) {
      gpu::GpuOptions g;
      g.msm_scratch_bytes = cap_kb << 10;
      std::unique_ptr<ProverBackend> prover;
      try {
        prover = make_cuda_prover(c.zk, 0, g);
      } catch (const gpu::GpuError& e) {
        EXPECT_EQ(cap_kb, 256u) << e.what();
        EXPECT_NE(std::string(e.what()).find("even one window at a time"), std::string::npos) << e.what();
        continue;
      }
      gpu::PrecomputeInfo pi;
      ASSERT_TRUE(cuda_backend_precompute(*prover, pi));
      if (cap_kb <= 8192) EXPECT_GT(pi.msm_batches_w + pi.msm_batches_h, 2) << cap_kb << " KiB";
      if (cap_kb == 65536) EXPECT_EQ(pi.msm_batches_w + pi.msm_batches_h, 2);
      Proof got = prover->prove(c.w, opt);
      EXPECT_EQ(got.a, want.a) << cap_kb << " KiB, batches " << pi.msm_batches_w << "/" << pi.msm_batches_h;
      EXPECT_EQ(got.b, want.b) << cap_kb << " KiB";
      EXPECT_EQ(got.c, want.c) << cap_kb << " KiB";
    }
  }
}

TEST(GpuProver, RejectsWrongWitnessLength) {
  REQUIRE_GPU();
  Circuit c = generated(4, 7);
  auto gpu = make_cuda_prover(c.zk);
  std::vector<Fr> w = c.w;
  w.pop_back();
  EXPECT_THROW(gpu->prove(w, {}), std::invalid_argument);
}

// ---- proving from synthesized vectors (the daemon's shared-memory hand-off) ----

namespace {

// w, a, b, c as a synthesis worker leaves them: one page-aligned mapping holding all four vectors.
struct SynthSlot {
  size_t n_vars = 0, n = 0, bytes = 0;
  Fr* base = nullptr;
  SynthSlot(const Circuit& c) : n_vars(c.w.size()), n(c.zk->domain_size) {
    bytes = (n_vars + 3 * n) * sizeof(Fr);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base = static_cast<Fr*>(p);
    ConstraintEvaluator ev = ConstraintEvaluator::compile(*c.zk);
    std::copy(c.w.begin(), c.w.end(), base);
    ev.evaluate_into(base, base + n_vars, base + n_vars + n, base + n_vars + 2 * n);
  }
  ~SynthSlot() { munmap(base, bytes); }
  SynthesizedView view() const {
    return {base, n_vars, base + n_vars, base + n_vars + n, base + n_vars + 2 * n, n};
  }
};

void expect_same_raw(const RawMsms& g, const RawMsms& c) {
  EXPECT_EQ(g.a.to_affine(), c.a.to_affine());
  EXPECT_EQ(g.b1.to_affine(), c.b1.to_affine());
  EXPECT_EQ(g.b2.to_affine(), c.b2.to_affine());
  EXPECT_EQ(g.c.to_affine(), c.c.to_affine());
  EXPECT_EQ(g.h.to_affine(), c.h.to_affine());
}

void expect_synthesized_matches(const Circuit& c, bool registered, int proofs) {
  auto cpu = make_cpu_prover(c.zk);
  auto gpu = make_cuda_prover(c.zk);
  expect_all_tables(*gpu);
  VerificationKey vk = vk_from_zkey(*c.zk);
  std::vector<Fr> pub = public_signals(c.w, c.zk->n_public);
  SynthSlot slot(c);
  if (registered) {
    gpu::register_host(slot.base, slot.bytes);
    EXPECT_TRUE(gpu::host_registered(slot.base + slot.n_vars + 2 * slot.n));
  } else {
    EXPECT_FALSE(gpu::host_registered(slot.base));
  }
  for (int i = 0; i < proofs; i++) {
    ProveOptions opt;
    opt.r = i == 0 ? Fr::zero() : rand_fr();
    opt.s = i == 0 ? Fr::one() : rand_fr();
    RawMsms rc, rg, rw;
    Proof pc = cpu->prove(c.w, opt, &rc);
    Proof pg = gpu->prove_synthesized(slot.view(), opt, &rg);
    expect_same_raw(rg, rc);
    EXPECT_EQ(pg.a, pc.a);
    EXPECT_EQ(pg.b, pc.b);
    EXPECT_EQ(pg.c, pc.c);
    EXPECT_TRUE(verify_proof(vk, pub, pg));
    // The same engine alternates between both paths.
    Proof pw = gpu->prove(c.w, opt, &rw);
    EXPECT_EQ(pw.c, pc.c);
    // w alone from the slot (synthesis.abc = "gpu"): a, b, c evaluated on the device.
    SynthesizedView w_only = slot.view();
    w_only.a = w_only.b = w_only.c = nullptr;
    RawMsms ro;
    Proof po = gpu->prove_synthesized(w_only, opt, &ro);
    expect_same_raw(ro, rc);
    EXPECT_EQ(po.c, pc.c);
  }
  // H comes from the vectors handed over, not from w: a c that is not a o b changes H exactly as it
  // does on the CPU backend, and the proof no longer verifies.
  Fr* cv = slot.base + slot.n_vars + 2 * slot.n;
  Fr keep0 = cv[0], keep1 = cv[slot.n - 1];
  cv[0] = cv[0] + Fr::one();
  cv[slot.n - 1] = rand_fr();
  ProveOptions opt;
  opt.r = rand_fr();
  opt.s = rand_fr();
  RawMsms rc, rg;
  Proof pc = cpu->prove_synthesized(slot.view(), opt, &rc);
  Proof pg = gpu->prove_synthesized(slot.view(), opt, &rg);
  expect_same_raw(rg, rc);
  EXPECT_EQ(pg.c, pc.c);
  EXPECT_FALSE(verify_proof(vk, pub, pg));
  cv[0] = keep0;
  cv[slot.n - 1] = keep1;
  if (registered) {
    gpu::unregister_host(slot.base);
    EXPECT_FALSE(gpu::host_registered(slot.base));
  }
}

}  // namespace

TEST(GpuProver, SynthesizedMatchesCpuBackend) {
  REQUIRE_GPU();
  for (int log_n : {4, 8, 12}) expect_synthesized_matches(generated(log_n, 2000 + rng()() % 1000), false, 2);
}

TEST(GpuProver, SynthesizedFromRegisteredMemory) {
  REQUIRE_GPU();
  for (int log_n : {6, 13}) expect_synthesized_matches(generated(log_n, 3000 + rng()() % 1000), true, 2);
}

// The device spans of a proof: every stage the prover runs, each inside the proof's wall time, and
// a busy time (their union) no longer than that wall time; both paths alike.
TEST(GpuProver, StageSpansCoverTheProof) {
  REQUIRE_GPU();
  Circuit c = generated(16, 4000 + rng()() % 1000);
  auto gpu = make_cuda_prover(c.zk);
  SynthSlot slot(c);
  EXPECT_TRUE(gpu->last_spans().empty());
  auto check = [&](std::vector<std::string> want, double wall_ms) {
    std::vector<StageSpan> spans = gpu->last_spans();
    std::set<std::string> seen;
    for (const auto& s : spans) {
      seen.insert(s.stage);
      EXPECT_GE(s.start_ms, 0) << s.stage;
      EXPECT_LE(s.start_ms, s.end_ms) << s.stage;
      EXPECT_LE(s.end_ms, wall_ms) << s.stage;
    }
    for (const auto& st : want) EXPECT_TRUE(seen.count(st)) << st << " has no span";
    StageBusy b = summarize_spans(spans);
    EXPECT_GT(b.total_ms, 0);
    EXPECT_LE(b.total_ms, wall_ms);
    double sum = 0;
    for (const auto& [stage, ms] : b.stages) sum += ms;
    EXPECT_GE(sum + 1e-9, b.total_ms);
    std::printf("[gpu tests] 2^16 %s: wall %.3f ms, device busy %.3f ms, stage sum %.3f ms\n",
                seen.count("eval") ? "prove" : "prove_synthesized", wall_ms, b.total_ms, sum);
  };
  for (int i = 0; i < 2; i++) {  // the second proof reuses the recorded events
    auto t0 = std::chrono::steady_clock::now();
    gpu->prove_synthesized(slot.view(), {});
    check({"copy", "ntt", "msm_plan", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h"},
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    t0 = std::chrono::steady_clock::now();
    gpu->prove(c.w, {});
    check({"copy", "eval", "ntt", "msm_plan", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h"},
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
}

TEST(GpuProver, SynthesizedRejectsSizeMismatch) {
  REQUIRE_GPU();
  Circuit c = generated(5, 11);
  auto gpu = make_cuda_prover(c.zk);
  SynthSlot slot(c);
  SynthesizedView v = slot.view();
  v.n_vars--;
  EXPECT_THROW(gpu->prove_synthesized(v, {}), std::invalid_argument);
  v = slot.view();
  v.n_vars++;
  EXPECT_THROW(gpu->prove_synthesized(v, {}), std::invalid_argument);
  v = slot.view();
  v.domain_size /= 2;
  EXPECT_THROW(gpu->prove_synthesized(v, {}), std::invalid_argument);
  v = slot.view();
  v.b = nullptr;
  EXPECT_THROW(gpu->prove_synthesized(v, {}), std::invalid_argument);
  // The engine is still usable after the rejections.
  ProveOptions opt;
  opt.r = Fr::from_u64(3);
  opt.s = Fr::from_u64(4);
  auto cpu = make_cpu_prover(c.zk);
  EXPECT_EQ(gpu->prove_synthesized(slot.view(), opt).c, cpu->prove(c.w, opt).c);
}

TEST(GpuDevice, RegisterHostErrorsAreClear) {
  REQUIRE_GPU();
  EXPECT_THROW(gpu::register_host(nullptr, 4096), gpu::GpuError);
  size_t bytes = size_t(1) << 20;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  EXPECT_THROW(gpu::register_host(p, 0), gpu::GpuError);
  EXPECT_THROW(gpu::unregister_host(p), gpu::GpuError);  // never registered
  gpu::register_host(p, bytes);
  EXPECT_TRUE(gpu::host_registered(p));
  try {
    gpu::register_host(p, bytes);
    ADD_FAILURE() << "registering twice did not throw";
  } catch (const gpu::GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("register_host"), std::string::npos) << e.what();
  }
  gpu::unregister_host(p);
  EXPECT_FALSE(gpu::host_registered(p));
  EXPECT_THROW(gpu::unregister_host(p), gpu::GpuError);
  munmap(p, bytes);
  // A read-only shared mapping (how a prover may map a synthesis worker's slot) registers too.
  char path[] = "/tmp/cuzk_gpu_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, (off_t)bytes), 0);
  void* ro = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(ro, MAP_FAILED);
  gpu::register_host(ro, bytes);
  EXPECT_TRUE(gpu::host_registered(ro));
  gpu::unregister_host(ro);
  munmap(ro, bytes);
  close(fd);
}

TEST(GpuDevice, MissingDeviceIsAClearError) {
  int n = gpu::device_count();
  EXPECT_THROW(gpu::device_info(n + 3), gpu::GpuError);
  if (n == 0) {
    Circuit c = generated(4, 3);
    EXPECT_THROW(make_cuda_prover(c.zk), gpu::GpuError);
  }
}

// ---- BN254 (snarkjs's bn128): the same kernels instantiated for the curve, every result against
// the definitions of tests/gpu/curve_refs.hpp.

namespace {
using BnF = bn254::Fr;
}  // namespace

TEST(GpuBn254, NttMatchesReference) {
  REQUIRE_GPU();
  // 2^1 (radix-2 passes), 2^2.. (register-tiled), 2^11.. (two passes), 2^20 and 2^21 (three).
  for (int k : {1, 2, 3, 8, 11, 16, 20, 21}) {
    size_t n = size_t(1) << k;
    std::vector<BnF> x(n);
    for (auto& e : x) e = test::random_scalar<BnF>(rng());
    for (int inverse = 0; inverse < 2; inverse++)
      for (int coset = 0; coset < 2; coset++) {
        std::vector<BnF> ref = test::ntt_ref(x, k, inverse, coset);
        std::vector<BnF> got = x;
        gpu::ntt(0, got.data(), k, inverse, coset);
        ASSERT_TRUE(got == ref) << "k=" << k << " inverse=" << inverse << " coset=" << coset;
      }
  }
  // The definition itself at a small size, through the device.
  std::vector<BnF> x(64);
  for (auto& e : x) e = test::random_scalar<BnF>(rng());
  std::vector<BnF> got = x;
  gpu::ntt(0, got.data(), 6, false);
  EXPECT_TRUE(got == test::naive_dft(x, 6, false));
}

// BN254's Fr has two-adicity 28: 2^29 (and a coset transform of 2^28, whose shift is a 2^29-th root)
// do not exist and are refused before anything is allocated.
TEST(GpuBn254, NttBeyondTwoAdicityIsAnError) {
  REQUIRE_GPU();
  BnF one = BnF::one();
  EXPECT_THROW(gpu::ntt(0, &one, 29, false), gpu::GpuError);
  EXPECT_THROW(gpu::ntt(0, &one, 28, false, true), gpu::GpuError);
  EXPECT_THROW(gpu::compute_h_coset(0, std::vector<BnF>{one}, {one}, {one}, 28), gpu::GpuError);
}

TEST(GpuBn254, HStageMatchesReference) {
  REQUIRE_GPU();
  for (int k : {1, 5, 12, 18}) {
    size_t n = size_t(1) << k;
    std::vector<BnF> a(n), b(n), c(n);
    for (size_t i = 0; i < n; i++) {
      a[i] = test::random_scalar<BnF>(rng());
      b[i] = test::random_scalar<BnF>(rng());
      c[i] = a[i] * b[i] - test::random_scalar<BnF>(rng());
    }
    ASSERT_TRUE(gpu::compute_h_coset(0, a, b, c, k) == test::h_coset_ref(a, b, c, k)) << "k=" << k;
  }
}

// G1 and G2, plain and over precomputed bases, at 1, small and 2^16 points (2^12 for G2), with
// points at infinity, repeats, negations, and scalars 0, 1, r-1, r-small, around (r-1)/2 and random;
// the small sizes against the definition, the large ones against the bucket reference.
TEST(GpuBn254, MsmMatchesReference) {
  REQUIRE_GPU();
  auto g1 = test::random_points_of<BnF>(rng(), size_t(1) << 16, bn254::g1_generator());
  auto g2 = test::random_points_of<BnF>(rng(), size_t(1) << 12, bn254::g2_generator());
  for (size_t n : {size_t(1), size_t(2), size_t(100), size_t(1) << 16}) {
    std::vector<bn254::G1Affine> p(g1.begin(), g1.begin() + n);
    auto sc = test::edge_scalars<BnF>(rng(), n);
    auto ref = (n <= 100 ? test::naive_msm(p, sc) : test::bucket_msm(p, sc)).to_affine();
    ASSERT_EQ(gpu::msm_g1(0, p.data(), sc.data(), n).to_affine(), ref) << "G1 n=" << n;
    ASSERT_EQ(gpu::msm_g1_precomputed(0, p.data(), sc.data(), n).to_affine(), ref) << "G1 precomputed n=" << n;
  }
  for (size_t n : {size_t(1), size_t(77), size_t(1) << 12}) {
    std::vector<bn254::G2Affine> p(g2.begin(), g2.begin() + n);
    auto sc = test::edge_scalars<BnF>(rng(), n);
    auto ref = (n <= 100 ? test::naive_msm(p, sc) : test::bucket_msm(p, sc)).to_affine();
    ASSERT_EQ(gpu::msm_g2(0, p.data(), sc.data(), n).to_affine(), ref) << "G2 n=" << n;
    ASSERT_EQ(gpu::msm_g2_precomputed(0, p.data(), sc.data(), n).to_affine(), ref) << "G2 precomputed n=" << n;
  }
  // All scalars zero, all points at infinity, and every window width the plain plans allow.
  std::vector<bn254::G1Affine> p(g1.begin(), g1.begin() + 3000);
  std::vector<BnF> zeros(p.size(), BnF::zero()), sc = test::edge_scalars<BnF>(rng(), p.size());
  EXPECT_TRUE(gpu::msm_g1(0, p.data(), zeros.data(), p.size()).is_inf());
  std::vector<bn254::G1Affine> inf(p.size(), bn254::G1Affine::infinity());
  EXPECT_TRUE(gpu::msm_g1(0, inf.data(), sc.data(), p.size()).is_inf());
  auto ref = test::bucket_msm(p, sc).to_affine();
  for (int c : {4, 9, 13, 16}) ASSERT_EQ(gpu::msm_g1(0, p.data(), sc.data(), p.size(), c).to_affine(), ref) << c;
}

// ---- proofs batched on the device ----

namespace {

// B witnesses of one key (the circuit's, then vectors with random entries: the MSMs and the H stage
// are defined for any vector) with their a, b, c, proved as batches of each size in `sizes`, with
// and without a, b, c handed over, over the tables and without them: every proof's MSMs equal the
// cpu backend's for its own witness.
template <class C>
void expect_batches_match(const CircuitOn<C>& c, const std::vector<size_t>& sizes) {
  using F = typename C::Fr;
  auto cpu = make_cpu_prover<C>(c.zk);
  auto gpu = make_cuda_prover<C>(c.zk);
  const size_t limit = gpu->batch_limit();
  ASSERT_GE(limit, *std::max_element(sizes.begin(), sizes.end()));
  const size_t most = *std::max_element(sizes.begin(), sizes.end());
  const size_t nv = c.zk->n_vars, n = c.zk->domain_size;
  auto ev = groth16::ConstraintEvaluator<C>::compile(*c.zk);
  std::vector<std::vector<F>> ws(most), abc(most);
  std::vector<groth16::RawMsms<C>> want(most);
  for (size_t i = 0; i < most; i++) {
    ws[i] = c.w;
    if (i > 0)
      for (size_t k = 1; k < nv; k++) ws[i][k] = i % 2 ? random_fr<F>(rng()) : F::from_u64(rng()() % 3);
    abc[i].resize(3 * n);
    ev.evaluate_into(ws[i].data(), abc[i].data(), abc[i].data() + n, abc[i].data() + 2 * n);
    cpu->prove(ws[i], {}, &want[i]);
  }
  for (bool tables : {true, false}) {
    ASSERT_TRUE(cuda_backend_use_precomputed(*gpu, tables));
    for (bool with_abc : {true, false}) {
      for (size_t b : sizes) {
        std::vector<groth16::SynthesizedView<C>> views;
        for (size_t i = 0; i < b; i++) {
          const F* v = abc[i].data();
          views.push_back({ws[i].data(), nv, with_abc ? v : nullptr, with_abc ? v + n : nullptr,
                           with_abc ? v + 2 * n : nullptr, n});
        }
        std::vector<groth16::RawMsms<C>> got = gpu->msms_synthesized_batch(views);
        ASSERT_EQ(got.size(), b);
        for (size_t i = 0; i < b; i++) {
          SCOPED_TRACE("2^" + std::to_string(c.zk->log_domain) + " batch of " + std::to_string(b) + ", proof " +
                       std::to_string(i) + (tables ? ", tables" : ", plain") + (with_abc ? ", a b c" : ", w"));
          EXPECT_EQ(got[i].a.to_affine(), want[i].a.to_affine());
          EXPECT_EQ(got[i].b1.to_affine(), want[i].b1.to_affine());
          EXPECT_EQ(got[i].b2.to_affine(), want[i].b2.to_affine());
          EXPECT_EQ(got[i].c.to_affine(), want[i].c.to_affine());
          EXPECT_EQ(got[i].h.to_affine(), want[i].h.to_affine());
        }
      }
    }
  }
  // A batch over the key's limit, or mixing proofs with and without a, b, c, is refused; the
  // engine still serves after.
  std::vector<groth16::SynthesizedView<C>> over(limit + 1, {ws[0].data(), nv, nullptr, nullptr, nullptr, n});
  EXPECT_THROW(gpu->msms_synthesized_batch(over), std::invalid_argument);
  std::vector<groth16::SynthesizedView<C>> mixed = {
      {ws[0].data(), nv, nullptr, nullptr, nullptr, n},
      {ws[1 % most].data(), nv, abc[1 % most].data(), abc[1 % most].data() + n, abc[1 % most].data() + 2 * n, n}};
  EXPECT_THROW(gpu->msms_synthesized_batch(mixed), std::invalid_argument);
  groth16::RawMsms<C> one = gpu->msms_synthesized({ws[0].data(), nv, nullptr, nullptr, nullptr, n});
  EXPECT_EQ(one.h.to_affine(), want[0].h.to_affine());
}

}  // namespace

TEST(GpuProver, BatchesMatchCpuBackendProofByProof) {
  REQUIRE_GPU();
  // 11: more proofs than H lanes, so that lanes take several proofs each.
  for (int log_n : {4, 9, 13}) expect_batches_match(generated(log_n, 4000 + rng()() % 1000), {2, 3, 11});
}

TEST(GpuProver, Bn254BatchesMatchCpuBackendProofByProof) {
  REQUIRE_GPU();
  for (int log_n : {5, 13}) expect_batches_match(generated<Bn254>(log_n, 5000 + rng()() % 1000), {2, 5, 10});
}

// Keys whose proofs fill the device take no batches; small keys take several.
TEST(GpuProver, BatchLimitFollowsTheKeySize) {
  REQUIRE_GPU();
  // 2^21 domain points a batch by default; at most 256 proofs.
  EXPECT_EQ(make_cuda_prover(generated(12, 7).zk)->batch_limit(), 256u);
  EXPECT_EQ(make_cuda_prover(generated(18, 7).zk)->batch_limit(), 8u);
  gpu::GpuOptions g;
  g.batch_points = size_t(1) << 18;
  EXPECT_EQ(make_cuda_prover(generated(18, 7).zk, 0, g)->batch_limit(), 1u);
  EXPECT_EQ(make_cuda_prover(generated(15, 7).zk, 0, g)->batch_limit(), 8u);
}
