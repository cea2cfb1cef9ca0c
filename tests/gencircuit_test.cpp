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

// Satisfiable, domain exactly 2^log_n, wires in range and, as circom writes them, never twice in
// one linear combination (snarkjs's `wtns check` keys a combination by wire); the output really
// depends on the input.
namespace {

void check_generated(int log_n, uint64_t seed, GenProfile profile) {
  R1cs r;
  std::vector<Fr> w;
  gen_circuit(log_n, seed, r, w, profile);
  SCOPED_TRACE(std::string(to_string(profile)) + ", log_n = " + std::to_string(log_n));
  ASSERT_EQ(w.size(), r.n_wires);
  EXPECT_EQ(w[0], Fr::one());
  EXPECT_EQ(r.n_public(), 2u);
  EXPECT_EQ(r.constraints.size() + r.n_public() + 1, size_t(1) << log_n);
  for (const Constraint& k : r.constraints)
    for (const auto* lc : {&k.a, &k.b, &k.c}) {
      std::set<uint32_t> seen;
      for (const LinearTerm& t : *lc) {
        ASSERT_LT(t.wire, r.n_wires);
        ASSERT_TRUE(seen.insert(t.wire).second) << "wire " << t.wire << " repeated";
      }
    }
  EXPECT_EQ(first_unsatisfied(r, w), -1);
  std::vector<Fr> bad = w;
  bad[1] += Fr::one();
  EXPECT_EQ(first_unsatisfied(r, bad), (long)r.constraints.size() - 1);
}

// Terms per non-empty linear combination, how many combinations have more than `dense` terms, and
// which wires appear at all.
struct RowStats {
  size_t terms = 0, lcs = 0, dense = 0;
  std::vector<bool> used;
};
RowStats row_stats(const R1cs& r, size_t dense) {
  RowStats st;
  st.used.assign(r.n_wires, false);
  for (const Constraint& k : r.constraints)
    for (const auto* lc : {&k.a, &k.b, &k.c}) {
      if (lc->empty()) continue;
      st.lcs++;
      st.terms += lc->size();
      st.dense += lc->size() > dense;
      for (const LinearTerm& t : *lc) st.used[t.wire] = true;
    }
  return st;
}

}  // namespace

// At sizes below, at and across the circom generator's 4096-row blocks.
TEST(GenCircuit, SatisfiedAndFillsTheDomain) {
  for (int log_n : {4, 5, 8, 12, 13, 14}) check_generated(log_n, cuzk::test::test_seed(), GenProfile::circom);
}

// What the GPU benchmarks need to be representative: mostly sparse rows, a large share of 0/1
// values, some small integers, and many full-size values; every wire is used.
TEST(GenCircuit, LooksLikeACircomCircuit) {
  R1cs r;
  std::vector<Fr> w;
  gen_circuit(14, cuzk::test::test_seed(), r, w);
  size_t zero_one = 0, small = 0;
  for (const Fr& x : w) {
    if (x.is_zero() || x == Fr::one())
      zero_one++;
    else if (x.to_plain().num_bits() <= 64)
      small++;
  }
  auto [terms, lcs, dense, used] = row_stats(r, 3);
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

// The porep profile below, at and across its 32768-row blocks.
TEST(GenCircuitPorep, SatisfiedAndFillsTheDomain) {
  for (int log_n : {4, 7, 11, 12, 15, 17}) check_generated(log_n, cuzk::test::test_seed(), GenProfile::porep);
}

// A PoRep partition's texture: at least 90% of the witness is 0 or 1 (both well represented), the
// rest mostly full-size; rows are sparse apart from the additions' packing rows; every wire is used.
TEST(GenCircuitPorep, LooksLikeAPorepPartition) {
  R1cs r;
  std::vector<Fr> w;
  gen_circuit(16, cuzk::test::test_seed(), r, w, GenProfile::porep);
  size_t zeros = 0, ones = 0, full = 0;
  for (const Fr& x : w) {
    if (x.is_zero())
      zeros++;
    else if (x == Fr::one())
      ones++;
    else if (x.to_plain().num_bits() > 64)
      full++;
  }
  auto [terms, lcs, dense, used] = row_stats(r, 32);
  double n = (double)w.size();
  EXPECT_GE((zeros + ones) / n, 0.9);
  EXPECT_GT(zeros / n, 0.3);
  EXPECT_GT(ones / n, 0.3);
  EXPECT_GT(full / n, 0.03);  // the Merkle levels' hashes, siblings and S-box values
  EXPECT_LT((double)terms / lcs, 3.0);
  EXPECT_GT(dense, 100u);  // packing rows of the 32-bit additions
  for (size_t i = 0; i < used.size(); i++) EXPECT_TRUE(used[i]) << "wire " << i << " is never used";
}

TEST(GenCircuitPorep, DeterministicInTheSeedAndDistinctFromCircom) {
  R1cs a, b, c, d;
  std::vector<Fr> wa, wb, wc, wd;
  const uint64_t seed = cuzk::test::test_seed();
  set_thread_count(1);
  gen_circuit(17, seed, a, wa, GenProfile::porep);
  set_thread_count(3);
  gen_circuit(17, seed, b, wb, GenProfile::porep);
  set_thread_count(0);
  gen_circuit(17, seed + 1, c, wc, GenProfile::porep);
  gen_circuit(17, seed, d, wd, GenProfile::circom);
  EXPECT_TRUE(same(a, b));
  EXPECT_TRUE(wa == wb);
  EXPECT_FALSE(same(a, c));
  EXPECT_FALSE(same(a, d));
}

// gen_circuit_coefs (benchmark keys without the R1CS in memory) gives the R1CS's A and B rows, in
// row order, and the same witness, in both profiles.
TEST(GenCircuit, CoefficientsMatchTheR1cs) {
  for (GenProfile p : {GenProfile::circom, GenProfile::porep}) {
    SCOPED_TRACE(to_string(p));
    R1cs r;
    std::vector<Fr> w, w2;
    HugeVec<ZKeyCoef> coefs;
    const uint64_t seed = cuzk::test::test_seed();
    gen_circuit(16, seed, r, w, p);
    GenShape s = gen_circuit_coefs(16, seed, p, coefs, w2);
    EXPECT_EQ(s.n_wires, r.n_wires);
    EXPECT_EQ(s.n_constraints, r.constraints.size());
    EXPECT_EQ(s.n_public, r.n_public());
    EXPECT_TRUE(w == w2);
    size_t k = 0;
    for (uint32_t row = 0; row < r.constraints.size(); row++)
      for (uint32_t m = 0; m < 2; m++)
        for (const LinearTerm& t : m ? r.constraints[row].b : r.constraints[row].a) {
          ASSERT_LT(k, coefs.size());
          const ZKeyCoef& c = coefs[k++];
          ASSERT_TRUE(c.matrix == m && c.constraint == row && c.signal == t.wire && c.value == t.coeff)
              << "coefficient " << k - 1 << " differs at row " << row;
        }
    EXPECT_EQ(k, coefs.size());
  }
}

TEST(GenCircuit, ProfilesByName) {
  EXPECT_EQ(parse_gen_profile("circom"), GenProfile::circom);
  EXPECT_EQ(parse_gen_profile("porep"), GenProfile::porep);
  EXPECT_THROW(parse_gen_profile("sha"), std::invalid_argument);
}
