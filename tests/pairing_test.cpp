#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <vector>

#include "groth16/formats.hpp"
#include "groth16/random.hpp"
#include "groth16/verifier.hpp"
#include "math/bn254_pairing.hpp"
#include "math/encoding.hpp"
#include "math/pairings.hpp"
#include "math/pairing.hpp"
#include "math/subgroup.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

// Minimal unsigned big integers (little-endian limbs) to derive exponents from q and r in-test,
// so that no derived constant is trusted without being recomputed from its definition.
using Big = std::vector<u64>;

void trim(Big& a) {
  while (a.size() > 1 && a.back() == 0) a.pop_back();
}
Big big_from(const u64* l, int n) {
  Big r(l, l + n);
  trim(r);
  return r;
}
Big big_mul(const Big& a, const Big& b) {
  Big r(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); i++) {
    u64 c = 0;
    for (size_t j = 0; j < b.size(); j++) r[i + j] = mac(r[i + j], a[i], b[j], c);
    r[i + b.size()] = c;
  }
  trim(r);
  return r;
}
Big big_sub_small(Big a, u64 s) {
  u64 br = 0;
  a[0] = sbb(a[0], s, br);
  for (size_t i = 1; i < a.size() && br; i++) a[i] = sbb(a[i], 0, br);
  trim(a);
  return a;
}
int big_bits(const Big& a) {
  for (size_t i = a.size(); i-- > 0;)
    if (a[i]) return int(i * 64 + 64 - clz64(a[i]));
  return 0;
}
bool big_bit(const Big& a, int i) { return (a[i / 64] >> (i % 64)) & 1; }
bool big_ge(const Big& a, const Big& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = n; i-- > 0;) {
    u64 x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x > y;
  }
  return true;
}
// Exact quotient a / d by shift-and-subtract; the test asserts the remainder is zero.
Big big_div(const Big& a, const Big& d, Big* rem = nullptr) {
  Big q(a.size(), 0), r{0};
  for (int i = big_bits(a) - 1; i >= 0; i--) {
    u64 carry = big_bit(a, i);
    for (auto& w : r) {
      u64 nc = w >> 63;
      w = (w << 1) | carry;
      carry = nc;
    }
    if (carry) r.push_back(carry);
    if (big_ge(r, d)) {
      u64 br = 0;
      for (size_t k = 0; k < r.size(); k++) r[k] = sbb(r[k], k < d.size() ? d[k] : 0, br);
      trim(r);
      q[i / 64] |= 1ull << (i % 64);
    }
  }
  trim(q);
  if (rem) *rem = r;
  return q;
}
template <int N>
BigInt<N> to_bigint(const Big& a) {
  BigInt<N> r;
  for (int i = 0; i < N; i++) r.l[i] = i < (int)a.size() ? a[i] : 0;
  EXPECT_LE(a.size(), (size_t)N);
  return r;
}
Big q_big() { return big_from(FqParams::MOD, 6); }
Big r_big() { return big_from(FrParams::MOD, 4); }

std::mt19937_64& rng() { return cuzk::test::shared_test_rng(); }
// Random element: random Montgomery limbs below 2^380 < q (a uniformly random residue is not needed).
Fq rand_fq() {
  u64 l[6];
  for (auto& x : l) x = rng()();
  l[5] &= 0x0fffffffffffffffULL;
  return Fq::from_mont_limbs(l);
}
Fq2 rand_fq2() { return {rand_fq(), rand_fq()}; }
Fq6 rand_fq6() { return {rand_fq2(), rand_fq2(), rand_fq2()}; }
Fq12 rand_fq12() { return {rand_fq6(), rand_fq6()}; }
Scalar rand_scalar() {
  Scalar s;
  for (auto& x : s.l) x = rng()();
  s.l[3] &= 0x0fffffffffffffffULL;
  return s;
}
Fr fr_of(const Scalar& s) { return Fr::from_plain(s); }

G1Affine g1_mul(const Scalar& k) { return G1::from_affine(g1_generator()).mul(k).to_affine(); }
G2Affine g2_mul(const Scalar& k) { return G2::from_affine(g2_generator()).mul(k).to_affine(); }

