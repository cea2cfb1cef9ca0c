#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include "groth16/parallel.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"
#include "math/encoding.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

// The reference vectors (tests/fixtures/reference); CUZK_REFERENCE_VECTORS overrides the location.
std::string reference_dir() {
  const char* e = std::getenv("CUZK_REFERENCE_VECTORS");
  return (e ? std::string(e) : std::string(CUZK_REFERENCE_DIR)) + "/merkle_known_toxic/";
}

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The toxic waste snarkjs's merkle_fast.zkey was made from (toxic_waste.json in the vectors).
ToxicWaste merkle_toxic() {
  auto f = [](const char* s) { return *field_from_decimal<Fr>(s); };
  return {f("16795801920195742699583941941049111118977779591124901910446195866830429042686"),
          f("50871086508363696862449746441319131572572350054264276091269746430931772981158"),
          f("5843049724357297340727203665631452960107045975843960960475286476195223967418"),
          f("24716880941926923550873080203932536588622529705403345556198197749675865840480"),
          f("17098105737755239346478159092713835054396484224653679690870660611774373188259")};
}

// circom's merkle.r1cs (1.8 MB) is kept xz-compressed (116 KB) in tests/fixtures.
std::string merkle_r1cs_path() {
  std::string out = std::string(CUZK_BINARY_DIR) + "/merkle_fixture.r1cs";
  std::string cmd = "xz -dc '" + std::string(CUZK_SOURCE_DIR) + "/tests/fixtures/merkle.r1cs.xz' > '" + out + "'";
  if (std::system(cmd.c_str()) != 0) return "";
  return out;
}

G1Affine g1_times(const Fr& k) { return G1::from_affine(g1_generator()).mul(k.to_plain()).to_affine(); }
G2Affine g2_times(const Fr& k) { return G2::from_affine(g2_generator()).mul(k.to_plain()).to_affine(); }

// A 3-constraint toy circuit: out = x*y, z = out*x, x*1 = x; public output wire 1, public input wire 2.
R1cs toy_circuit() {
  R1cs r;
  r.n_wires = 5;
  r.n_pub_out = 1;
  r.n_pub_in = 1;
  r.n_prv_in = 1;
  Fr one = Fr::one(), two = Fr::from_u64(2);
  r.constraints.push_back({{{2, one}}, {{3, one}}, {{1, one}}});
  r.constraints.push_back({{{1, two}, {0, one}}, {{2, one}}, {{4, one}}});
  r.constraints.push_back({{{3, one}}, {{0, one}}, {{3, one}}});
  return r;
}

}  // namespace

// The core interop check: from the same toxic waste and circom's r1cs, every byte of the zkey
// snarkjs's known-toxic pipeline wrote is reproduced (header points, IC, coefficients, A, B1, B2,
// C, H, and the empty contributions section), for one and for two threads.
TEST(Setup, ReproducesKnownToxicMerkleZkey) {
  std::string ref = reference_dir() + "merkle_fast.zkey";
  if (!std::ifstream(ref)) GTEST_FAIL() << "reference vectors not found at " << ref;
  std::string r1cs_path = merkle_r1cs_path();
  ASSERT_FALSE(r1cs_path.empty()) << "could not decompress tests/fixtures/merkle.r1cs.xz (is xz installed?)";
  R1cs r1cs = read_r1cs(r1cs_path);
  ZKey want = read_zkey(ref);

  for (size_t threads : {1, 2}) {
    set_thread_count(threads);
    ZKey got = setup_zkey(r1cs, merkle_toxic());
    set_thread_count(0);
    ASSERT_EQ(got.n_vars, want.n_vars);
    ASSERT_EQ(got.n_public, want.n_public);
    ASSERT_EQ(got.domain_size, want.domain_size);
    EXPECT_EQ(got.log_domain, want.log_domain);
    EXPECT_EQ(got.alpha1, want.alpha1);
    EXPECT_EQ(got.beta1, want.beta1);
    EXPECT_EQ(got.beta2, want.beta2);
    EXPECT_EQ(got.gamma2, want.gamma2);
    EXPECT_EQ(got.delta1, want.delta1);
    EXPECT_EQ(got.delta2, want.delta2);
    ASSERT_EQ(got.coefs.size(), want.coefs.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.coefs.size(); i++) {
      const ZKeyCoef &g = got.coefs[i], &w = want.coefs[i];
      bad += g.matrix != w.matrix || g.constraint != w.constraint || g.signal != w.signal || g.value != w.value;
    }
    EXPECT_EQ(bad, 0u) << "section 4 entries differ";
    EXPECT_TRUE(got.ic == want.ic);
    EXPECT_TRUE(got.a == want.a);
    EXPECT_TRUE(got.b1 == want.b1);
    EXPECT_TRUE(got.b2 == want.b2);
    EXPECT_TRUE(got.c == want.c);
    EXPECT_TRUE(got.h == want.h);
    EXPECT_EQ(got.section10, want.section10);

    if (threads == 2) {
      std::string out = std::string(CUZK_BINARY_DIR) + "/setup_test_merkle.zkey";
      write_zkey(out, got);
      EXPECT_TRUE(slurp(out) == slurp(ref)) << "written zkey is not byte-identical to merkle_fast.zkey";
    }
  }
}

