// The x86-64 assembly paths of math/fp.hpp (Montgomery multiply, add, subtract, reduce) against a
// bit-serial reference that shares no code with them: plain integers, modular add by compare and
// subtract, modular multiply by double-and-add. Runs on whatever path the CPU selects.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "math/bls12_381.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

template <int N>
bool geq(const BigInt<N>& a, const u64* p) {
  for (int i = N - 1; i >= 0; i--)
    if (a.l[i] != p[i]) return a.l[i] > p[i];
  return true;
}

// (a + b) mod p for a, b < p < 2^(64N-1).
template <class F>
typename F::Repr ref_add(typename F::Repr a, const typename F::Repr& b) {
  constexpr int N = F::N;
  unsigned __int128 c = 0;
  for (int i = 0; i < N; i++) {
    c += (unsigned __int128)a.l[i] + b.l[i];
    a.l[i] = (u64)c;
    c >>= 64;
  }
  if (geq<N>(a, F::Params::MOD)) {
    u64 br = 0;
    for (int i = 0; i < N; i++) {
      unsigned __int128 d = (unsigned __int128)a.l[i] - F::Params::MOD[i] - br;
      a.l[i] = (u64)d;
      br = (u64)(d >> 64) & 1;
    }
  }
  return a;
}

// (a - b) mod p as a + (p - b).
template <class F>
typename F::Repr ref_sub(const typename F::Repr& a, const typename F::Repr& b) {
  constexpr int N = F::N;
  if (b.is_zero()) return a;
  typename F::Repr nb;
  u64 br = 0;
  for (int i = 0; i < N; i++) {
    unsigned __int128 d = (unsigned __int128)F::Params::MOD[i] - b.l[i] - br;
    nb.l[i] = (u64)d;
    br = (u64)(d >> 64) & 1;
  }
  return ref_add<F>(a, nb);
}

// a*b mod p by double-and-add over the bits of b.
template <class F>
typename F::Repr ref_mul(const typename F::Repr& a, const typename F::Repr& b) {
  typename F::Repr acc{};
  for (int i = F::N * 64 - 1; i >= 0; i--) {
    acc = ref_add<F>(acc, acc);
    if (b.bit(i)) acc = ref_add<F>(acc, a);
  }
  return acc;
}

// Edge values (0, 1, 2, p-1, p-2, (p-1)/2, (p+1)/2, 2^64-1, 2^(64(N-1))) and uniform ones.
template <class F>
std::vector<typename F::Repr> samples(std::mt19937_64& rng, size_t n_random) {
  using R = typename F::Repr;
  constexpr int N = F::N;
  std::vector<R> v;
  auto from_u64 = [](u64 x) {
    R r{};
    r.l[0] = x;
    return r;
  };
  R pm1, pm2, half, half1, top{};
  for (int i = 0; i < N; i++) pm1.l[i] = F::Params::MOD[i];
  pm1.l[0] -= 1;
  pm2 = pm1;
  pm2.l[0] -= 1;
  for (int i = 0; i < N; i++) half.l[i] = (pm1.l[i] >> 1) | (i + 1 < N ? pm1.l[i + 1] << 63 : 0);
  half1 = ref_add<F>(half, from_u64(1));
  top.l[N - 1] = 1;
  for (R x : {from_u64(0), from_u64(1), from_u64(2), pm1, pm2, half, half1, from_u64(~0ull), top}) v.push_back(x);
  while (v.size() < 9 + n_random) {
    R r;
    for (auto& l : r.l) l = rng();
    r.l[N - 1] >>= 64 - (F::Params::BITS % 64 ? F::Params::BITS % 64 : 64);
    if (F::is_canonical(r.l)) v.push_back(r);
  }
  return v;
}

template <class F>
void check_field(std::mt19937_64 rng) {
  auto v = samples<F>(rng, 40);
  for (const auto& a : v) {
    F fa = F::from_plain(a);
    ASSERT_EQ(fa.to_plain().l[0], a.l[0]);
    for (const auto& b : v) {
      F fb = F::from_plain(b);
      auto sum = (fa + fb).to_plain(), diff = (fa - fb).to_plain(), prod = (fa * fb).to_plain();
      auto want_sum = ref_add<F>(a, b), want_diff = ref_sub<F>(a, b), want_prod = ref_mul<F>(a, b);
      for (int i = 0; i < F::N; i++) {
        ASSERT_EQ(sum.l[i], want_sum.l[i]) << "add limb " << i;
        ASSERT_EQ(diff.l[i], want_diff.l[i]) << "sub limb " << i;
        ASSERT_EQ(prod.l[i], want_prod.l[i]) << "mul limb " << i;
      }
      // Results are canonical (below p), which the word-wise equality above relies on.
      ASSERT_TRUE(F::is_canonical((fa * fb).l));
      ASSERT_TRUE(F::is_canonical((fa + fb).l));
      ASSERT_TRUE(F::is_canonical((fa - fb).l));
    }
  }
}

}  // namespace