// The six Fq2 slots of an Fq12 in the power basis of w (see pairing.hpp).
void to_w_basis(const Fq12& a, Fq2 out[6]) {
  out[0] = a.c0.c0, out[1] = a.c1.c0, out[2] = a.c0.c1, out[3] = a.c1.c1, out[4] = a.c0.c2, out[5] = a.c1.c2;
}
Fq12 from_w_basis(const Fq2 in[6]) { return {{in[0], in[2], in[4]}, {in[1], in[3], in[5]}}; }
// Schoolbook product in Fq2[w]/(w^6 - xi): an independent reference for the Karatsuba tower.
Fq12 naive_mul(const Fq12& a, const Fq12& b) {
  Fq2 x[6], y[6], z[11];
  to_w_basis(a, x);
  to_w_basis(b, y);
  for (auto& t : z) t = Fq2::zero();
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) z[i + j] += x[i] * y[j];
  for (int k = 6; k < 11; k++) z[k - 6] += z[k].mul_by_xi();
  return from_w_basis(z);
}

Fq fq_dec(const std::string& s) {
  auto v = field_from_decimal<Fq>(s);
  if (!v) throw std::runtime_error("bad Fq " + s);
  return *v;
}
G1Affine g1_json(const nlohmann::json& j) {
  if (j[2].get<std::string>() == "0") return G1Affine::infinity();
  return {fq_dec(j[0]), fq_dec(j[1])};
}
G2Affine g2_json(const nlohmann::json& j) {
  if (j[2][0].get<std::string>() == "0" && j[2][1].get<std::string>() == "0") return G2Affine::infinity();
  return {{fq_dec(j[0][0]), fq_dec(j[0][1])}, {fq_dec(j[1][0]), fq_dec(j[1][1])}};
}
Fq12 fq12_json(const nlohmann::json& j) {
  Fq12 r;
  Fq6* h[2] = {&r.c0, &r.c1};
  for (int i = 0; i < 2; i++) {
    Fq2* s[3] = {&h[i]->c0, &h[i]->c1, &h[i]->c2};
    for (int k = 0; k < 3; k++) *s[k] = {fq_dec(j[i][k][0]), fq_dec(j[i][k][1])};
  }
  return r;
}
nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(f);
}
VerificationKey vk_json(const nlohmann::json& j) {
  VerificationKey vk;
  vk.n_public = j["nPublic"].get<uint32_t>();
  vk.alpha1 = g1_json(j["vk_alpha_1"]);
  vk.beta2 = g2_json(j["vk_beta_2"]);
  vk.gamma2 = g2_json(j["vk_gamma_2"]);
  vk.delta2 = g2_json(j["vk_delta_2"]);
  for (auto& p : j["IC"]) vk.ic.push_back(g1_json(p));
  return vk;
}
Proof proof_json(const nlohmann::json& j) { return {g1_json(j["pi_a"]), g2_json(j["pi_b"]), g1_json(j["pi_c"])}; }
std::vector<Fr> public_json(const nlohmann::json& j) {
  std::vector<Fr> r;
  for (auto& s : j) r.push_back(*field_from_decimal<Fr>(s.get<std::string>()));
  return r;
}
// The reference vectors live outside the repository; CUZK_REFERENCE_VECTORS overrides the location.
std::string vectors_dir() {
  const char* e = std::getenv("CUZK_REFERENCE_VECTORS");
  return (e ? std::string(e) : std::string(CUZK_REFERENCE_DIR)) + "/";
}
#define REQUIRE_FILE(path) \
  if (!std::ifstream(path)) GTEST_FAIL() << "reference vectors not found at " << (path)

}  // namespace

TEST(Tower, ConstantsMatchDefinitions) {
  Big q1 = big_sub_small(q_big(), 1), rem;
  Fq2 xi{Fq::one(), Fq::one()};
  Fq2 gamma = xi.pow(to_bigint<6>(big_div(q1, {6}, &rem)));
  EXPECT_EQ(rem, Big{0});
  EXPECT_EQ(PairingParams::frob_w(), gamma);
  EXPECT_EQ(PairingParams::frob_v(), gamma.sqr());
  EXPECT_EQ(PairingParams::frob_v2(), gamma.sqr().sqr());
  EXPECT_EQ(PairingParams::psi_x(), gamma.sqr().inv());
  EXPECT_EQ(PairingParams::psi_y(), (gamma.sqr() * gamma).inv());
  Fq b = PairingParams::beta();
  EXPECT_NE(b, Fq::one());
  EXPECT_EQ(b.sqr() * b, Fq::one());
  // xi must be neither a square nor a cube in Fq2 for the sextic tower to be a field.
  Fq2 s;
  EXPECT_FALSE(xi.sqrt(s));
  EXPECT_NE(xi.pow(to_bigint<12>(big_div(big_sub_small(big_mul(q_big(), q_big()), 1), {3}))), Fq2::one());
}

