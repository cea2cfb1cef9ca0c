// The backend registry: names, refusals with reasons, and the cpu backend's primitives and prover
// reached through the one interface (the cuda backend is held to the cpu one in tests/gpu).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "groth16/random.hpp"
#include "groth16/verifier.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

const std::string kToxic = std::string(CUZK_REFERENCE_DIR) + "/merkle_known_toxic";

TEST(Backend, NamesListCpuAndCudaOnlyWhenBuilt) {
  std::vector<std::string> names = backend_names();
  EXPECT_EQ(names.front(), "cpu");
  EXPECT_EQ(std::count(names.begin(), names.end(), "cuda"), cuda_backend_built() ? 1 : 0);
  EXPECT_STREQ(make_backend("cpu")->name(), "cpu");
}

TEST(Backend, UnknownNameIsRefusedWithTheKnownOnes) {
  try {
    make_backend("opencl");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'opencl'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
  }
}

// Without CUDA in the build or without a device, cuda is refused with the reason and auto is cpu.
TEST(Backend, CudaWithoutDeviceIsRefusedAndAutoFallsBackToCpu) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present (tests/gpu covers the cuda backend)";
  try {
    make_backend("cuda");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    std::string why = e.what();
    EXPECT_TRUE(why.find("-DCUZK_CUDA=ON") != std::string::npos || why.find("no CUDA device") != std::string::npos)
        << why;
  }
  EXPECT_STREQ(make_backend("auto")->name(), "cpu");
}

TEST(Backend, CpuNttRoundTripsAndMsmIsLinear) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto be = make_backend("cpu");
  std::vector<Fr> x(1 << 6);
  for (Fr& v : x) v = random_fr(rng);
  std::vector<Fr> y = x;
  be->ntt(y.data(), 6, false);
  EXPECT_NE(y, x);
  be->ntt(y.data(), 6, true);
  EXPECT_EQ(y, x);
  // sum k_i (c P) = c sum k_i P over a few multiples of the generator.
  const size_t n = 9;
  std::vector<G1Affine> p(n);
  std::vector<Fr> k(n);
  for (size_t i = 0; i < n; i++) {
    p[i] = G1::from_affine(bls12_381::g1_generator()).mul(random_fr(rng).to_plain()).to_affine();
    k[i] = random_fr(rng);
  }
  G1 s = be->msm_g1(p.data(), k.data(), n);
  Fr two = Fr::from_u64(2);
  for (Fr& v : k) v = v * two;
  EXPECT_EQ((s + s).to_affine(), be->msm_g1(p.data(), k.data(), n).to_affine());
}

// A prover by name proves what snarkjs verifies (the reference key and witness).
TEST(Backend, CpuProverByNameGivesAValidProof) {
  const std::string zkey = kToxic + "/merkle_fast.zkey", wtns = kToxic + "/witness.wtns";
  ASSERT_TRUE(std::filesystem::exists(zkey) && std::filesystem::exists(wtns)) << "reference vectors missing";
  auto zk = std::make_shared<const ZKey>(read_zkey(zkey));
  std::vector<Fr> w = read_wtns(wtns);
  auto prover = make_prover("cpu", zk);
  Proof p = prover->prove(w, {});
  EXPECT_TRUE(verify_proof(vk_from_zkey(*zk), public_signals(w, zk->n_public), p));
  EXPECT_FALSE(prover->last_spans().empty());
  EXPECT_FALSE(prover->last_host_times().has_value());
}

