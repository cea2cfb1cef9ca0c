// Pippenger MSM (G1 and G2) against sums of scalar multiplications, and the XYZZ / Booth-digit
// building blocks of math/msm.hpp.
#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "groth16/msm.hpp"
#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "math/msm.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

Fr rand_fr(std::mt19937_64& rng) { return random_fr(rng); }

// Points whose discrete logs are known: P_i = t_i G. The points come from a walk P_{i+1} = P_i + D
// (cheap additions) with duplicates, negations and infinities mixed in, so that the expected MSM is
// (sum s_i t_i) G, one scalar multiplication, whatever n is.
template <class C>
struct KnownPoints {
  std::vector<Affine<C>> pts;
  std::vector<Fr> logs;
};

template <class C>
KnownPoints<C> known_points(size_t n, const Affine<C>& gen, std::mt19937_64& rng) {
  Fr t0 = rand_fr(rng), d = rand_fr(rng);
  Jacobian<C> g = Jacobian<C>::from_affine(gen), p = g.mul(t0.to_plain()), step = g.mul(d.to_plain());
  std::vector<Jacobian<C>> jac(n);
  KnownPoints<C> kp;
  kp.logs.resize(n);
  Fr t = t0;
  for (size_t i = 0; i < n; i++) {
    unsigned kind = rng() % 16;
    if (i > 0 && kind == 0) {  // a duplicate of an earlier point
      size_t j = rng() % i;
      jac[i] = jac[j], kp.logs[i] = kp.logs[j];
    } else if (i > 0 && kind == 1) {  // the negation of an earlier point
      size_t j = rng() % i;
      jac[i] = -jac[j], kp.logs[i] = -kp.logs[j];
    } else if (kind == 2) {  // infinity
      jac[i] = Jacobian<C>::infinity(), kp.logs[i] = Fr::zero();
    } else {
      jac[i] = p, kp.logs[i] = t;
      p = p + step, t = t + d;
    }
  }
  kp.pts = batch_to_affine(jac);
  return kp;
}

// Scalars mixing what real witnesses hold: zeros, ones, -1, small values, values around (r-1)/2
// (the fold point), and uniform ones.
std::vector<Fr> mixed_scalars(size_t n, std::mt19937_64& rng) {
  Scalar half;
  for (int i = 0; i < 4; i++) half.l[i] = (FrParams::MOD[i] >> 1) | (i < 3 ? FrParams::MOD[i + 1] << 63 : 0);
  Fr h = Fr::from_plain(half);
  std::vector<Fr> s(n);
  for (auto& x : s) {
    switch (rng() % 9) {
      case 0: x = Fr::zero(); break;
      case 1: x = Fr::one(); break;
      case 2: x = -Fr::one(); break;
      case 3: x = Fr::from_u64(rng() % 1000); break;
      case 4: x = h; break;
      case 5: x = h + Fr::one(); break;
      case 6: x = -Fr::from_u64(rng() % 100000); break;
      default: x = rand_fr(rng); break;
    }
  }
  return s;
}

template <class C>
Jacobian<C> expected(const KnownPoints<C>& kp, const std::vector<Fr>& s, const Affine<C>& gen) {
  Fr acc = Fr::zero();
  for (size_t i = 0; i < s.size(); i++) acc += s[i] * kp.logs[i];
  return Jacobian<C>::from_affine(gen).mul(acc.to_plain());
}

template <class C>
Jacobian<C> naive(const std::vector<Affine<C>>& p, const std::vector<Fr>& s) {
  Jacobian<C> acc = Jacobian<C>::infinity();
  for (size_t i = 0; i < s.size(); i++) acc += Jacobian<C>::from_affine(p[i]).mul(s[i].to_plain());
  return acc;
}

}  // namespace

TEST(MsmBlocks, SignedDigitsRecomposeTheScalar) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (int c : {2, 5, 8, 13, 16, 21}) {
    for (int it = 0; it < 50; it++) {
      Scalar k;
      for (auto& l : k.l) l = rng();
      k.l[3] >>= 2;  // < 2^254, the folded range
      int w = msm_window_count(254, c);
      Fr acc = Fr::zero(), pow = Fr::one(), base = Fr::from_u64(1ull << c);
      for (int i = 0; i < w; i++) {
        int d = msm_signed_digit(k, i, c);
        ASSERT_LE(std::abs(d), 1 << (c - 1));
        Fr df = d >= 0 ? Fr::from_u64(d) : -Fr::from_u64(-d);
        acc += df * pow;
        pow *= base;
      }
      EXPECT_EQ(acc, Fr::from_plain(k)) << "c=" << c;  // k < 2^254 < r
    }
  }
}