TEST(Tower, WBasisAndNaiveProduct) {
  Fq12 w = Fq12::zero();
  w.c1.c0 = Fq2::one();
  Fq12 w6 = w.sqr().sqr() * w.sqr();
  Fq12 xi = Fq12::zero();
  xi.c0.c0 = Fq2{Fq::one(), Fq::one()};
  EXPECT_EQ(w6, xi);
  for (int i = 0; i < 8; i++) {
    Fq12 a = rand_fq12(), b = rand_fq12();
    EXPECT_EQ(a * b, naive_mul(a, b));
    EXPECT_EQ(a.sqr(), naive_mul(a, a));
    EXPECT_EQ(a * a.inv(), Fq12::one());
    Fq6 c = rand_fq6(), d = rand_fq6();
    EXPECT_EQ(c.sqr(), c * c);
    EXPECT_EQ(c * c.inv(), Fq6::one());
    EXPECT_EQ(c * d, d * c);
    Fq2 l0 = rand_fq2(), l1 = rand_fq2(), l4 = rand_fq2();
    Fq12 line = Fq12::zero();
    line.c0.c0 = l0, line.c0.c1 = l1, line.c1.c1 = l4;
    EXPECT_EQ(a.mul_by_014(l0, l1, l4), a * line);
  }
}

TEST(Tower, FrobeniusIsPowerQ) {
  BigInt<6> q;
  for (int i = 0; i < 6; i++) q.l[i] = FqParams::MOD[i];
  Fq12 a = rand_fq12();
  EXPECT_EQ(a.frobenius(), a.pow(q));
  EXPECT_EQ(a.frobenius_map(2), a.pow(q).pow(q));
  EXPECT_EQ(a.frobenius_map(6), a.conj());
  EXPECT_EQ(a.frobenius_map(12), a);
  Fq6 c = rand_fq6();
  EXPECT_EQ(c.frobenius(), (Fq12{c, Fq6::zero()}).pow(q).c0);
}

TEST(Tower, CyclotomicSquareMatchesSquare) {
  Fq12 f = rand_fq12();
  Fq12 m = f.conj() * f.inv();
  m = m.frobenius_map(2) * m;
  EXPECT_EQ(m.cyclotomic_sqr(), m.sqr());
  EXPECT_EQ(m.cyclotomic_pow_u64(PairingParams::X_ABS), m.pow(BigInt<1>{{PairingParams::X_ABS}}));
  EXPECT_EQ(m * m.conj(), Fq12::one());
}

TEST(Tower, Fq2Sqrt) {
  for (int i = 0; i < 20; i++) {
    Fq2 x = rand_fq2(), s;
    if (i == 0) x.c1 = Fq::zero();
    if (i == 1) x.c0 = Fq::zero();
    Fq2 a = x.sqr();
    ASSERT_TRUE(a.sqrt(s));
    EXPECT_TRUE(s == x || s == -x);
    Fq2 xi{Fq::one(), Fq::one()};
    EXPECT_FALSE((a * xi).sqrt(s));  // xi is a non-square
  }
  Fq2 s;
  EXPECT_TRUE(Fq2::zero().sqrt(s));
  EXPECT_TRUE(s.is_zero());
  EXPECT_TRUE((-Fq2::one()).sqrt(s));  // -1 = u^2
  EXPECT_EQ(s.sqr(), -Fq2::one());
}

TEST(Pairing, FinalExponentiationIsCubeOfTextbookExponent) {
  Big r = r_big(), rem;
  Big q12 = q_big();
  for (int i = 1; i < 12; i++) q12 = big_mul(q12, q_big());
  Big e = big_div(big_mul(big_sub_small(q12, 1), {3}), r, &rem);
  EXPECT_EQ(rem, Big{0});
  Fq12 f = rand_fq12();
  EXPECT_EQ(final_exponentiation(f), f.pow(to_bigint<68>(e)));
}