// A key's image: its matrices compiled once (or given, as the evaluator cache maps them) and shared
// by every load; page-locks widened to pages, merged, and undone with the image's last holder.
TEST(Backend, KeyImagesShareTheirMatricesAndTheirPageLocksEndWithThem) {
  const std::string zkey = kToxic + "/merkle_fast.zkey", wtns = kToxic + "/witness.wtns";
  ASSERT_TRUE(std::filesystem::exists(zkey) && std::filesystem::exists(wtns)) << "reference vectors missing";
  auto zk = std::make_shared<const ZKey>(read_zkey(zkey));
  std::vector<Fr> w = read_wtns(wtns);
  auto be = make_backend("cpu");
  auto image = be->prepare(zk, true, nullptr);
  ASSERT_TRUE(image->ev);
  EXPECT_EQ(image->pinned_bytes, 0u);  // the cpu backend copies nothing: nothing locked
  // Loads from one image give the proof prover(zk) gives, and share its evaluator.
  groth16::ProveOptions<Bls12_381> opt;
  opt.r = Fr::from_u64(3), opt.s = Fr::from_u64(5);
  Proof p1 = be->load(image)->prove(w, opt), p2 = be->prover(zk)->prove(w, opt);
  EXPECT_EQ(p1.a, p2.a);
  EXPECT_EQ(p1.c, p2.c);
  EXPECT_EQ(be->prepare(zk, false, image->ev)->ev, image->ev);
  // An evaluator of another key is refused.
  auto other = std::make_shared<ConstraintEvaluator>();
  other->n_rows = 4, other->n_vars = 4;
  EXPECT_THROW(be->prepare(zk, false, other), std::invalid_argument);

  // A key whose arrays are large enough to lock (points at infinity: only the sizes matter here).
  auto big = std::make_shared<ZKey>();
  const uint32_t n = 1u << 14;
  big->n_vars = n, big->n_public = 1, big->domain_size = n, big->log_domain = 14;
  big->a.assign(size_t(n), G1Affine{});
  big->b1.assign(size_t(n), G1Affine{});
  big->b2.assign(size_t(n), G2Affine{});
  big->c.assign(size_t(n - 2), G1Affine{});
  big->h.assign(size_t(n), G1Affine{});

  // The locks, through a fake driver: every array of 1 MiB or more, on whole pages, each page once.
  std::vector<std::pair<uintptr_t, size_t>> locked;
  std::vector<uintptr_t> unlocked;
  {
    auto img = std::make_shared<KeyImage<Bls12_381>>(*compile_key_image<Bls12_381>(big));
    pin_key_image<Bls12_381>(
        *img, [&](void* p, size_t n) { locked.emplace_back(uintptr_t(p), n); },
        [&](void* p) { unlocked.push_back(uintptr_t(p)); });
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    ASSERT_FALSE(locked.empty());
    size_t total = 0;
    for (auto [p, n] : locked) {
      EXPECT_EQ(p % page, 0u);
      EXPECT_EQ(n % page, 0u);
      total += n;
    }
    for (size_t i = 1; i < locked.size(); i++)  // disjoint
      for (size_t j = 0; j < i; j++)
        EXPECT_TRUE(locked[i].first >= locked[j].first + locked[j].second ||
                    locked[j].first >= locked[i].first + locked[i].second);
    // Every point array lies inside what was locked.
    auto covered = [&](const void* p, size_t n) {
      for (auto [b, len] : locked)
        if (uintptr_t(p) >= b && uintptr_t(p) + n <= b + len) return true;
      return false;
    };
    EXPECT_TRUE(covered(big->a.data(), big->a.size() * sizeof(G1Affine)));
    EXPECT_TRUE(covered(big->b2.data(), big->b2.size() * sizeof(G2Affine)));
    EXPECT_TRUE(covered(big->h.data(), big->h.size() * sizeof(G1Affine)));
    EXPECT_EQ(img->pinned_bytes, total);
    EXPECT_TRUE(unlocked.empty());  // held while the image is
  }
  EXPECT_EQ(unlocked.size(), locked.size());  // the last holder let go: every lock undone
  // A driver that refuses: the image stays pageable (its loads stage the copies), nothing to undo.
  unlocked.clear();
  {
    auto img = std::make_shared<KeyImage<Bls12_381>>(*compile_key_image<Bls12_381>(big));
    pin_key_image<Bls12_381>(
        *img, [](void*, size_t) { throw std::runtime_error("the driver says no"); },
        [&](void* p) { unlocked.push_back(uintptr_t(p)); });
    EXPECT_EQ(img->pinned_bytes, 0u);
  }
  EXPECT_TRUE(unlocked.empty());
}

}  // namespace
