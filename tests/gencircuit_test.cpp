#include <gtest/gtest.h>

#include <set>

#include "groth16/parallel.hpp"
#include "groth16/setup.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

Fr eval(const std::vector<LinearTerm>& lc, const std::vector<Fr>& w) {
  Fr acc = Fr::zero();
  for (const LinearTerm& t : lc) acc += t.coeff * w[t.wire];
  return acc;
}

// Index of the first unsatisfied constraint, or -1.
long first_unsatisfied(const R1cs& r, const std::vector<Fr>& w) {
  for (size_t c = 0; c < r.constraints.size(); c++) {
    const Constraint& k = r.constraints[c];
    if (eval(k.a, w) * eval(k.b, w) != eval(k.c, w)) return (long)c;
  }
  return -1;
}

bool same(const R1cs& x, const R1cs& y) {
  if (x.n_wires != y.n_wires || x.n_pub_out != y.n_pub_out || x.n_pub_in != y.n_pub_in ||
      x.n_prv_in != y.n_prv_in || x.constraints.size() != y.constraints.size())
    return false;
  auto eq = [](const std::vector<LinearTerm>& a, const std::vector<LinearTerm>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
      if (a[i].wire != b[i].wire || a[i].coeff != b[i].coeff) return false;
    return true;
  };
  for (size_t c = 0; c < x.constraints.size(); c++) {
    const Constraint &p = x.constraints[c], &q = y.constraints[c];
    if (!eq(p.a, q.a) || !eq(p.b, q.b) || !eq(p.c, q.c)) return false;
  }
  return true;
}

}  // namespace

// Satisfiable, domain exactly 2^log_n, wires in range, at sizes below, at and across the
// generator's 4096-row blocks.
TEST(GenCircuit, SatisfiedAndFillsTheDomain) {
  const uint64_t seed = cuzk::test::test_seed();
  for (int log_n : {4, 5, 8, 12, 13, 14}) {
    R1cs r;
    std::vector<Fr> w;
    gen_circuit(log_n, seed, r, w);
    SCOPED_TRACE("log_n = " + std::to_string(log_n));
    ASSERT_EQ(w.size(), r.n_wires);
    EXPECT_EQ(w[0], Fr::one());
    EXPECT_EQ(r.n_public(), 2u);
    EXPECT_EQ(r.constraints.size() + r.n_public() + 1, size_t(1) << log_n);
    // Wires in range and, as circom writes them, never twice in one linear combination (snarkjs's
    // `wtns check` keys a combination by wire).
    for (const Constraint& k : r.constraints)
      for (const auto* lc : {&k.a, &k.b, &k.c}) {
        std::set<uint32_t> seen;
        for (const LinearTerm& t : *lc) {
          ASSERT_LT(t.wire, r.n_wires);
          ASSERT_TRUE(seen.insert(t.wire).second) << "wire " << t.wire << " repeated";
        }
      }
    EXPECT_EQ(first_unsatisfied(r, w), -1);
    // The output really depends on the input: a wrong public output breaks the last row.
    std::vector<Fr> bad = w;
    bad[1] += Fr::one();
    EXPECT_EQ(first_unsatisfied(r, bad), (long)r.constraints.size() - 1);
  }
}

// What the GPU benchmarks need to be representative: mostly sparse rows, a large share of 0/1
// values, some small integers, and many full-size values; every wire is used.
TEST(GenCircuit, LooksLikeACircomCircuit) {
  R1cs r;
  std::vector<Fr> w;
  gen_circuit(14, cuzk::test::test_seed(), r, w);
  size_t zero_one = 0, small = 0, terms = 0, lcs = 0, dense = 0;
  for (const Fr& x : w) {
    if (x.is_zero() || x == Fr::one())
      zero_one++;
    else if (x.to_plain().num_bits() <= 64)
      small++;
  }
  std::vector<bool> used(r.n_wires, false);
  for (const Constraint& k : r.constraints)
    for (const auto* lc : {&k.a, &k.b, &k.c}) {
      if (lc->empty()) continue;
      lcs++;
      terms += lc->size();
      dense += lc->size() > 3;
      for (const LinearTerm& t : *lc) used[t.wire] = true;
    }
  double n = (double)w.size();
  EXPECT_GT(zero_one / n, 0.25);
  EXPECT_LT(zero_one / n, 0.6);
  EXPECT_GT(small, 100u);
  EXPECT_GT((n - zero_one - small) / n, 0.3);  // full-size values
  EXPECT_LT((double)terms / lcs, 3.0);
  EXPECT_GT(dense, 10u);  // packing rows
  for (size_t i = 0; i < used.size(); i++) EXPECT_TRUE(used[i]) << "wire " << i << " is never used";
}

// Same seed, same circuit and witness, whatever the thread count; another seed differs.
TEST(GenCircuit, DeterministicInTheSeed) {
  R1cs a, b, c;
  std::vector<Fr> wa, wb, wc;
  const uint64_t seed = cuzk::test::test_seed();
  set_thread_count(1);
  gen_circuit(13, seed, a, wa);
  set_thread_count(3);
  gen_circuit(13, seed, b, wb);
  set_thread_count(0);
  gen_circuit(13, seed + 1, c, wc);
  EXPECT_TRUE(same(a, b));
  EXPECT_TRUE(wa == wb);
  EXPECT_FALSE(same(a, c));
  EXPECT_FALSE(wa == wc);
}

TEST(GenCircuit, RejectsSizesOutOfRange) {
  R1cs r;
  std::vector<Fr> w;
  EXPECT_THROW(gen_circuit(3, 1, r, w), std::invalid_argument);
  EXPECT_THROW(gen_circuit(29, 1, r, w), std::invalid_argument);
}

// A generated circuit goes through setup: the key has the circuit's domain.
TEST(GenCircuit, SetupAcceptsIt) {
  R1cs r;
  std::vector<Fr> w;
  gen_circuit(6, cuzk::test::test_seed(), r, w);
  ZKey zk = setup_zkey(r, toxic_from_seed(std::string("gen")));
  EXPECT_EQ(zk.domain_size, 64u);
  EXPECT_EQ(zk.n_vars, r.n_wires);
  EXPECT_EQ(zk.h.size(), 64u);
}
