// NTT against the definition (sum x_j w^{ij}) with snarkjs's roots, round trips, and the H stage
// against a direct evaluation on the odd coset.
#include <gtest/gtest.h>

#include <random>

#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

Fr rand_fr(std::mt19937_64& rng) { return random_fr(rng); }

std::vector<Fr> rand_vec(size_t n, std::mt19937_64& rng) {
  std::vector<Fr> v(n);
  for (auto& x : v) x = rand_fr(rng);
  return v;
}

// p(x) for coefficients c, by Horner.
Fr eval_poly(const std::vector<Fr>& c, const Fr& x) {
  Fr acc = Fr::zero();
  for (size_t i = c.size(); i-- > 0;) acc = acc * x + c[i];
  return acc;
}

}  // namespace

TEST(Ntt, RootsAreSnarkjs) {
  // w32 = 5^((r-1)/2^32) (FORMATS.md), and w_k has order exactly 2^k.
  Scalar e;
  for (int i = 0; i < 4; i++) e.l[i] = FrParams::MOD[i];
  e.l[0] -= 1;
  for (int i = 0; i < 4; i++) e.l[i] = (e.l[i] >> 32) | (i < 3 ? e.l[i + 1] << 32 : 0);
  EXPECT_EQ(Fr::from_u64(5).pow(e), root_of_unity(32));
  for (int k : {1, 4, 12}) {
    Fr w = root_of_unity(k);
    EXPECT_EQ(w.pow_u64(1ull << k), Fr::one());
    EXPECT_NE(w.pow_u64(1ull << (k - 1)), Fr::one());
  }
}

TEST(Ntt, ForwardMatchesDefinition) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (int log_n : {0, 1, 2, 3, 5, 8}) {
    size_t n = size_t(1) << log_n;
    auto x = rand_vec(n, rng);
    auto y = x;
    ntt(y.data(), log_n, false);
    Fr w = root_of_unity(log_n);
    for (size_t i = 0; i < n; i++) EXPECT_EQ(y[i], eval_poly(x, w.pow_u64(i))) << "log_n=" << log_n << " i=" << i;
  }
}

// Sizes above the cache block (2^12) exercise the whole-array stages; all thread counts agree.
TEST(Ntt, RoundTripAndThreads) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (int log_n : {4, 12, 13, 15}) {
    size_t n = size_t(1) << log_n;
    auto x = rand_vec(n, rng);
    auto y = x;
    ntt(y.data(), log_n, false);
    // Spot-check a few outputs of the large transforms against the definition.
    Fr w = root_of_unity(log_n);
    for (size_t i : {size_t(0), size_t(1), n / 2 + 3, n - 1}) EXPECT_EQ(y[i], eval_poly(x, w.pow_u64(i)));
    for (size_t t : {1, 3}) {
      set_thread_count(t);
      auto z = x;
      ntt(z.data(), log_n, false);
      EXPECT_EQ(z, y) << "threads=" << t;
    }
    set_thread_count(0);
    ntt(y.data(), log_n, true);
    EXPECT_EQ(y, x) << "log_n=" << log_n;
  }
}

TEST(Ntt, InverseIncludesOneOverN) {
  // The inverse of the all-ones vector is the unit coefficient vector (1, 0, ..., 0).
  std::vector<Fr> v(64, Fr::one());
  ntt(v.data(), 6, true);
  EXPECT_EQ(v[0], Fr::one());
  for (size_t i = 1; i < v.size(); i++) EXPECT_TRUE(v[i].is_zero());
}

TEST(Ntt, RejectsBadSizes) {
  Fr x = Fr::one();
  EXPECT_THROW(ntt(&x, -1, false), std::invalid_argument);
  EXPECT_THROW(ntt(&x, 33, false), std::invalid_argument);  // 2^32 is the largest root of unity
  bn254::Fr y = bn254::Fr::one();
  EXPECT_THROW(ntt(&y, 29, false), std::invalid_argument);  // BN254: 2^28
  EXPECT_THROW(compute_h_coset<Fr>({Fr::one()}, {Fr::one()}, {}, 0), std::invalid_argument);
}

// H stage: P[i] = A(g_i) B(g_i) - C(g_i) at the odd points g_i = inc w^i of the 2n domain, where
// A, B, C interpolate a, b, c on the n domain.
TEST(Ntt, HCosetMatchesDirectEvaluation) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (int log_n : {0, 3, 13}) {
    size_t n = size_t(1) << log_n;
    auto a = rand_vec(n, rng), b = rand_vec(n, rng), c = rand_vec(n, rng);
    auto p = compute_h_coset(a, b, c, log_n);
    ASSERT_EQ(p.size(), n);
    auto ca = a, cb = b, cc = c;
    ntt(ca.data(), log_n, true), ntt(cb.data(), log_n, true), ntt(cc.data(), log_n, true);
    Fr inc = root_of_unity(log_n + 1), w = root_of_unity(log_n);
    for (size_t i : {size_t(0), n / 2, n - 1}) {
      Fr g = inc * w.pow_u64(i);
      EXPECT_EQ(p[i], eval_poly(ca, g) * eval_poly(cb, g) - eval_poly(cc, g)) << "log_n=" << log_n << " i=" << i;
    }
  }
}
