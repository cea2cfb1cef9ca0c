// The CPU prover against snarkjs's deterministic proofs of the known-toxic merkle key: every
// intermediate (A*w, B*w, C, the coset values, the five raw MSMs) and the final proof, exactly.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "groth16/formats.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "groth16/verifier.hpp"
#include "math/encoding.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
namespace fs = std::filesystem;

namespace {

// The reference vectors (tests/fixtures/reference); CUZK_REFERENCE_VECTORS overrides the location.
const std::string kToxic = [] {
  const char* e = std::getenv("CUZK_REFERENCE_VECTORS");
  return (e ? std::string(e) : std::string(CUZK_REFERENCE_DIR)) + "/merkle_known_toxic";
}();
const std::string kZkey = kToxic + "/merkle_fast.zkey";
const std::string kWtns = kToxic + "/witness.wtns";

// The vectors travel with the repository, so their absence is a failure, not a skip.
#define REQUIRE_REFERENCE() \
  ASSERT_TRUE(fs::exists(kZkey) && fs::exists(kWtns)) << "reference vectors not found under " << kToxic

// The key and witness, read once for the whole suite.
struct Merkle {
  std::shared_ptr<const ZKey> zk;
  std::vector<Fr> w;
};
const Merkle& merkle() {
  static const Merkle m{std::make_shared<const ZKey>(read_zkey(kZkey)), read_wtns(kWtns)};
  return m;
}

// A vector of 32-byte little-endian plain scalars (a_eval.bin and friends).
std::vector<Fr> read_scalars(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(bytes.size() % 32, 0u) << path;
  std::vector<Fr> out(bytes.size() / 32);
  for (size_t i = 0; i < out.size(); i++) out[i] = Fr::from_plain(limbs_from_le<4>(&bytes[32 * i], 32));
  return out;
}

Fq fq(const nlohmann::json& j) { return *field_from_decimal<Fq>(j.get<std::string>()); }

// snarkjs prints projective [x, y, z] with z = 1 after normalisation.
G1 g1_json(const nlohmann::json& j) {
  EXPECT_EQ(j[2], "1");
  return G1::from_affine({fq(j[0]), fq(j[1])});
}
G2 g2_json(const nlohmann::json& j) {
  EXPECT_EQ(j[2][0], "1");
  EXPECT_EQ(j[2][1], "0");
  return G2::from_affine({{fq(j[0][0]), fq(j[0][1])}, {fq(j[1][0]), fq(j[1][1])}});
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

}  // namespace

TEST(Prover, EvaluatorMatchesSnarkjs) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  auto ev = ConstraintEvaluator::compile(*m.zk);
  std::vector<Fr> a, b, c;
  ev.evaluate(m.w, a, b, c);
  EXPECT_EQ(a, read_scalars(kToxic + "/det_r0_s0/a_eval.bin"));
  EXPECT_EQ(b, read_scalars(kToxic + "/det_r0_s0/b_eval.bin"));
  EXPECT_EQ(c, read_scalars(kToxic + "/det_r0_s0/c_eval.bin"));
}

TEST(Prover, HCosetMatchesSnarkjs) {
  REQUIRE_REFERENCE();
  const std::string d = kToxic + "/det_r0_s0/";
  auto h = compute_h_coset(read_scalars(d + "a_eval.bin"), read_scalars(d + "b_eval.bin"),
                           read_scalars(d + "c_eval.bin"), merkle().zk->log_domain);
  EXPECT_EQ(h, read_scalars(d + "h_odd.bin"));
}