TEST(Pairing, BilinearAndNonDegenerate) {
  G1Affine g1 = g1_generator();
  G2Affine g2 = g2_generator();
  Fq12 e = pairing(g1, g2);
  EXPECT_FALSE(e.is_one());
  EXPECT_TRUE(e.pow(to_bigint<4>(r_big())).is_one());
  for (int i = 0; i < 3; i++) {
    Scalar a = rand_scalar(), b = rand_scalar();
    Fq12 lhs = pairing(g1_mul(a), g2_mul(b));
    EXPECT_EQ(lhs, e.pow((fr_of(a) * fr_of(b)).to_plain()));
    EXPECT_EQ(pairing(g1_mul((fr_of(a) * fr_of(b)).to_plain()), g2), lhs);
  }
  EXPECT_EQ(pairing(g1, g2).conj(), pairing(-g1, g2));
  EXPECT_TRUE(pairing(G1Affine::infinity(), g2).is_one());
  EXPECT_TRUE(pairing(g1, G2Affine::infinity()).is_one());
}

TEST(Pairing, ProductOfPairs) {
  Scalar a = rand_scalar(), b = rand_scalar();
  G1Affine ps[3] = {g1_mul(a), -g1_generator(), G1Affine::infinity()};
  G2Affine qs[3] = {g2_mul(b), g2_mul((fr_of(a) * fr_of(b)).to_plain()), g2_generator()};
  EXPECT_TRUE(pairing_product_is_one(ps, qs, 3));
  ps[1] = g1_generator();
  EXPECT_FALSE(pairing_product_is_one(ps, qs, 3));
  EXPECT_TRUE(pairing_product_is_one(ps, qs, 0));
  EXPECT_EQ(multi_miller_loop(ps, qs, 2), miller_loop(ps[0], qs[0]) * miller_loop(ps[1], qs[1]));
}

TEST(Pairing, MatchesSnarkjsAlphaBeta) {
  std::string path = vectors_dir() + "merkle_ceremony/verification_key.json";
  REQUIRE_FILE(path);
  auto j = read_json(path);
  VerificationKey vk = vk_json(j);
  EXPECT_EQ(pairing(vk.alpha1, vk.beta2), fq12_json(j["vk_alphabeta_12"]));
}

namespace {

// Points on the curve but outside the r-torsion: random x until x^3 + b is a square.
Fq curve_b(const Fq&) { return G1Curve::b(); }
Fq2 curve_b(const Fq2&) { return G2Curve::b(); }
template <class Aff, class Rand>
Aff random_curve_point(Rand rnd) {
  using F = typename Aff::F;
  for (;;) {
    F x = rnd(), y;
    if ((x.sqr() * x + curve_b(x)).sqrt(y)) return Aff{x, y};
  }
}

}  // namespace

TEST(Subgroup, EndomorphismChecksAgreeWithOrderCheck) {
  BigInt<4> r = to_bigint<4>(r_big());
  for (int i = 0; i < 4; i++) {
    G1Affine p = g1_mul(rand_scalar());
    G2Affine q = g2_mul(rand_scalar());
    EXPECT_TRUE(g1_in_subgroup(p));
    EXPECT_TRUE(g2_in_subgroup(q));
    G1Affine bad1 = random_curve_point<G1Affine>(rand_fq);
    G2Affine bad2 = random_curve_point<G2Affine>(rand_fq2);
    ASSERT_TRUE(bad1.on_curve());
    ASSERT_TRUE(bad2.on_curve());
    EXPECT_EQ(g1_in_subgroup(bad1), in_subgroup_by_order(bad1, r));
    EXPECT_EQ(g2_in_subgroup(bad2), in_subgroup_by_order(bad2, r));
    EXPECT_FALSE(g1_in_subgroup(bad1));
    EXPECT_FALSE(g2_in_subgroup(bad2));
  }
  EXPECT_TRUE(g1_in_subgroup(G1Affine::infinity()));
  EXPECT_TRUE(g2_in_subgroup(G2Affine::infinity()));
}

// BN254: the multi-pair Miller loop (one shared inversion per step) is the product of single
// loops, the pairing is bilinear, and the G2 endomorphism test agrees with [r]Q = O on points of G2
// and on random points of the twist outside it.
namespace {
namespace bn = cuzk::bn254;
bn::Fr bn_rand_fr() { return random_fr<bn::Fr>(rng()); }
bn::G1Affine bn_g1(const bn::Fr& k) { return bn::G1::from_affine(bn::g1_generator()).mul(k.to_plain()).to_affine(); }
bn::G2Affine bn_g2(const bn::Fr& k) { return bn::G2::from_affine(bn::g2_generator()).mul(k.to_plain()).to_affine(); }
}  // namespace