TEST(MsmBlocks, XyzzMatchesJacobian) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G1 g = G1::from_affine(g1_generator());
  G1 p = g.mul(rand_fr(rng).to_plain()), q = g.mul(rand_fr(rng).to_plain());
  G1Affine pa = p.to_affine(), qa = q.to_affine();
  using X = XYZZ<G1Curve>;
  X xp = X::from_affine(pa).add_affine(qa);  // P + Q
  EXPECT_EQ(xp.to_jacobian(), p + q);
  EXPECT_EQ(xp.dbl().to_jacobian(), (p + q).dbl());
  EXPECT_EQ((xp + X::from_affine(qa)).to_jacobian(), p + q + q);
  EXPECT_EQ(X::from_affine(pa).add_affine(pa).to_jacobian(), p.dbl());  // doubling case
  EXPECT_TRUE(X::from_affine(pa).add_affine(-pa).is_inf());             // cancellation
  EXPECT_EQ((xp + xp).to_jacobian(), (p + q).dbl());
  EXPECT_TRUE((xp + (-xp)).is_inf());
  EXPECT_EQ((X::infinity() + xp).to_jacobian(), p + q);
  // Affine pair addition, all cases.
  for (auto [u, v] : {std::pair{pa, qa}, std::pair{pa, pa}, std::pair{pa, -pa}, std::pair{G1Affine::infinity(), qa},
                      std::pair{pa, G1Affine::infinity()}}) {
    PairKind k = pair_kind(u, v);
    G1Affine sum = pair_finish(u, v, k, pair_denominator(u, v, k).inv());
    EXPECT_EQ(G1::from_affine(sum), G1::from_affine(u) + G1::from_affine(v));
  }
  // A value with y = 0 is its own negation: P + P cancels and asks for no inversion of 2y = 0, so
  // that one such point cannot void the shared inversion of a whole batch.
  G1Affine t{pa.x, Fq::zero()};
  EXPECT_EQ(pair_kind(t, t), PairKind::Cancel);
  EXPECT_FALSE(pair_denominator(t, t, pair_kind(t, t)).is_zero());
  EXPECT_TRUE(pair_finish(t, t, PairKind::Cancel, Fq::one()).is_inf());
}

// The width-5 NAF recomposes its scalar with the digit shape it promises, and Straus's linear
// combination (proof assembly, verification) equals the sum of double-and-add multiplications,
// for the awkward scalars too (0, 1, -1 = r-1, 16, 31, all ones below 2^255) and on G2.
TEST(MsmBlocks, LinearCombinationMatchesMul) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  std::vector<Scalar> ks;
  for (Fr f : {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(16), Fr::from_u64(31)}) ks.push_back(f.to_plain());
  ks.push_back(Scalar{{~0ull, ~0ull, ~0ull, ~0ull >> 1}});
  for (int i = 0; i < 6; i++) ks.push_back(rand_fr(rng).to_plain());
  for (const Scalar& k : ks) {
    std::vector<int8_t> naf = wnaf5(k);
    Fr sum = Fr::zero(), two = Fr::one();
    std::optional<size_t> last;
    for (size_t i = 0; i < naf.size(); i++, two = two + two) {
      int d = naf[i];
      if (!d) continue;
      EXPECT_TRUE(d % 2 != 0 && d >= -15 && d <= 15) << d;
      EXPECT_TRUE(!last || i >= *last + 5) << "digits at " << *last << " and " << i;
      sum += d > 0 ? two * Fr::from_u64(d) : -(two * Fr::from_u64(-d));
      last = i;
    }
    if (!naf.empty()) {
      EXPECT_NE(naf.back(), 0);
    }
    const bool below_r = k.l[3] >> 63 == 0 && k.l[3] != (~0ull >> 1);  // all but the all-ones scalar
    if (below_r) {
      EXPECT_EQ(sum, Fr::from_plain(k));
    }
  }
  G1 g = G1::from_affine(g1_generator());
  G2 h = G2::from_affine(g2_generator());
  for (size_t n = 0; n <= ks.size(); n++) {
    std::vector<G1> p1;
    std::vector<G2> p2;
    G1 want1 = G1::infinity();
    G2 want2 = G2::infinity();
    for (size_t i = 0; i < n; i++) {
      p1.push_back(g.mul(rand_fr(rng).to_plain()));
      p2.push_back(h.mul(rand_fr(rng).to_plain()));
      want1 += p1[i].mul(ks[i]);
      want2 += p2[i].mul(ks[i]);
    }
    EXPECT_EQ(linear_combination(p1.data(), ks.data(), n), want1) << "n=" << n;
    EXPECT_EQ(linear_combination(p2.data(), ks.data(), n), want2) << "n=" << n;
  }
}

TEST(Msm, G1MatchesKnownLogs) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G1Affine gen = g1_generator();
  for (size_t n : {1, 2, 3, 17, 1000, 4097}) {
    auto kp = known_points<G1Curve>(n, gen, rng);
    auto s = mixed_scalars(n, rng);
    EXPECT_EQ(msm_g1(kp.pts.data(), s.data(), n), expected(kp, s, gen)) << "n=" << n;
  }
}

