// Host emulation of the device field arithmetic: the exact PTX instruction sequence (with the carry
// flag emulated) against the 64-bit host field, on fresh random inputs and the edge values.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernels/fp_device.cuh"

using namespace cuzk;
using namespace cuzk::bls12_381;
using namespace cuzk::gpu;

namespace {

template <class F>
F random_element(std::mt19937_64& rng) {
  for (;;) {
    u64 l[F::N];
    for (auto& x : l) x = rng();
    l[F::N - 1] >>= 1;
    if (F::is_canonical(l)) return F::from_mont_limbs(l);
  }
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
  std::mt19937_64 rng(std::random_device{}());
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
    ASSERT_EQ(da == db, a == b);
    ASSERT_EQ(da.is_zero(), a.is_zero());
  }
}

}  // namespace

TEST(GpuFieldEmulation, FqMatchesHost) { check_field<Fq, DFq>(20000); }
TEST(GpuFieldEmulation, FrMatchesHost) { check_field<Fr, DFr>(20000); }

TEST(GpuFieldEmulation, Fq2MatchesHost) {
  std::mt19937_64 rng(std::random_device{}());
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