// gamma = xi^((q-1)/6) and its powers, kept as constants, against their definition.
TEST(Bn254Pairing, FrobeniusConstantsMatchDefinitions) {
  BigInt<4> e;  // (q - 1)/6 by long division
  unsigned __int128 rem = 0;
  for (int i = 3; i >= 0; i--) {
    unsigned __int128 cur = (rem << 64) | (bn::FqParams::MOD[i] - (i == 0 ? 1 : 0));
    e.l[i] = (u64)(cur / 6), rem = cur % 6;
  }
  ASSERT_EQ(rem, 0u);
  const bn::Fq2 g = bn::Fq2{bn::Fq::from_u64(9), bn::Fq::one()}.pow(e);
  EXPECT_EQ(bn::PairingParams::frob_w(), g);
  EXPECT_EQ(bn::PairingParams::frob_v(), g.sqr());
  EXPECT_EQ(bn::PairingParams::gamma3(), g.sqr() * g);
  EXPECT_EQ(bn::PairingParams::frob_v2(), g.sqr().sqr());
}

TEST(Bn254Pairing, MultiMillerLoopBilinearAndG2Test) {
  bn::Fr a = bn_rand_fr(), b = bn_rand_fr(), c = bn_rand_fr();
  bn::G1Affine ps[3] = {bn_g1(a), bn_g1(b), bn::g1_generator()};
  bn::G2Affine qs[3] = {bn_g2(b), bn::g2_generator(), bn_g2(c)};
  EXPECT_EQ(bn::multi_miller_loop(ps, qs, 3),
            bn::miller_loop(ps[0], qs[0]) * bn::miller_loop(ps[1], qs[1]) * bn::miller_loop(ps[2], qs[2]));
  // e([a]P, [b]Q) = e(P, Q)^(ab): e([a]G1, [b]G2) e(-[ab]G1, G2) = 1.
  bn::G1Affine bp[2] = {bn_g1(a), -bn_g1(a * b)};
  bn::G2Affine bq[2] = {bn_g2(b), bn::g2_generator()};
  EXPECT_TRUE(bn::pairing_product_is_one(bp, bq, 2));
  bp[1] = -bn_g1(a * b + bn::Fr::one());
  EXPECT_FALSE(bn::pairing_product_is_one(bp, bq, 2));
  EXPECT_FALSE(bn::pairing(bn::g1_generator(), bn::g2_generator()).is_one());

  const BigInt<4> r{{bn::FrParams::MOD[0], bn::FrParams::MOD[1], bn::FrParams::MOD[2], bn::FrParams::MOD[3]}};
  for (int i = 0; i < 6; i++) {
    bn::G2Affine q = bn_g2(bn_rand_fr());
    EXPECT_TRUE(bn::g2_in_subgroup(q));
    bn::G2Affine bad;
    for (;;) {
      bn::Fq2 x{random_fr<bn::Fq>(rng()), random_fr<bn::Fq>(rng())}, y;
      if ((x.sqr() * x + bn::G2Curve::b()).sqrt(y)) {
        bad = {x, y};
        break;
      }
    }
    ASSERT_TRUE(bad.on_curve());
    EXPECT_FALSE(in_subgroup_by_order(bad, r));
    EXPECT_FALSE(bn::g2_in_subgroup(bad));
    // A point of G2 plus one outside it is outside too.
    bn::G2Affine mixed = (bn::G2::from_affine(q) + bn::G2::from_affine(bad)).to_affine();
    EXPECT_FALSE(bn::g2_in_subgroup(mixed));
    EXPECT_EQ(Pairing<Bn254>::g2_in_subgroup(mixed), in_subgroup_by_order(mixed, r));
  }
  EXPECT_TRUE(bn::g2_in_subgroup(bn::G2Affine::infinity()));
}