// Both deterministic proofs, their raw MSMs, b1 and the public signals.
TEST(Prover, DeterministicProofsMatchSnarkjs) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  auto backend = make_cpu_prover(m.zk);
  EXPECT_STREQ(backend->name(), "cpu");
  for (const char* dir : {"det_r0_s0", "det_r7_s11"}) {
    SCOPED_TRACE(dir);
    const std::string d = kToxic + "/" + dir + "/";
    nlohmann::json inter = read_json(d + "intermediates.json");
    ProveOptions opt;
    opt.r = *field_from_decimal<Fr>(inter["r"].get<std::string>());
    opt.s = *field_from_decimal<Fr>(inter["s"].get<std::string>());
    RawMsms raw;
    Proof p = backend->prove(m.w, opt, &raw);
    const auto& msm = inter["msm_raw"];
    EXPECT_EQ(raw.a, g1_json(msm["A"]));
    EXPECT_EQ(raw.b1, g1_json(msm["B1"]));
    EXPECT_EQ(raw.b2, g2_json(msm["B2"]));
    EXPECT_EQ(raw.c, g1_json(msm["C"]));
    EXPECT_EQ(raw.h, g1_json(msm["H"]));
    Proof want = read_proof_json(d + "proof.json");
    EXPECT_EQ(p.a, want.a);
    EXPECT_EQ(p.b, want.b);
    EXPECT_EQ(p.c, want.c);
    EXPECT_EQ(public_signals(m.w, m.zk->n_public), read_public_json(d + "public.json"));
  }
}

// The daemon's path: synthesis fills a, b, c into caller memory, the backend proves from them in
// place; the proof equals snarkjs's for the same r, s, and vectors of the wrong size are refused.
TEST(Prover, ProveSynthesizedMatchesSnarkjs) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  auto backend = make_cpu_prover(m.zk);
  auto ev = ConstraintEvaluator::compile(*m.zk);
  std::vector<Fr> a(m.zk->domain_size), b(a.size()), c(a.size());
  ev.evaluate_into(m.w.data(), a.data(), b.data(), c.data());
  const std::string d = kToxic + "/det_r7_s11/";
  nlohmann::json inter = read_json(d + "intermediates.json");
  ProveOptions opt;
  opt.r = *field_from_decimal<Fr>(inter["r"].get<std::string>());
  opt.s = *field_from_decimal<Fr>(inter["s"].get<std::string>());
  SynthesizedView v{m.w.data(), m.w.size(), a.data(), b.data(), c.data(), a.size()};
  Proof p = backend->prove_synthesized(v, opt);
  Proof want = read_proof_json(d + "proof.json");
  EXPECT_EQ(p.a, want.a);
  EXPECT_EQ(p.b, want.b);
  EXPECT_EQ(p.c, want.c);
  SynthesizedView short_w = v;
  short_w.n_vars--;
  EXPECT_THROW(backend->prove_synthesized(short_w, opt), std::invalid_argument);
  SynthesizedView short_d = v;
  short_d.domain_size /= 2;
  EXPECT_THROW(backend->prove_synthesized(short_d, opt), std::invalid_argument);
  SynthesizedView null_c = v;
  null_c.c = nullptr;
  EXPECT_THROW(backend->prove_synthesized(null_c, opt), std::invalid_argument);
  // w alone (the daemon's synthesis.abc = "gpu"): the backend evaluates a, b, c, and the proof is
  // snarkjs's.
  SynthesizedView w_only{m.w.data(), m.w.size(), nullptr, nullptr, nullptr, a.size()};
  Proof q = backend->prove_synthesized(w_only, opt);
  EXPECT_EQ(q.a, want.a);
  EXPECT_EQ(q.b, want.b);
  EXPECT_EQ(q.c, want.c);
  w_only.w = nullptr;
  EXPECT_THROW(backend->prove_synthesized(w_only, opt), std::invalid_argument);
}

