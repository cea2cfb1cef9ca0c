// Host emulation of the device field arithmetic: the exact PTX instruction sequence (with the carry
// flag emulated) against the 64-bit host field, on fresh random inputs and the edge values.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernels/device_util.cuh"
#include "tests/gpu/curve_refs.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
using namespace cuzk::gpu;

namespace {

template <class F>
F random_element(std::mt19937_64& rng) {
  return cuzk::test::random_scalar<F>(rng);
}

template <class D, class F>
D to_dev(const F& x) {
  D d;
  static_assert(sizeof d == sizeof x);
  std::memcpy(&d, &x, sizeof d);
  return d;
}

// Byte equality of a device value and a host value (they share their representation).
template <class D, class F>
bool same(const D& d, const F& f) {
  static_assert(sizeof(D) == sizeof(F));
  return std::memcmp(&d, &f, sizeof d) == 0;
}

template <class F, class D>
void check_field(int iters) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  F edge[] = {F::zero(), F::one(), -F::one(), F::from_u64(2), -F::from_u64(2), F::from_u64(0xffffffffull)};
  auto pick = [&](int i) { return i < 36 ? edge[i % 6] : random_element<F>(rng); };
  for (int it = 0; it < iters; it++) {
    F a = pick(it), b = it < 36 ? edge[it / 6] : pick(it);
    D da = to_dev<D>(a), db = to_dev<D>(b);
    ASSERT_TRUE(same(da * db, a * b)) << "mul, iteration " << it;
    ASSERT_TRUE(same(da + db, a + b)) << "add, iteration " << it;
    ASSERT_TRUE(same(da - db, a - b)) << "sub, iteration " << it;
    ASSERT_TRUE(same(-da, -a)) << "neg, iteration " << it;
    ASSERT_TRUE(same(da.sqr(), a.sqr())) << "sqr, iteration " << it;
    ASSERT_TRUE(same(da.to_plain(), a.to_plain())) << "to_plain, iteration " << it;
    ASSERT_TRUE(same(D::one(), F::one()));
    ASSERT_EQ(da == db, a == b);
    ASSERT_EQ(da.is_zero(), a.is_zero());
  }
}

}  // namespace

TEST(GpuFieldEmulation, FqMatchesHost) { check_field<Fq, DFq>(20000); }
TEST(GpuFieldEmulation, FrMatchesHost) { check_field<Fr, DFr>(20000); }

TEST(GpuFieldEmulation, Fq2MatchesHost) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (int it = 0; it < 2000; it++) {
    Fq2 a{random_element<Fq>(rng), random_element<Fq>(rng)}, b{random_element<Fq>(rng), random_element<Fq>(rng)};
    DFq2 da = to_dev<DFq2>(a), db = to_dev<DFq2>(b);
    ASSERT_TRUE(same(da * db, a * b));
    ASSERT_TRUE(same(da.sqr(), a.sqr()));
  }
  // The lazily reduced product at the extremes of its bounds (components 0, 1, p-1, p-2, ...).
  Fq edge[] = {Fq::zero(), Fq::one(), -Fq::one(), -Fq::from_u64(2), Fq::from_u64(0xffffffffull), random_element<Fq>(rng)};
  for (const Fq& a0 : edge)
    for (const Fq& a1 : edge)
      for (const Fq& b0 : edge)
        for (const Fq& b1 : edge) {
          Fq2 a{a0, a1}, b{b0, b1};
          DFq2 da = to_dev<DFq2>(a), db = to_dev<DFq2>(b);
          ASSERT_TRUE(same(da * db, a * b));
          ASSERT_TRUE(same(da.sqr(), a.sqr()));
        }
}

// BN254: the same instruction sequences over 8-word Fq and Fr (both primes below 2^254, so every
// lazy bound of the device arithmetic has a spare bit), against the host fields on the seeded
// stream and the edge values 0, 1, p-1, p-2, 2^32-1.

TEST(GpuFieldEmulation, Bn254FqMatchesHost) { check_field<bn254::Fq, Dev<Bn254>::Fq>(20000); }
TEST(GpuFieldEmulation, Bn254FrMatchesHost) { check_field<bn254::Fr, Dev<Bn254>::Fr>(20000); }

TEST(GpuFieldEmulation, Bn254Fq2MatchesHost) {
  using HF = bn254::Fq;
  using DF2 = Dev<Bn254>::Fq2;
  std::mt19937_64 rng = cuzk::test::test_rng();
  HF edge[] = {HF::zero(), HF::one(), -HF::one(), -HF::from_u64(2), HF::from_u64(0xffffffffull), random_element<HF>(rng)};
  for (const HF& a0 : edge)
    for (const HF& a1 : edge)
      for (const HF& b0 : edge)
        for (const HF& b1 : edge) {
          bn254::Fq2 a{a0, a1}, b{b0, b1};
          DF2 da = to_dev<DF2>(a), db = to_dev<DF2>(b);
          ASSERT_TRUE(same(da * db, a * b));
          ASSERT_TRUE(same(da.sqr(), a.sqr()));
          ASSERT_TRUE(same(da + db, a + b));
          ASSERT_TRUE(same(da - db, a - b));
        }
  for (int it = 0; it < 2000; it++) {
    bn254::Fq2 a{random_element<HF>(rng), random_element<HF>(rng)}, b{random_element<HF>(rng), random_element<HF>(rng)};
    DF2 da = to_dev<DF2>(a), db = to_dev<DF2>(b);
    ASSERT_TRUE(same(da * db, a * b));
    ASSERT_TRUE(same(da.sqr(), a.sqr()));
  }
}

// The twist's b' written as limb literals (usable on the device) is 3/(9 + u), and the generator of
// G2 lies on y^2 = x^3 + b'.
TEST(GpuFieldEmulation, Bn254TwistB) {
  using HF = bn254::Fq;
  const bn254::Fq2 xi{HF::from_u64(9), HF::one()}, three{HF::from_u64(3), HF::zero()};
  EXPECT_TRUE(bn254::G2Curve::b() * xi == three);
  EXPECT_TRUE(bn254::G2Curve::b() == three * xi.inv());
  EXPECT_TRUE(bn254::g2_generator().on_curve());
}