TEST(Compress, RoundTripAndRejects) {
  for (int i = 0; i < 6; i++) {
    G1Affine p = g1_mul(rand_scalar());
    G2Affine q = g2_mul(rand_scalar());
    uint8_t b1[48], b2[96];
    compress_g1(p, b1);
    compress_g2(q, b2);
    EXPECT_EQ(decompress_g1(b1), p);
    EXPECT_EQ(decompress_g2(b2), q);
    compress_g1(-p, b1);
    compress_g2(-q, b2);
    EXPECT_EQ(decompress_g1(b1), -p);
    EXPECT_EQ(decompress_g2(b2), -q);
  }
  uint8_t b1[48], b2[96];
  compress_g1(G1Affine::infinity(), b1);
  EXPECT_EQ(b1[0], 0xc0);
  EXPECT_TRUE(decompress_g1(b1).is_inf());
  compress_g2(G2Affine::infinity(), b2);
  EXPECT_EQ(b2[0], 0xc0);
  EXPECT_TRUE(decompress_g2(b2).is_inf());
  b1[47] = 1;  // infinity with a non-zero coordinate
  EXPECT_THROW(decompress_g1(b1), std::invalid_argument);
  compress_g1(g1_generator(), b1);
  b1[0] &= 0x7f;  // uncompressed flag
  EXPECT_THROW(decompress_g1(b1), std::invalid_argument);
  // x = q: non-canonical.
  for (int i = 0; i < 48; i++) b1[47 - i] = (uint8_t)(FqParams::MOD[i / 8] >> (8 * (i % 8)));
  b1[0] |= 0x80;
  EXPECT_THROW(decompress_g1(b1), std::invalid_argument);
  // Curve point outside G1.
  G1Affine bad = random_curve_point<G1Affine>(rand_fq);
  compress_g1(bad, b1);
  EXPECT_THROW(decompress_g1(b1), std::invalid_argument);
  G2Affine bad2 = random_curve_point<G2Affine>(rand_fq2);
  compress_g2(bad2, b2);
  EXPECT_THROW(decompress_g2(b2), std::invalid_argument);
  // An x with no curve point: find one.
  for (;;) {
    Fq x = rand_fq(), y;
    if ((x.sqr() * x + G1Curve::b()).sqrt(y)) continue;
    compress_g1(G1Affine{x, Fq::one()}, b1);
    EXPECT_THROW(decompress_g1(b1), std::invalid_argument);
    break;
  }
}

TEST(Verifier, MerkleCeremonyProof) {
  std::string dir = vectors_dir() + "merkle_ceremony/";
  REQUIRE_FILE(dir + "proof.json");
  VerificationKey vk = vk_json(read_json(dir + "verification_key.json"));
  Proof proof = proof_json(read_json(dir + "proof.json"));
  std::vector<Fr> pub = public_json(read_json(dir + "public.json"));
  EXPECT_TRUE(verify_proof(vk, pub, proof));

  auto bad_pub = pub;
  bad_pub[0] += Fr::one();
  EXPECT_FALSE(verify_proof(vk, bad_pub, proof));
  bad_pub = pub;
  bad_pub[1] += Fr::one();
  EXPECT_FALSE(verify_proof(vk, bad_pub, proof));

  Proof bad = proof;
  bad.a = (G1::from_affine(bad.a) + G1::from_affine(g1_generator())).to_affine();
  EXPECT_FALSE(verify_proof(vk, pub, bad));
  bad = proof;
  bad.c = -bad.c;
  EXPECT_FALSE(verify_proof(vk, pub, bad));
  bad = proof;
  bad.b = g2_generator();
  EXPECT_FALSE(verify_proof(vk, pub, bad));

  bad = proof;
  bad.a.y += Fq::one();  // off the curve
  EXPECT_THROW(verify_proof(vk, pub, bad), std::invalid_argument);
  bad = proof;
  bad.b = random_curve_point<G2Affine>(rand_fq2);  // on E' but not in G2
  EXPECT_THROW(verify_proof(vk, pub, bad), std::invalid_argument);
  EXPECT_THROW(verify_proof(vk, {pub[0]}, proof), std::invalid_argument);
}

TEST(Verifier, KnownToxicDeterministicProofs) {
  std::string dir = vectors_dir() + "merkle_known_toxic/";
  REQUIRE_FILE(dir + "verification_key.json");
  VerificationKey vk = vk_json(read_json(dir + "verification_key.json"));
  for (const char* sub : {"det_r0_s0", "det_r7_s11"}) {
    Proof proof = proof_json(read_json(dir + sub + "/proof.json"));
    std::vector<Fr> pub = public_json(read_json(dir + sub + "/public.json"));
    EXPECT_TRUE(verify_proof(vk, pub, proof)) << sub;
  }
}
