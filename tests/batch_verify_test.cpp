// Batched Groth16 verification (groth16/verifier.hpp): many proofs of one key checked with random
// weights, each proof getting its own verdict, on both curves; proofs from the cpu backend on
// generated and hand-written circuits, and snarkjs's own proofs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "groth16/formats.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"
#include "test_seed.hpp"

using namespace cuzk;
using namespace cuzk::groth16;
namespace fs = std::filesystem;

namespace {

// A key with its prover; proofs of one witness differ by the prover's fresh r and s.
template <class C>
struct Keyed {
  using Fr = typename C::Fr;
  std::shared_ptr<const ZKey<C>> zk;
  std::unique_ptr<ProverBackend<C>> prover;
  std::unique_ptr<PreparedKey<C>> pk;
  explicit Keyed(const R1cs<C>& r, const char* seed)
      : zk(std::make_shared<const ZKey<C>>(setup_zkey(r, toxic_from_seed<C>(std::string(seed))))),
        prover(make_cpu_prover<C>(zk)),
        pk(std::make_unique<PreparedKey<C>>(vk_from_zkey(*zk))) {}
  Proof<C> prove(const std::vector<Fr>& w) { return prover->prove(w, {}); }
};

// A circuit of the generator (2^6 rows), and its witness.
template <class C>
struct Generated : Keyed<C> {
  std::vector<typename C::Fr> w;
  static R1cs<C> circuit(std::vector<typename C::Fr>& w) {
    R1cs<C> r;
    gen_circuit<C>(6, cuzk::test::test_seed(), r, w);
    return r;
  }
  Generated() : Generated(std::vector<typename C::Fr>{}) {}