// Every point of a toy key against its definition, computed independently by double-and-add from
// scalars worked out by hand: domain 8 (3 constraints + 2 public + 1 <= 8), so L_j over 8 roots.
TEST(Setup, ToyKeyMatchesDefinition) {
  R1cs r = toy_circuit();
  ToxicWaste tw = toxic_from_seed(std::string("toy"));
  ZKey zk = setup_zkey(r, tw);
  ASSERT_EQ(zk.domain_size, 8u);
  ASSERT_EQ(zk.log_domain, 3);
  const int n = 8;
  Fr w = root_of_unity(3), tau = tw.tau;
  // L_j(tau) = prod_{k != j} (tau - w^k) / (w^j - w^k), the textbook form (no shortcut).
  auto lag = [&](int j, int m, Fr root) {
    Fr num = Fr::one(), den = Fr::one(), wj = root.pow_u64(j);
    for (int k = 0; k < m; k++)
      if (k != j) num *= tau - root.pow_u64(k), den *= wj - root.pow_u64(k);
    return num * den.inv();
  };
  std::vector<Fr> u(5, Fr::zero()), v(5, Fr::zero()), ww(5, Fr::zero());
  for (size_t c = 0; c < r.constraints.size(); c++) {
    for (auto& t : r.constraints[c].a) u[t.wire] += t.coeff * lag((int)c, n, w);
    for (auto& t : r.constraints[c].b) v[t.wire] += t.coeff * lag((int)c, n, w);
    for (auto& t : r.constraints[c].c) ww[t.wire] += t.coeff * lag((int)c, n, w);
  }
  for (int s = 0; s <= 2; s++) u[s] += lag(3 + s, n, w);
  for (int s = 0; s < 5; s++) {
    EXPECT_EQ(zk.a[s], g1_times(u[s])) << s;
    EXPECT_EQ(zk.b1[s], g1_times(v[s])) << s;
    EXPECT_EQ(zk.b2[s], g2_times(v[s])) << s;
    Fr k = tw.beta * u[s] + tw.alpha * v[s] + ww[s];
    if (s <= 2)
      EXPECT_EQ(zk.ic[s], g1_times(k * tw.gamma.inv())) << s;
    else
      EXPECT_EQ(zk.c[s - 3], g1_times(k * tw.delta.inv())) << s;
  }
  Fr w16 = root_of_unity(4);
  for (int i = 0; i < n; i++) EXPECT_EQ(zk.h[i], g1_times(lag(2 * i + 1, 2 * n, w16) * tw.delta.inv())) << i;
  EXPECT_EQ(zk.alpha1, g1_times(tw.alpha));
  EXPECT_EQ(zk.delta2, g2_times(tw.delta));
  // Section 4: A then B per constraint, then the public A rows with coefficient 1.
  ASSERT_EQ(zk.coefs.size(), 1u + 1 + 2 + 1 + 1 + 1 + 3);
  EXPECT_EQ(zk.coefs[2].matrix, 0u);
  EXPECT_EQ(zk.coefs[2].signal, 1u);
  EXPECT_EQ(zk.coefs[2].value, Fr::from_u64(2));
  EXPECT_EQ(zk.coefs[4].matrix, 1u);
  EXPECT_EQ(zk.coefs[9].constraint, 5u);
  EXPECT_EQ(zk.coefs[9].signal, 2u);
  EXPECT_EQ(zk.coefs[9].value, Fr::one());
  EXPECT_EQ(zk.section10, std::vector<uint8_t>(68, 0));
}

