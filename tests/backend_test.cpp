// The backend registry: names, refusals with reasons, and the cpu backend's primitives and prover
// reached through the one interface (the cuda backend is held to the cpu one in tests/gpu).
#include <gtest/gtest.h>

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

}  // namespace