TEST(FieldArithmetic, FqMatchesBitSerialReference) { check_field<Fq>(cuzk::test::test_rng()); }
TEST(FieldArithmetic, FrMatchesBitSerialReference) { check_field<Fr>(cuzk::test::test_rng()); }

// Doubling and negation go through the same add/sub paths; spot-check them on edge values too.
TEST(FieldArithmetic, DoubleAndNegate) {
  Fq pm1 = -Fq::one();
  EXPECT_EQ(pm1 + Fq::one(), Fq::zero());
  EXPECT_EQ(pm1.dbl(), pm1 - Fq::one());
  EXPECT_EQ(-Fq::zero(), Fq::zero());
  Fr rm1 = -Fr::one();
  EXPECT_EQ(rm1 + Fr::one(), Fr::zero());
  EXPECT_EQ(rm1.dbl(), rm1 - Fr::one());
}

namespace {

// limbs + p (no overflow: p < 2^(64N-1)).
template <class F>
F plus_p(const F& a) {
  F r;
  u64 c = 0;
  for (int i = 0; i < F::N; i++) r.l[i] = adc(a.l[i], F::Params::MOD[i], c);
  return r;
}

template <class F>
bool below_2p(const F& a) {
  F p2 = plus_p(plus_p(F::zero()));
  for (int i = F::N - 1; i >= 0; i--)
    if (a.l[i] != p2.l[i]) return a.l[i] < p2.l[i];
  return false;
}

}  // namespace

// mul_lazy takes and gives representatives in [0, 2p) (Fq on the x86 path; the ordinary product
// elsewhere): the result must be below 2p and congruent to the canonical product, also for the
// largest inputs 2p-1, and when chained the way batch inversion chains it.
TEST(FieldArithmetic, LazyMultiplyStaysBelow2p) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  auto v = samples<Fq>(rng, 60);
  std::vector<Fq> xs;
  for (const auto& a : v) {
    Fq f = Fq::from_mont_limbs(a.l);
    xs.push_back(f);
    xs.push_back(plus_p(f));  // the same element, non-canonical
  }
  for (const Fq& a : xs)
    for (const Fq& b : xs) {
      Fq lazy = a.mul_lazy(b);
      ASSERT_TRUE(below_2p(lazy));
      Fq canon = lazy;
      canon.reduce_once();
      Fq ca = a, cb = b;
      ca.reduce_once(), cb.reduce_once();
      ASSERT_EQ(canon, ca * cb);
      ASSERT_EQ(a * b, ca * cb);  // operator* is canonical on non-canonical inputs too
    }
  Fq acc = Fq::one(), ref = Fq::one();
  for (int r = 0; r < 2000; r++) {
    const Fq& x = xs[r % xs.size()];
    acc = acc.mul_lazy(x);
    Fq cx = x;
    cx.reduce_once();
    ref = ref * cx;
    ASSERT_TRUE(below_2p(acc));
  }
  acc.reduce_once();
  EXPECT_EQ(acc, ref);
}

// The variable-time binary inverse against Fermat's x^(p-2), on edge values (0, 1, p-1, powers of
// two, which strip many twos at once), uniform values, and a non-canonical x + p.
template <class F>
void check_inv_vartime(std::mt19937_64 rng) {
  auto v = samples<F>(rng, 200);
  for (int k = 0; k < F::N * 64 - 2; k += 7) {
    typename F::Repr r{};
    r.l[k / 64] = u64(1) << (k % 64);
    if (F::is_canonical(r.l)) v.push_back(r);
  }
  for (const auto& a : v) {
    F f = F::from_mont_limbs(a.l), g = F::from_plain(a);
    ASSERT_EQ(f.inv_vartime(), f.inv());
    ASSERT_EQ(g.inv_vartime(), g.inv());
    if (!g.is_zero()) {
      ASSERT_EQ(g * g.inv_vartime(), F::one());
    }
  }
  EXPECT_EQ(F::zero().inv_vartime(), F::zero());
  F x = F::from_u64(12345);
  EXPECT_EQ(plus_p(x).inv_vartime(), x.inv());
}

TEST(FieldArithmetic, InverseVartimeMatchesFermat) {
  check_inv_vartime<Fq>(cuzk::test::test_rng("Fq"));
  check_inv_vartime<Fr>(cuzk::test::test_rng("Fr"));
}