// The cpu backend reports its compute per stage, one stage after another, inside the proof.
TEST(Prover, CpuBackendReportsStageSpans) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  auto backend = make_cpu_prover(m.zk);
  EXPECT_TRUE(backend->last_spans().empty());
  auto check = [&](const std::vector<std::string>& stages, double wall_ms) {
    auto spans = backend->last_spans();
    std::vector<std::string> names;
    for (const auto& s : spans) {
      if (names.empty() || names.back() != s.stage) names.push_back(s.stage);
      EXPECT_LE(s.start_ms, s.end_ms) << s.stage;
      EXPECT_GE(s.start_ms, 0) << s.stage;
    }
    EXPECT_EQ(names, stages);
    for (size_t i = 1; i < spans.size(); i++) EXPECT_LE(spans[i - 1].end_ms, spans[i].start_ms);
    StageBusy b = summarize_spans(spans);
    EXPECT_GT(b.total_ms, 0);
    EXPECT_LE(b.total_ms, wall_ms);
  };
  auto t0 = std::chrono::steady_clock::now();
  backend->prove(m.w, {});
  check({"eval", "ntt", "msm"}, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  std::vector<Fr> a, b, c;
  ConstraintEvaluator::compile(*m.zk).evaluate(m.w, a, b, c);
  SynthesizedView v{m.w.data(), m.w.size(), a.data(), b.data(), c.data(), a.size()};
  t0 = std::chrono::steady_clock::now();
  backend->prove_synthesized(v, {});
  check({"copy", "ntt", "msm"}, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

// Synthesis reads only the header and the coefficients; the evaluator compiled from them is the
// one compiled from the whole key.
TEST(Prover, CoefficientOnlyReadCompilesTheSameEvaluator) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  ZKey c = read_zkey_coefficients(kZkey);
  EXPECT_EQ(c.n_vars, m.zk->n_vars);
  EXPECT_EQ(c.n_public, m.zk->n_public);
  EXPECT_EQ(c.domain_size, m.zk->domain_size);
  EXPECT_EQ(c.coefs.size(), m.zk->coefs.size());
  EXPECT_TRUE(c.a.empty() && c.b2.empty() && c.h.empty());
  auto full = ConstraintEvaluator::compile(*m.zk), part = ConstraintEvaluator::compile(c);
  std::vector<Fr> a1, b1, c1, a2, b2, c2;
  full.evaluate(m.w, a1, b1, c1);
  part.evaluate(m.w, a2, b2, c2);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
  EXPECT_EQ(c1, c2);
  // Still strict: a truncated key is an error naming the file.
  const std::string bad = testing::TempDir() + "/truncated.zkey";
  {
    std::ifstream in(kZkey, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(bad, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 3));
  }
  try {
    read_zkey_coefficients(bad);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated.zkey"), std::string::npos) << e.what();
  }
}

// Without fixed r, s every proof is fresh and still verifies.
TEST(Prover, RandomizedProofsVerify) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  auto backend = make_cpu_prover(m.zk);
  VerificationKey vk = vk_from_zkey(*m.zk);
  auto pub = public_signals(m.w, m.zk->n_public);
  Proof p1 = backend->prove(m.w, {}, nullptr), p2 = backend->prove(m.w, {}, nullptr);
  EXPECT_NE(p1.a, p2.a);
  EXPECT_TRUE(verify_proof(vk, pub, p1));
  EXPECT_TRUE(verify_proof(vk, pub, p2));
  // A changed public signal must not verify.
  pub[0] += Fr::one();
  EXPECT_FALSE(verify_proof(vk, pub, p1));
}

TEST(Prover, RejectsWrongWitnessLength) {
  REQUIRE_REFERENCE();
  const Merkle& m = merkle();
  auto backend = make_cpu_prover(m.zk);
  std::vector<Fr> shorter(m.w.begin(), m.w.end() - 1);
  try {
    backend->prove(shorter, {}, nullptr);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("witness has 3971 values, the zkey expects nVars=3972"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(public_signals<Fr>({Fr::one()}, 2), std::invalid_argument);
}

TEST(Prover, RejectsInconsistentKey) {
  REQUIRE_REFERENCE();
  auto bad = std::make_shared<ZKey>(*merkle().zk);
  bad->h.assign(bad->h.begin(), bad->h.end() - 1);
  EXPECT_THROW(make_cpu_prover<Bls12_381>(bad), std::invalid_argument);
}

TEST(Random, UniformLooking) {
  std::set<std::string> seen;
  Scalar half;
  for (int i = 0; i < 4; i++) half.l[i] = (FrParams::MOD[i] >> 1) | (i < 3 ? FrParams::MOD[i + 1] << 63 : 0);
  int high = 0;
  for (int i = 0; i < 200; i++) {
    Fr x = random_fr();
    Scalar v = x.to_plain();
    EXPECT_TRUE(Fr::is_canonical(v.l));
    seen.insert(field_to_decimal(x));
    bool above = false;
    for (int k = 3; k >= 0; k--)
      if (v.l[k] != half.l[k]) {
        above = v.l[k] > half.l[k];
        break;
      }
    high += above;
  }
  EXPECT_EQ(seen.size(), 200u);
  EXPECT_GT(high, 60);  // about half of the draws lie above (r-1)/2
  EXPECT_LT(high, 140);
}