// tau on the domain turns the Lagrange formula into 0/0; the key must still follow the definition:
// L_j(w^j) = 1, all others 0, so A_s is row j's A coefficient times G; and tau = w^0 = 1 lies in the
// even half of the 2n domain, so every H point is infinity.
TEST(Setup, TauOnTheDomain) {
  R1cs r = toy_circuit();
  ToxicWaste tw = toxic_from_seed(std::string("degenerate"));
  tw.tau = root_of_unity(3).pow_u64(1);
  ZKey zk = setup_zkey(r, tw);
  EXPECT_EQ(zk.a[1], g1_times(Fr::from_u64(2)));  // row 1: A = 2*w1 + w0
  EXPECT_EQ(zk.a[0], g1_times(Fr::one()));
  EXPECT_TRUE(zk.a[3].is_inf());
  EXPECT_EQ(zk.b2[2], g2_times(Fr::one()));
  for (auto& p : zk.h) EXPECT_TRUE(p.is_inf());
  // tau = g, the 16th root, is the first odd point: H_0 = G/delta and the rest vanish.
  tw.tau = root_of_unity(4);
  zk = setup_zkey(r, tw);
  EXPECT_EQ(zk.h[0], g1_times(tw.delta.inv()));
  for (size_t i = 1; i < zk.h.size(); i++) EXPECT_TRUE(zk.h[i].is_inf());
}

TEST(Setup, DomainSizeRule) {
  // nConstraints + nPublic + 1 = 8 exactly stays at 8; one more row doubles it.
  R1cs r = toy_circuit();
  r.constraints.push_back(r.constraints[2]);
  r.constraints.push_back(r.constraints[2]);
  EXPECT_EQ(setup_zkey(r, toxic_from_seed(std::string("d"))).domain_size, 8u);
  r.constraints.push_back(r.constraints[2]);
  EXPECT_EQ(setup_zkey(r, toxic_from_seed(std::string("d"))).domain_size, 16u);
}

TEST(Setup, RejectsBadInput) {
  R1cs r = toy_circuit();
  ToxicWaste tw = toxic_from_seed(std::string("x"));
  tw.delta = Fr::zero();
  EXPECT_THROW(setup_zkey(r, tw), std::invalid_argument);
  tw = toxic_from_seed(std::string("x"));
  r.constraints[1].b.push_back({7, Fr::one()});  // wire 7 of 5
  EXPECT_THROW(setup_zkey(r, tw), std::invalid_argument);
  r = toy_circuit();
  r.n_wires = 2;  // fewer wires than 1 + nPublic
  EXPECT_THROW(setup_zkey(r, tw), std::invalid_argument);
}

// The derivation from a seed is frozen: SHA-256 counter mode, checked against an independent
// computation (Python's hashlib) of tau and delta for the seed "cuzk".
TEST(Setup, ToxicFromSeedIsDeterministic) {
  ToxicWaste a = toxic_from_seed(std::string("cuzk")), b = toxic_from_seed(std::string("cuzk"));
  EXPECT_EQ(a.tau, b.tau);
  EXPECT_EQ(a.delta, b.delta);
  EXPECT_EQ(field_to_decimal(a.tau), "12249319758459393439419064918439273812023454902699684468151562792235036085373");
  EXPECT_EQ(field_to_decimal(a.delta), "947312363262940207367818472075333145879818146387914472032268522779499820718");
  EXPECT_EQ(field_to_decimal(toxic_from_seed(std::string(100, 'x')).tau),  // spans two SHA-256 blocks
            "27967833873642224314667398551144347124353897068413345207018058598278136229903");
  ToxicWaste c = toxic_from_seed(std::string("cuzk2"));
  EXPECT_NE(a.tau, c.tau);
  Fr all[5] = {a.tau, a.alpha, a.beta, a.gamma, a.delta};
  for (int i = 0; i < 5; i++)
    for (int j = i + 1; j < 5; j++) EXPECT_NE(all[i], all[j]);
  ToxicWaste r1 = toxic_from_seed(std::nullopt), r2 = toxic_from_seed(std::nullopt);
  EXPECT_NE(r1.tau, r2.tau);
  EXPECT_FALSE(r1.delta.is_zero());
}

// A key for a fresh circuit works end to end: the CPU prover's proof with random r, s verifies,
// and fails for a wrong public input. Domains 2^6 and 2^13 (two generator blocks). The circuit,
// the toxic waste and r, s all come from the test's seed.
TEST(Setup, ProofWithGeneratedCircuitVerifies) {
  std::mt19937_64 rng = cuzk::test::test_rng();
  for (int log_n : {6, 13}) {
    R1cs r;
    std::vector<Fr> w;
    gen_circuit(log_n, rng(), r, w);
    auto zk = std::make_shared<const ZKey>(setup_zkey(r, toxic_from_seed(std::to_string(rng()))));
    VerificationKey vk = vk_from_zkey(*zk);
    ProveOptions rs;
    rs.r = random_fr(rng);
    rs.s = random_fr(rng);
    Proof proof = make_cpu_prover(zk)->prove(w, rs);
    std::vector<Fr> pub = public_signals(w, zk->n_public);
    EXPECT_TRUE(verify_proof(vk, pub, proof)) << "log_n = " << log_n;
    pub[1] += Fr::one();
    EXPECT_FALSE(verify_proof(vk, pub, proof)) << "log_n = " << log_n;
  }
}