TEST(Msm, G2MatchesKnownLogs) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G2Affine gen = g2_generator();
  for (size_t n : {1, 2, 3, 17, 1000, 4097}) {
    auto kp = known_points<G2Curve>(n, gen, rng);
    auto s = mixed_scalars(n, rng);
    EXPECT_EQ(msm_g2(kp.pts.data(), s.data(), n), expected(kp, s, gen)) << "n=" << n;
  }
}

// An independent check of the reference itself: plain sums of scalar multiplications.
TEST(Msm, MatchesNaiveSum) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (size_t n : {1, 5, 40}) {
    auto k1 = known_points<G1Curve>(n, g1_generator(), rng);
    auto k2 = known_points<G2Curve>(n, g2_generator(), rng);
    auto s = mixed_scalars(n, rng);
    EXPECT_EQ(msm_g1(k1.pts.data(), s.data(), n), naive(k1.pts, s)) << "n=" << n;
    EXPECT_EQ(msm_g2(k2.pts.data(), s.data(), n), naive(k2.pts, s)) << "n=" << n;
  }
}

// Witness-like inputs: almost all scalars 0 or 1 (one window, one huge bucket), all equal points,
// and every scalar r-1.
TEST(Msm, DegenerateInputs) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G1Affine gen = g1_generator();
  size_t n = 3000;
  auto kp = known_points<G1Curve>(n, gen, rng);
  std::vector<Fr> s(n);
  for (auto& x : s) x = rng() % 3 ? Fr::one() : Fr::zero();
  EXPECT_EQ(msm_g1(kp.pts.data(), s.data(), n), expected(kp, s, gen));
  for (auto& x : s) x = -Fr::one();
  EXPECT_EQ(msm_g1(kp.pts.data(), s.data(), n), expected(kp, s, gen));
  std::vector<G1Affine> same(n, kp.pts[0]);
  KnownPoints<G1Curve> ks{same, std::vector<Fr>(n, kp.logs[0])};
  for (auto& x : s) x = rand_fr(rng);
  EXPECT_EQ(msm_g1(same.data(), s.data(), n), expected(ks, s, gen));
  std::vector<Fr> zeros(n, Fr::zero());
  EXPECT_TRUE(msm_g1(kp.pts.data(), zeros.data(), n).is_inf());
  EXPECT_TRUE(msm_g1(kp.pts.data(), zeros.data(), 0).is_inf());
}

// The same at the sizes of small circuits, whose MSMs add into XYZZ buckets: equal points meeting
// in one bucket (a doubling), a point and its negation (a cancellation), and all scalars one.
TEST(Msm, SmallDegenerateInputs) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G1Affine gen = g1_generator();
  for (size_t n : {6, 12, 64}) {
    auto kp = known_points<G1Curve>(n, gen, rng);
    std::vector<G1Affine> same(n, kp.pts[0]);
    KnownPoints<G1Curve> ks{same, std::vector<Fr>(n, kp.logs[0])};
    std::vector<Fr> s(n, Fr::one());
    EXPECT_EQ(msm_g1(same.data(), s.data(), n), expected(ks, s, gen)) << "n=" << n;
    for (size_t i = 0; i < n; i++) s[i] = i % 2 ? -s[i - 1] : rand_fr(rng);  // pairs k, -k: the sum is zero
    EXPECT_TRUE(msm_g1(same.data(), s.data(), n).is_inf()) << "n=" << n;
    for (auto& x : s) x = rand_fr(rng);
    EXPECT_EQ(msm_g1(same.data(), s.data(), n), expected(ks, s, gen)) << "n=" << n;
    EXPECT_EQ(msm_g1(kp.pts.data(), s.data(), n), expected(kp, s, gen)) << "n=" << n;
  }
}

// The thread count must not change the result (tasks split points and windows differently).
TEST(Msm, ThreadCountInvariant) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G1Affine gen = g1_generator();
  size_t n = 2500;
  auto kp = known_points<G1Curve>(n, gen, rng);
  auto s = mixed_scalars(n, rng);
  G1 want = expected(kp, s, gen);
  for (size_t t : {1, 2, 3, 8}) {
    set_thread_count(t);
    EXPECT_EQ(msm_g1(kp.pts.data(), s.data(), n), want) << "threads=" << t;
  }
  set_thread_count(0);  // back to one thread per CPU
}

// Prepared scalars with an offset, as the prover uses for the C MSM.
TEST(Msm, PreparedWithOffset) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  G1Affine gen = g1_generator();
  size_t n = 700, off = 3;
  auto kp = known_points<G1Curve>(n - off, gen, rng);
  auto s = mixed_scalars(n, rng);
  MsmScalars ms = MsmScalars::prepare(s.data(), n);
  std::vector<Fr> tail(s.begin() + off, s.end());
  EXPECT_EQ(msm_g1(kp.pts.data(), ms, off, n - off), expected(kp, tail, gen));
}