 private:
  explicit Generated(std::vector<typename C::Fr> tmp) : Keyed<C>(circuit(tmp), "batch"), w(std::move(tmp)) {}
};

// out = x*y, z = (2 out + 1) x with out (wire 1) and x (wire 2) public: any x, y is a witness, so
// proofs of one key for different public signals.
template <class C>
R1cs<C> toy_circuit() {
  using Fr = typename C::Fr;
  R1cs<C> r;
  r.n_wires = 5, r.n_pub_out = 1, r.n_pub_in = 1, r.n_prv_in = 1;
  Fr one = Fr::one(), two = Fr::from_u64(2);
  r.constraints.push_back({{{2, one}}, {{3, one}}, {{1, one}}});
  r.constraints.push_back({{{1, two}, {0, one}}, {{2, one}}, {{4, one}}});
  r.constraints.push_back({{{3, one}}, {{0, one}}, {{3, one}}});
  return r;
}
template <class C>
std::vector<typename C::Fr> toy_witness(uint64_t x, uint64_t y) {
  using Fr = typename C::Fr;
  Fr fx = Fr::from_u64(x), fy = Fr::from_u64(y), out = fx * fy;
  return {Fr::one(), out, fx, fy, (out.dbl() + Fr::one()) * fx};
}

// Proofs with their public signals, and the references verify_batch takes.
template <class C>
struct Set {
  std::vector<std::vector<typename C::Fr>> pub;
  std::vector<Proof<C>> proof;
  void add(std::vector<typename C::Fr> p, const Proof<C>& pr) { pub.push_back(std::move(p)), proof.push_back(pr); }
  std::vector<ProofRef<C>> refs() const {
    std::vector<ProofRef<C>> r;
    for (size_t i = 0; i < proof.size(); i++) r.push_back({&pub[i], &proof[i]});
    return r;
  }
  size_t size() const { return proof.size(); }
};

// n proofs of the generated circuit's witness.
template <class C>
Set<C> generated_proofs(Generated<C>& g, int n) {
  Set<C> s;
  const auto pub = public_signals(g.w, g.zk->n_public);
  for (int i = 0; i < n; i++) s.add(pub, g.prove(g.w));
  return s;
}

// Proofs of the toy circuit for x = from .. to-1 and y = x + dy.
template <class C>
Set<C> toy_proofs(Keyed<C>& k, uint64_t from, uint64_t to, uint64_t dy) {
  Set<C> s;
  for (uint64_t x = from; x < to; x++) {
    auto w = toy_witness<C>(x, x + dy);
    s.add(public_signals(w, k.zk->n_public), k.prove(w));
  }
  return s;
}

template <class C>
typename C::G1Affine g1_times(uint64_t k) {
  return C::G1::from_affine(C::g1_generator()).mul(BigInt<1>{{k}}).to_affine();
}

std::vector<bool> all(size_t n, bool v) {
  return std::vector<bool>(n, v);
}

template <class C>
class BatchVerify : public ::testing::Test {};
using Curves = ::testing::Types<Bls12_381, Bn254>;
TYPED_TEST_SUITE(BatchVerify, Curves);

// Many valid proofs pass together and alone; a batch of one is the single check.
TYPED_TEST(BatchVerify, ValidProofsPass) {
  using C = TypeParam;
  Generated<C> g;
  const Set<C> s = generated_proofs(g, 9);
  EXPECT_EQ(verify_batch(*g.pk, s.refs()), all(9, true));
  for (size_t n : {1, 2, 3}) {
    auto r = s.refs();
    r.resize(n);
    EXPECT_EQ(verify_batch(*g.pk, r), all(n, true)) << n;
  }
  EXPECT_TRUE(verify_proof(*g.pk, s.pub[0], s.proof[0]));
  EXPECT_TRUE(verify_proof(g.pk->vk, s.pub[0], s.proof[0]));
}

TYPED_TEST(BatchVerify, EmptyBatch) {
  using C = TypeParam;
  Keyed<C> k(toy_circuit<C>(), "toy");
  EXPECT_TRUE(verify_batch(*k.pk, {}).empty());
  EXPECT_TRUE(batch_equation_holds(*k.pk, {}, {}));
}

// One proof broken in a batch of 16, at every position: only it fails. And two broken ones, at
// the ends, side by side, and apart.
TYPED_TEST(BatchVerify, FindsTheBadProofs) {
  using C = TypeParam;
  Generated<C> g;
  const Set<C> good = generated_proofs(g, 16);
  const auto bump = g1_times<C>(5);
  auto broken = [&](std::vector<size_t> bad) {
    Set<C> s = good;
    std::vector<bool> want(s.size(), true);
    for (size_t i : bad) {
      s.proof[i].c = (C::G1::from_affine(s.proof[i].c) + C::G1::from_affine(bump)).to_affine();
      want[i] = false;
    }
    EXPECT_EQ(verify_batch(*g.pk, s.refs()), want) << ::testing::PrintToString(bad);
  };
  for (size_t i = 0; i < 16; i++) broken({i});
  broken({0, 15});
  broken({7, 8});
  broken({2, 11});
  broken({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
}

// Proofs exchanged between two members with different public signals: each proof is valid, for
// the other's signals, so both fail; the members around them pass.
TYPED_TEST(BatchVerify, SwappedProofsFail) {
  using C = TypeParam;
  Keyed<C> k(toy_circuit<C>(), "toy");
  Set<C> s = toy_proofs(k, 2, 8, 11);
  EXPECT_EQ(verify_batch(*k.pk, s.refs()), all(6, true));
  std::swap(s.proof[1], s.proof[4]);
  EXPECT_EQ(verify_batch(*k.pk, s.refs()), (std::vector<bool>{true, false, true, true, false, true}));
  EXPECT_FALSE(verify_proof(*k.pk, s.pub[1], s.proof[1]));
  EXPECT_FALSE(verify_proof(k.pk->vk, s.pub[1], s.proof[1]));
}

TYPED_TEST(BatchVerify, WrongPublicSignalsFail) {
  using C = TypeParam;
  Keyed<C> k(toy_circuit<C>(), "toy");
  Set<C> s = toy_proofs(k, 3, 7, 5);
  s.pub[2][1] += C::Fr::one();  // the public input x
  EXPECT_EQ(verify_batch(*k.pk, s.refs()), (std::vector<bool>{true, true, false, true}));
  EXPECT_FALSE(verify_proof(*k.pk, s.pub[2], s.proof[2]));
  // A signal count that does not match the key: false in the batch, refused by verify_proof.
  s.pub[2].push_back(C::Fr::one());
  EXPECT_EQ(verify_batch(*k.pk, s.refs()), (std::vector<bool>{true, true, false, true}));
  EXPECT_THROW(verify_proof(*k.pk, s.pub[2], s.proof[2]), std::invalid_argument);
}

// A proof checked with its public part prepared ahead (the GPU worker's lone proofs): valid proofs
// pass, a proof for other public signals, a changed C and another proof's B fail, a signal count
// that does not fit is refused by prepare_public, and a bad point is named as the sequential check
// names it: pi_a before pi_b before pi_c.
TYPED_TEST(BatchVerify, PublicPartPreparedAhead) {
  using C = TypeParam;
  Keyed<C> k(toy_circuit<C>(), "toy");
  const Set<C> s = toy_proofs(k, 3, 7, 2);
  std::vector<PublicPart<C>> parts;
  for (size_t i = 0; i < s.size(); i++) {
    parts.push_back(prepare_public(*k.pk, s.pub[i]));
    EXPECT_TRUE(verify_proof(*k.pk, parts[i], s.proof[i])) << i;
  }
  EXPECT_FALSE(verify_proof(*k.pk, parts[1], s.proof[0]));
  Proof<C> p = s.proof[0];
  p.c = (C::G1::from_affine(p.c) + C::G1::from_affine(C::g1_generator())).to_affine();
  EXPECT_FALSE(verify_proof(*k.pk, parts[0], p));
  p = s.proof[0];
  p.b = s.proof[1].b;
  EXPECT_FALSE(verify_proof(*k.pk, parts[0], p));

  std::vector<typename C::Fr> longer = s.pub[0];
  longer.push_back(C::Fr::one());
  EXPECT_THROW(prepare_public(*k.pk, longer), std::invalid_argument);

  auto refusal = [&](const Proof<C>& bad) -> std::string {
    try {
      verify_proof(*k.pk, parts[0], bad);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no refusal";
  };
  p = s.proof[0];
  p.c.y += C::Fq::one();
  EXPECT_NE(refusal(p).find("pi_c"), std::string::npos) << refusal(p);
  p.b.y += C::Fq2::one();
  EXPECT_NE(refusal(p).find("pi_b"), std::string::npos) << refusal(p);
  p.a.y += C::Fq::one();
  EXPECT_NE(refusal(p).find("pi_a"), std::string::npos) << refusal(p);
}

// A point off the curve is false in the batch, the others unaffected; verify_proof says why.
TYPED_TEST(BatchVerify, MalformedProofIsFalse) {
  using C = TypeParam;
  Keyed<C> k(toy_circuit<C>(), "toy");
  Set<C> s = toy_proofs(k, 3, 6, 9);
  s.proof[0].a.y += C::Fq::one();
  EXPECT_EQ(verify_batch(*k.pk, s.refs()), (std::vector<bool>{false, true, true}));
  EXPECT_THROW(verify_proof(*k.pk, s.pub[0], s.proof[0]), std::invalid_argument);
}

// Pairs of invalid proofs whose errors cancel in the unweighted sum: with every weight 1 the batch
// equation holds (so the pairs are real tests of the weighting), with verify_batch's random
// weights both proofs of each pair fail, every time.
TYPED_TEST(BatchVerify, CancellingErrorsNeedRandomWeights) {
  using C = TypeParam;
  using G1 = typename C::G1;
  Keyed<C> k(toy_circuit<C>(), "toy");
  auto w1 = toy_witness<C>(3, 4), w2 = toy_witness<C>(6, 7);
  const auto p1 = public_signals(w1, k.zk->n_public), p2 = public_signals(w2, k.zk->n_public);
  const Proof<C> q1 = k.prove(w1), q2 = k.prove(w2);
  const G1 d = G1::from_affine(g1_times<C>(1234567));
  const std::vector<BigInt<2>> ones(2, BigInt<2>{{1, 0}});
  auto expect_caught = [&](const Set<C>& s, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(batch_equation_holds(*k.pk, s.refs(), ones));
    EXPECT_FALSE(verify_proof(*k.pk, s.pub[0], s.proof[0]));
    EXPECT_FALSE(verify_proof(*k.pk, s.pub[1], s.proof[1]));
    for (int t = 0; t < 8; t++) EXPECT_EQ(verify_batch(*k.pk, s.refs()), all(2, false));
    // Also among valid proofs, either way round.
    Set<C> more = s;
    more.add(p1, q1), more.add(p2, q2);
    EXPECT_EQ(verify_batch(*k.pk, more.refs()), (std::vector<bool>{false, false, true, true}));
    std::swap(more.proof[0], more.proof[3]), std::swap(more.pub[0], more.pub[3]);
    EXPECT_EQ(verify_batch(*k.pk, more.refs()), (std::vector<bool>{true, false, true, false}));
  };
  {  // C_1 + D and C_2 - D
    Set<C> s;
    s.add(p1, {q1.a, q1.b, (G1::from_affine(q1.c) + d).to_affine()});
    s.add(p2, {q2.a, q2.b, (G1::from_affine(q2.c) - d).to_affine()});
    expect_caught(s, "C +- D");
  }
  {  // one proof twice with A + D and A - D: e(A + D, B) e(A - D, B) = e(A, B)^2
    Set<C> s;
    s.add(p1, {(G1::from_affine(q1.a) + d).to_affine(), q1.b, q1.c});
    s.add(p1, {(G1::from_affine(q1.a) - d).to_affine(), q1.b, q1.c});
    expect_caught(s, "A +- D");
  }
  {  // public input x + 1 and x - 1: the IC terms cancel
    Set<C> s;
    auto a = p1, b = p2;
    a[1] += C::Fr::one(), b[1] -= C::Fr::one();
    s.add(a, q1), s.add(b, q2);
    expect_caught(s, "x +- 1");
  }
}

// The batch equation with other weights: valid proofs hold for any nonzero weights, and zero
// weights (which would drop a proof from the check) are refused.
TYPED_TEST(BatchVerify, EquationHoldsForAnyWeights) {
  using C = TypeParam;
  Keyed<C> k(toy_circuit<C>(), "toy");
  Set<C> s = toy_proofs(k, 2, 5, 3);
  const std::vector<BigInt<2>> w = {{{7, 0}}, {{~0ull, ~0ull}}, {{0, 1}}};
  EXPECT_TRUE(batch_equation_holds(*k.pk, s.refs(), w));
  std::vector<BigInt<2>> z = w;
  z[1] = BigInt<2>{{0, 0}};
  EXPECT_THROW(batch_equation_holds(*k.pk, s.refs(), z), std::invalid_argument);
  s.proof[2] = s.proof[0];
  EXPECT_FALSE(batch_equation_holds(*k.pk, s.refs(), w));
}

// snarkjs's proofs of the merkle reference circuit (BLS12-381): its ceremony proof and the two
// deterministic proofs of the known-toxic key, in batches with copies and a tampered member.
const std::string kReference = [] {
  const char* e = std::getenv("CUZK_REFERENCE_VECTORS");
  return e ? std::string(e) : std::string(CUZK_REFERENCE_DIR);
}();

TEST(BatchVerifySnarkjs, ReferenceProofs) {
  using namespace cuzk::bls12_381;
  for (const char* dir : {"merkle_ceremony", "merkle_known_toxic"}) {
    SCOPED_TRACE(dir);
    const std::string d = kReference + "/" + dir + "/";
    ASSERT_TRUE(fs::exists(d + "verification_key.json")) << "reference vectors not found under " << d;
    PreparedKey<Bls12_381> pk(read_vk_json(d + "verification_key.json"));
    std::vector<std::string> proofs = {d};
    if (std::string(dir) == "merkle_known_toxic") proofs = {d + "det_r0_s0/", d + "det_r7_s11/"};
    Set<Bls12_381> s;
    for (int copy = 0; copy < 3; copy++)
      for (const auto& p : proofs) s.add(read_public_json(p + "public.json"), read_proof_json(p + "proof.json"));
    EXPECT_EQ(verify_batch(pk, s.refs()), std::vector<bool>(s.size(), true));
    s.pub[1][0] += Fr::one();
    std::vector<bool> want(s.size(), true);
    want[1] = false;
    EXPECT_EQ(verify_batch(pk, s.refs()), want);
  }
}

}  // namespace
