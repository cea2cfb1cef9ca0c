// The snarkjs file formats: reference files read, byte-identical round trips, and the strict
// readers' rejections (each must be a FormatError naming the file and the section or field).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "groth16/binfile.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"
#include "math/encoding.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
namespace fs = std::filesystem;

namespace {

// The reference vectors (tests/fixtures/reference); CUZK_REFERENCE_VECTORS overrides the location.
const std::string kRef = [] {
  const char* e = std::getenv("CUZK_REFERENCE_VECTORS");
  return e ? std::string(e) : std::string(CUZK_REFERENCE_DIR);
}();
const std::string kCeremony = kRef + "/merkle_ceremony";
const std::string kToxic = kRef + "/merkle_known_toxic";
const std::string kZkeyFast = kToxic + "/merkle_fast.zkey";
const std::string kZkeyFinal = kCeremony + "/merkle_final.zkey";

using Bytes = std::vector<uint8_t>;

Bytes slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}
std::string slurp_text(const std::string& path) {
  Bytes b = slurp(path);
  return std::string(b.begin(), b.end());
}
void spit(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write((const char*)b.data(), (std::streamsize)b.size());
}
void spit(const std::string& path, const std::string& s) { spit(path, Bytes(s.begin(), s.end())); }

// A scratch directory per test process.
const std::string& tmpdir() {
  static const std::string d = [] {
    fs::path p = fs::temp_directory_path() / ("cuzk_formats_test_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p.string();
  }();
  return d;
}
std::string tmp(const std::string& name) { return tmpdir() + "/" + name; }

// Removes the scratch directory when the test program ends.
struct ScratchCleanup : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmpdir(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

bool have_reference() { return fs::exists(kZkeyFast) && fs::exists(kZkeyFinal); }
#define REQUIRE_REFERENCE() \
  if (!have_reference()) GTEST_FAIL() << "reference vectors not found under " << kRef

// Runs fn, requiring a FormatError whose message contains every one of `needles`.
void expect_format_error(const std::function<void()>& fn, std::initializer_list<std::string> needles) {
  try {
    fn();
  } catch (const FormatError& e) {
    std::string m = e.what();
    for (const auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "message \"" << m << "\" lacks \"" << n << "\"";
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected FormatError, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected FormatError, nothing was thrown";
}

// The container split into its sections, so that tests can corrupt one and reassemble the file.
struct Container {
  char magic[4];
  uint32_t version = 0;
  std::vector<std::pair<uint32_t, Bytes>> sections;

  static Container parse(const Bytes& b) {
    Container c;
    std::memcpy(c.magic, b.data(), 4);
    uint32_t n;
    std::memcpy(&c.version, b.data() + 4, 4);
    std::memcpy(&n, b.data() + 8, 4);
    size_t pos = 12;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t id;
      uint64_t size;
      std::memcpy(&id, b.data() + pos, 4);
      std::memcpy(&size, b.data() + pos + 4, 8);
      pos += 12;
      c.sections.push_back({id, Bytes(b.begin() + pos, b.begin() + pos + size)});
      pos += size;
    }
    return c;
  }
  Bytes serialize() const {
    Bytes out(12);
    std::memcpy(out.data(), magic, 4);
    uint32_t n = (uint32_t)sections.size();
    std::memcpy(out.data() + 4, &version, 4);
    std::memcpy(out.data() + 8, &n, 4);
    for (const auto& [id, data] : sections) {
      uint8_t h[12];
      uint64_t size = data.size();
      std::memcpy(h, &id, 4);
      std::memcpy(h + 4, &size, 8);
      out.insert(out.end(), h, h + 12);
      out.insert(out.end(), data.begin(), data.end());
    }
    return out;
  }
  Bytes& sec(uint32_t id) {
    for (auto& s : sections)
      if (s.first == id) return s.second;
    throw std::runtime_error("no section " + std::to_string(id));
  }
};

template <class T>
void put(Bytes& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

// Little-endian bytes of 4 or 6 limbs.
template <size_t N>
void put_limbs(Bytes& b, size_t off, const u64 (&l)[N]) {
  std::memcpy(b.data() + off, l, N * 8);
}

const u64 kBn254Q[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};
const u64 kBn254R[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};

Fr fr_dec(const char* s) { return *field_from_decimal<Fr>(s); }

// A tiny but complete zkey (valid points, 4 variables, domain 4), fast to fuzz in full.
ZKey tiny_zkey() {
  G1 g1 = G1::from_affine(g1_generator());
  G2 g2 = G2::from_affine(g2_generator());
  auto p1 = [&](u64 k) { return g1.mul(Scalar{{k, 0, 0, 0}}).to_affine(); };
  auto p2 = [&](u64 k) { return g2.mul(Scalar{{k, 0, 0, 0}}).to_affine(); };
  ZKey z;
  z.n_vars = 4;
  z.n_public = 1;
  z.domain_size = 4;
  z.log_domain = 2;
  z.alpha1 = p1(2);
  z.beta1 = p1(3);
  z.delta1 = p1(5);
  z.beta2 = p2(3);
  z.gamma2 = p2(1);
  z.delta2 = p2(5);
  z.ic = {p1(7), p1(11)};
  z.coefs = {{0, 0, 2, Fr::from_u64(3)}, {1, 0, 3, Fr::zero() - Fr::one()}, {0, 1, 0, Fr::one()}, {0, 2, 1, Fr::one()}};
  z.a = {p1(13), G1Affine::infinity(), p1(17), p1(19)};
  z.b1 = {p1(23), p1(29), G1Affine::infinity(), p1(31)};
  z.b2 = {p2(23), p2(29), G2Affine::infinity(), p2(31)};
  z.c = {p1(37), p1(41)};
  z.h = {p1(43), p1(47), p1(53), p1(59)};
  return z;
}

// circom 2.2.3 output (--r1cs --prime bls12381) for
//   template T() { signal input a; signal input b; signal output c; signal t;
//                  t <== a*b; c <== t*a + 3*b; }  component main {public [a]} = T();
// Sections in circom's order 2, 1, 3.
Bytes circom_r1cs() {
  static const char* hex =
      "723163730100000003000000020000001401000000000000010000000200000000000000fffffffffe5bfeff02a4bd5305d8"
      "a10908d83933487d9d2953a7ed73010000000300000001000000000000000000000000000000000000000000000000000000"
      "00000000010000000400000000000000fffffffffe5bfeff02a4bd5305d8a10908d83933487d9d2953a7ed73010000000400"
      "000000000000fffffffffe5bfeff02a4bd5305d8a10908d83933487d9d2953a7ed7301000000020000000100000000000000"
      "000000000000000000000000000000000000000000000000020000000100000000000000fffffffffe5bfeff02a4bd5305d8"
      "a10908d83933487d9d2953a7ed73030000000300000000000000000000000000000000000000000000000000000000000000"
      "0100000040000000000000002000000001000000fffffffffe5bfeff02a4bd5305d8a10908d83933487d9d2953a7ed730500"
      "0000010000000100000001000000050000000000000002000000030000002800000000000000000000000000000001000000"
      "00000000020000000000000003000000000000000400000000000000";
  Bytes b;
  for (const char* p = hex; p[0] && p[1]; p += 2) b.push_back((uint8_t)std::stoi(std::string(p, 2), nullptr, 16));
  return b;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// zkey

TEST(FormatsZkey, ReadsReferenceKeys) {
  REQUIRE_REFERENCE();
  for (const std::string& path : {kZkeyFast, kZkeyFinal}) {
    ZKey z = read_zkey(path);
    EXPECT_EQ(z.n_vars, 3972u);
    EXPECT_EQ(z.n_public, 2u);
    EXPECT_EQ(z.domain_size, 4096u);
    EXPECT_EQ(z.log_domain, 12);
    EXPECT_EQ(z.ic.size(), 3u);
    EXPECT_EQ(z.coefs.size(), (683808u - 4) / 44);
    EXPECT_EQ(z.c.size(), 3972u - 3);
    EXPECT_EQ(z.h.size(), 4096u);
    EXPECT_EQ(z.section_order.size(), 10u);
    // snarkjs adds one A row per public signal (and the constant) after the 3953 real constraints,
    // each with coefficient 1: a direct check of the value*R^2 decoding.
    size_t extra = 0;
    for (const ZKeyCoef& c : z.coefs)
      if (c.constraint >= 3953) {
        EXPECT_EQ(c.matrix, 0u);
        EXPECT_EQ(c.signal, c.constraint - 3953);
        EXPECT_TRUE(c.value.is_one());
        extra++;
      }
    EXPECT_EQ(extra, 3u);
    ZKeyHeader h = read_zkey_header(path);
    EXPECT_EQ(h.n_vars, 3972u);
    EXPECT_EQ(h.n_public, 2u);
    EXPECT_EQ(h.domain_size, 4096u);
    EXPECT_EQ(h.n_coefs, z.coefs.size());
  }
}

TEST(FormatsZkey, KnownToxicPointsDecodeToMultiplesOfTheGenerator) {
  REQUIRE_REFERENCE();
  ZKey z = read_zkey(kZkeyFast);
  Fr alpha = fr_dec("50871086508363696862449746441319131572572350054264276091269746430931772981158");
  Fr beta = fr_dec("5843049724357297340727203665631452960107045975843960960475286476195223967418");
  Fr gamma = fr_dec("24716880941926923550873080203932536588622529705403345556198197749675865840480");
  Fr delta = fr_dec("17098105737755239346478159092713835054396484224653679690870660611774373188259");
  G1 g1 = G1::from_affine(g1_generator());
  G2 g2 = G2::from_affine(g2_generator());
  EXPECT_EQ(z.alpha1, g1.mul(alpha.to_plain()).to_affine());
  EXPECT_EQ(z.beta1, g1.mul(beta.to_plain()).to_affine());
  EXPECT_EQ(z.beta2, g2.mul(beta.to_plain()).to_affine());
  EXPECT_EQ(z.gamma2, g2.mul(gamma.to_plain()).to_affine());
  EXPECT_EQ(z.delta1, g1.mul(delta.to_plain()).to_affine());
  EXPECT_EQ(z.delta2, g2.mul(delta.to_plain()).to_affine());
  size_t inf_a = 0, inf_b = 0;
  for (auto& p : z.a) inf_a += p.is_inf();
  for (auto& p : z.b2) inf_b += p.is_inf();
  EXPECT_EQ(inf_a, 32u);
  EXPECT_EQ(inf_b, 1409u);
}

TEST(FormatsZkey, RoundTripIsByteIdentical) {
  REQUIRE_REFERENCE();
  for (const std::string& path : {kZkeyFast, kZkeyFinal}) {
    ZKey z = read_zkey(path);
    std::string out = tmp("roundtrip.zkey");
    write_zkey(out, z);
    EXPECT_TRUE(slurp(out) == slurp(path)) << path;
  }
  // merkle_fast.zkey is in `snarkjs zkey new`'s section order with an empty contribution list,
  // which is exactly what write_zkey produces for a key built in memory.
  ZKey z = read_zkey(kZkeyFast);
  z.section_order.clear();
  z.section10.clear();
  write_zkey(tmp("default.zkey"), z);
  EXPECT_TRUE(slurp(tmp("default.zkey")) == slurp(kZkeyFast));
  // And in the ceremony's order 1..10 the other key's points go out unchanged.
  ZKey f = read_zkey(kZkeyFinal);
  EXPECT_EQ(f.section_order, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(z.section_order.size(), 0u);
}

TEST(FormatsZkey, TinyKeyRoundTrip) {
  ZKey z = tiny_zkey();
  write_zkey(tmp("tiny.zkey"), z);
  ZKey r = read_zkey(tmp("tiny.zkey"));
  EXPECT_EQ(r.n_vars, 4u);
  EXPECT_EQ(r.log_domain, 2);
  ASSERT_EQ(r.coefs.size(), z.coefs.size());
  for (size_t i = 0; i < z.coefs.size(); i++) {
    EXPECT_EQ(r.coefs[i].value, z.coefs[i].value);
    EXPECT_EQ(r.coefs[i].signal, z.coefs[i].signal);
  }
  EXPECT_EQ(r.a, z.a);
  EXPECT_EQ(r.b2, z.b2);
  EXPECT_EQ(r.h, z.h);
  EXPECT_EQ(r.delta2, z.delta2);
  EXPECT_EQ(r.section10, Bytes(68, 0));
  // A key without section 10 (snarkjs's writeZKey writes 9 sections) is accepted and kept so.
  r.section_order = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  write_zkey(tmp("tiny9.zkey"), r);
  ZKey r9 = read_zkey(tmp("tiny9.zkey"));
  EXPECT_TRUE(r9.section10.empty());
  EXPECT_EQ(r9.section_order.size(), 9u);
  // Inconsistent in-memory keys are refused, not written.
  ZKey bad = tiny_zkey();
  bad.h.assign(bad.h.begin(), bad.h.end() - 1);
  EXPECT_THROW(write_zkey(tmp("bad.zkey"), bad), std::invalid_argument);
  EXPECT_FALSE(fs::exists(tmp("bad.zkey")));
}

namespace {

// Writes a corrupted copy of merkle_fast.zkey and checks the reader's message.
void zkey_case(const std::string& name, const std::function<void(Container&)>& corrupt,
               std::initializer_list<std::string> needles) {
  static const Bytes base = slurp(kZkeyFast);
  Container c = Container::parse(base);
  corrupt(c);
  std::string path = tmp(name);
  spit(path, c.serialize());
  SCOPED_TRACE(name);
  expect_format_error([&] { read_zkey(path); }, needles);
  // Points used in place from the mapped file are checked exactly like copied ones, also when the
  // checks run in the background (the error then comes from the wait).
  expect_format_error([&] { read_zkey(path, ZKeyMemory::MapFile); }, needles);
  expect_format_error(
      [&] {
        ZKey z = read_zkey(path, ZKeyMemory::MapFileBackground);
        wait_points_checked(z);
      },
      needles);
}

}  // namespace

// A key read with its point sections used in place from the mapping equals the copied one, and
// stays valid after the file is gone (the arrays keep the mapping alive).
TEST(FormatsZkey, MappedPointsEqualCopiedPoints) {
  REQUIRE_REFERENCE();
  std::string path = tmp("mapped.zkey");
  spit(path, slurp(kZkeyFast));
  ZKey copied = read_zkey(path);
  ZKey mapped = read_zkey(path, ZKeyMemory::MapFile);
  ZKey background = read_zkey(path, ZKeyMemory::MapFileBackground);
  fs::remove(path);
  wait_points_checked(background);
  EXPECT_EQ(background.b1, copied.b1);  // a copied section (offset 4 mod 8 in this file)
  EXPECT_EQ(background.b2, copied.b2);  // a viewed one
  EXPECT_EQ(background.h, copied.h);
  EXPECT_EQ(mapped.a, copied.a);
  EXPECT_EQ(mapped.b1, copied.b1);
  EXPECT_EQ(mapped.b2, copied.b2);
  EXPECT_EQ(mapped.c, copied.c);
  EXPECT_EQ(mapped.h, copied.h);
  EXPECT_EQ(mapped.ic, copied.ic);
  ZKey moved = std::move(mapped);
  ZKey shared = moved;  // copies share the storage
  EXPECT_EQ(shared.b2.data(), moved.b2.data());
  EXPECT_EQ(shared.h, copied.h);
}

TEST(FormatsZkey, RejectsTruncatedFiles) {
  REQUIRE_REFERENCE();
  Bytes b = slurp(kZkeyFast);
  for (size_t len : {size_t(0), size_t(3), size_t(11), size_t(12), size_t(20), size_t(30), size_t(500), size_t(1016),
                     size_t(1030), size_t(700000), b.size() / 2, b.size() - 70, b.size() - 1}) {
    std::string path = tmp("trunc.zkey");
    spit(path, Bytes(b.begin(), b.begin() + len));
    SCOPED_TRACE(len);
    expect_format_error([&] { read_zkey(path); }, {"trunc.zkey"});
    expect_format_error([&] { read_zkey_header(path); }, {"trunc.zkey"});
  }
  spit(tmp("t.zkey"), Bytes(b.begin(), b.begin() + 1030));
  expect_format_error([&] { read_zkey(tmp("t.zkey")); }, {"t.zkey: section 4: size", "extends past the end"});
  spit(tmp("t.zkey"), Bytes(b.begin(), b.begin() + 30));
  expect_format_error([&] { read_zkey(tmp("t.zkey")); }, {"t.zkey: section table", "truncated"});
  spit(tmp("t.zkey"), Bytes(b.begin(), b.begin() + 5));
  expect_format_error([&] { read_zkey(tmp("t.zkey")); }, {"t.zkey: header", "shorter"});
  expect_format_error([&] { read_zkey(tmp("does_not_exist.zkey")); }, {"does_not_exist.zkey: open"});
}

TEST(FormatsZkey, RejectsContainerErrors) {
  REQUIRE_REFERENCE();
  // Other first bytes are never quoted (the daemon must not show clients a byte of a file).
  zkey_case("magic.zkey", [](Container& c) { c.magic[0] = 'Z'; }, {"magic.zkey: header: bad magic: not a .zkey file"});
  zkey_case("wtns.zkey", [](Container& c) { std::memcpy(c.magic, "wtns", 4); },
            {"wtns.zkey: header: magic \"wtns\": this is a .wtns file, not a .zkey file"});
  zkey_case("version.zkey", [](Container& c) { c.version = 2; }, {"version.zkey: header: version 2"});
  zkey_case("dup.zkey", [](Container& c) { c.sections.push_back(c.sections[3]); }, {"dup.zkey: section", "appears twice"});
  zkey_case("missing.zkey", [](Container& c) { std::erase_if(c.sections, [](auto& s) { return s.first == 7; }); },
            {"missing.zkey: section 7 (B2): missing"});
  zkey_case("unknown.zkey", [](Container& c) { c.sections.push_back({11, Bytes(8)}); },
            {"unknown.zkey: section 11: unexpected section"});
  zkey_case("ic_size.zkey", [](Container& c) { c.sec(3).resize(c.sec(3).size() + 96); },
            {"ic_size.zkey: section 3 (IC): size mismatch"});
  zkey_case("b2_size.zkey", [](Container& c) { c.sec(7).resize(c.sec(7).size() - 1); },
            {"b2_size.zkey: section 7 (B2): size mismatch"});
  zkey_case("h_size.zkey", [](Container& c) { c.sec(9).resize(c.sec(9).size() - 96); },
            {"h_size.zkey: section 9 (H): size mismatch"});
  zkey_case("hdr_size.zkey", [](Container& c) { c.sec(2).push_back(0); }, {"hdr_size.zkey: section 2 (header)"});
  zkey_case("contrib.zkey", [](Container& c) { c.sec(10).resize(10); }, {"contrib.zkey: section 10 (contributions)"});
  zkey_case("protocol.zkey", [](Container& c) { put<uint32_t>(c.sec(1), 0, 2); },
            {"protocol.zkey: section 1 (protocol): protocol 2 (PLONK) is not supported"});
  // Trailing garbage after the last section.
  Bytes b = slurp(kZkeyFast);
  b.push_back(0);
  spit(tmp("trailing.zkey"), b);
  expect_format_error([&] { read_zkey(tmp("trailing.zkey")); }, {"trailing.zkey: trailing data: 1 bytes"});
  // A section size of 2^63 and a section count of 2^32-1 must not allocate anything.
  b = slurp(kZkeyFast);
  put<uint64_t>(b, 16, 1ull << 63);
  spit(tmp("huge.zkey"), b);
  expect_format_error([&] { read_zkey(tmp("huge.zkey")); }, {"huge.zkey: section 1: size 9223372036854775808 extends"});
  b = slurp(kZkeyFast);
  put<uint32_t>(b, 8, 0xffffffffu);
  spit(tmp("count.zkey"), b);
  expect_format_error([&] { read_zkey(tmp("count.zkey")); }, {"count.zkey: section table: the file ends after 10 of"});
}

TEST(FormatsZkey, RejectsBadHeaderValues) {
  REQUIRE_REFERENCE();
  // Section 2 layout: n8q @0, q @4, n8r @52, r @56, nVars @88, nPublic @92, domainSize @96, points @100.
  zkey_case("bn254.zkey",
            [](Container& c) {
              Bytes s(4 + 32 + 4 + 32 + 12 + 3 * 64 + 3 * 128);
              put<uint32_t>(s, 0, 32);
              put_limbs(s, 4, kBn254Q);
              put<uint32_t>(s, 36, 32);
              put_limbs(s, 40, kBn254R);
              c.sec(2) = s;
            },
            {"bn254.zkey: section 2 (header)", "BN254", "the file is for BN254, not BLS12-381"});
  zkey_case("q.zkey", [](Container& c) { c.sec(2)[10] ^= 1; }, {"q.zkey: section 2 (header)", "is the base field prime q of no supported curve"});
  zkey_case("r.zkey", [](Container& c) { put_limbs(c.sec(2), 56, FqParams::MOD); },
            {"r.zkey: section 2 (header)", "scalar field prime r"});
  zkey_case("dom.zkey", [](Container& c) { put<uint32_t>(c.sec(2), 96, 4095); },
            {"dom.zkey: section 2 (header): domainSize 4095 is not a power of two"});
  zkey_case("npub.zkey", [](Container& c) { put<uint32_t>(c.sec(2), 92, 5000); },
            {"npub.zkey: section 2 (header): nVars 3972 is smaller than nPublic + 1"});
  // An absurd nVars with a small file: rejected by the size check, never allocated.
  zkey_case("nvars.zkey", [](Container& c) { put<uint32_t>(c.sec(2), 88, 0xfffffff0u); },
            {"nvars.zkey: section 5 (A): size mismatch: 4294967280 G1 points"});
  zkey_case("alpha.zkey", [](Container& c) { c.sec(2)[100 + 50] ^= 1; },
            {"alpha.zkey: section 2 (header): alpha1 is not on the curve"});
  zkey_case("delta2.zkey", [](Container& c) { put_limbs(c.sec(2), 100 + 3 * 96 + 2 * 192 + 48, FqParams::MOD); },
            {"delta2.zkey: section 2 (header): delta2 has x.c1 not below the field modulus q"});
}

TEST(FormatsZkey, RejectsBadPointsAndCoefficients) {
  REQUIRE_REFERENCE();
  ZKey ref = read_zkey(kZkeyFast);
  size_t i12 = 12;
  while (ref.b2[i12].is_inf()) i12++;
  zkey_case("b2.zkey", [&](Container& c) { c.sec(7)[i12 * 192 + 100] ^= 4; },
            {"b2.zkey: section 7 (B2): point " + std::to_string(i12) + " is not on the curve"});
  zkey_case("a_q.zkey", [](Container& c) { put_limbs(c.sec(5), 5 * 96, FqParams::MOD); },
            {"a_q.zkey: section 5 (A): point 5 has x not below the field modulus q"});
  zkey_case("h_y.zkey", [](Container& c) { c.sec(9)[4000 * 96 + 95] = 0xff; },
            {"h_y.zkey: section 9 (H): point 4000 has y not below"});
  zkey_case("ic.zkey", [](Container& c) { c.sec(3)[96 + 7] ^= 0x10; }, {"ic.zkey: section 3 (IC): point 1 is not on the curve"});
  zkey_case("cc.zkey", [](Container& c) { c.sec(8)[100 * 96 + 3] ^= 0x10; }, {"cc.zkey: section 8 (C): point 100"});
  zkey_case("b1.zkey", [](Container& c) { c.sec(6)[3971 * 96 + 1] ^= 0x10; }, {"b1.zkey: section 6 (B1): point 3971"});
  // Section 4 entry i at 4 + 44 i: matrix, constraint, signal, value.
  zkey_case("signal.zkey", [](Container& c) { put<uint32_t>(c.sec(4), 4 + 44 * 7 + 8, 3972); },
            {"signal.zkey: section 4 (coefficients): coefficient 7 has signal 3972, not below nVars 3972"});
  zkey_case("matrix.zkey", [](Container& c) { put<uint32_t>(c.sec(4), 4 + 44 * 9, 2); },
            {"matrix.zkey: section 4 (coefficients): coefficient 9 has matrix 2"});
  zkey_case("constraint.zkey", [](Container& c) { put<uint32_t>(c.sec(4), 4 + 44 * 15000 + 4, 4096); },
            {"constraint.zkey: section 4 (coefficients): coefficient 15000 has constraint 4096, not below domainSize"});
  zkey_case("value.zkey", [](Container& c) { put_limbs(c.sec(4), 4 + 44 * 3 + 12, FrParams::MOD); },
            {"value.zkey: section 4 (coefficients): coefficient 3 has a value not below"});
  zkey_case("count.zkey", [](Container& c) { put<uint32_t>(c.sec(4), 0, 0x7fffffffu); },
            {"count.zkey: section 4 (coefficients): size mismatch"});
  // The first bad point is the one reported, however the work is split over threads.
  zkey_case("two.zkey",
            [](Container& c) {
              c.sec(9)[4090 * 96 + 3] ^= 1;
              c.sec(9)[17 * 96 + 3] ^= 1;
            },
            {"two.zkey: section 9 (H): point 17 "});
}

// Random byte flips in the header area (container header, sections 1 and 2, the next section
// headers) of the real key, and anywhere in a tiny key: every outcome is a parse or a FormatError.
TEST(FormatsZkey, FuzzedBytesParseOrThrowFormatError) {
  REQUIRE_REFERENCE();
  std::mt19937_64 rng = cuzk::test::test_rng();
  auto fuzz = [&](const Bytes& base, size_t region, const std::string& path, int rounds) {
    spit(path, base);
    int parsed = 0, rejected = 0;
    for (int it = 0; it < rounds; it++) {
      size_t off = rng() % region;
      uint8_t flip = (uint8_t)(1u << (rng() % 8));
      if (rng() % 4 == 0) flip = (uint8_t)(rng() | 1);
      {
        std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
        f.seekp((std::streamoff)off);
        char ch = (char)(base[off] ^ flip);
        f.write(&ch, 1);
      }
      try {
        read_zkey(path);
        parsed++;
      } catch (const FormatError&) {
        rejected++;
      }
      std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
      f.seekp((std::streamoff)off);
      f.write((const char*)&base[off], 1);
    }
    EXPECT_EQ(parsed + rejected, rounds);
    EXPECT_GT(rejected, rounds / 2);
  };
  fuzz(slurp(kZkeyFast), 1016 + 12 + 64, tmp("fuzz.zkey"), 200);
  write_zkey(tmp("tiny_base.zkey"), tiny_zkey());
  Bytes tiny = slurp(tmp("tiny_base.zkey"));
  fuzz(tiny, tiny.size(), tmp("fuzz_tiny.zkey"), 300);
}

// ------------------------------------------------------------------------------------------------
// wtns

TEST(FormatsWtns, ReadsAndRoundTripsReferenceWitnesses) {
  REQUIRE_REFERENCE();
  for (const std::string& path : {kCeremony + "/witness.wtns", kToxic + "/witness.wtns"}) {
    std::vector<Fr> w = read_wtns(path);
    ASSERT_EQ(w.size(), 3972u);
    EXPECT_TRUE(w[0].is_one());
    EXPECT_EQ(read_wtns_count(path), 3972u);
    write_wtns(tmp("w.wtns"), w);
    EXPECT_TRUE(slurp(tmp("w.wtns")) == slurp(path));
  }
  // Public signals are wires 1..nPublic.
  std::vector<Fr> w = read_wtns(kCeremony + "/witness.wtns");
  std::vector<Fr> pub = read_public_json(kCeremony + "/public.json");
  ASSERT_EQ(pub.size(), 2u);
  EXPECT_EQ(pub[0], w[1]);
  EXPECT_EQ(pub[1], w[2]);
}

// read_wtns and read_wtns_into reject every malformed witness with the same message.
TEST(FormatsWtns, RejectsMalformedWitnesses) {
  REQUIRE_REFERENCE();
  const Bytes base = slurp(kCeremony + "/witness.wtns");
  std::vector<Fr> dest(3972);
  auto both = [&](const std::string& name, std::initializer_list<std::string> needles) {
    SCOPED_TRACE(name);
    std::string msg;
    expect_format_error([&] { read_wtns(tmp(name)); }, needles);
    try {
      read_wtns(tmp(name));
    } catch (const FormatError& e) {
      msg = e.what();
    }
    expect_format_error([&] { read_wtns_into(tmp(name), dest.data(), dest.size()); }, {msg});
  };
  auto wcase = [&](const std::string& name, const std::function<void(Container&)>& corrupt,
                   std::initializer_list<std::string> needles) {
    Container c = Container::parse(base);
    corrupt(c);
    spit(tmp(name), c.serialize());
    both(name, needles);
  };
  wcase("prime.wtns", [](Container& c) { c.sec(1)[5] ^= 1; }, {"prime.wtns: section 1 (header)", "prime"});
  wcase("bn.wtns", [](Container& c) { put_limbs(c.sec(1), 4, kBn254R); }, {"bn.wtns: section 1 (header)", "BN254", "the file is for BN254, not BLS12-381"});
  wcase("n8.wtns", [](Container& c) { put<uint32_t>(c.sec(1), 0, 48); }, {"n8.wtns: section 1 (header)"});
  wcase("value.wtns", [](Container& c) { put_limbs(c.sec(2), 3 * 32, FrParams::MOD); },
        {"value.wtns: section 2 (witness): value 3 is not below"});
  // Two bad values in different blocks of read_wtns_into: the first is named whatever the thread timing.
  wcase("values.wtns",
        [](Container& c) {
          put_limbs(c.sec(2), 3000 * 32, FrParams::MOD);
          put_limbs(c.sec(2), 10 * 32, FrParams::MOD);
        },
        {"values.wtns: section 2 (witness): value 10 is not below"});
  wcase("count.wtns", [](Container& c) { put<uint32_t>(c.sec(1), 36, 3973); },
        {"count.wtns: section 2 (witness): size mismatch: 3973 values"});
  wcase("huge.wtns", [](Container& c) { put<uint32_t>(c.sec(1), 36, 0xffffffffu); }, {"huge.wtns: section 2 (witness): size mismatch"});
  wcase("version.wtns", [](Container& c) { c.version = 1; }, {"version.wtns: header: version 1"});
  wcase("magic.wtns", [](Container& c) { std::memcpy(c.magic, "zkey", 4); }, {"magic.wtns: header: magic"});
  wcase("extra.wtns", [](Container& c) { c.sections.push_back({3, Bytes(4)}); }, {"extra.wtns: section 3: unexpected"});
  wcase("nohdr.wtns", [](Container& c) { c.sections.erase(c.sections.begin()); }, {"nohdr.wtns: section 1 (header): missing"});
  for (size_t len : {size_t(0), size_t(10), size_t(40), size_t(80), base.size() / 2, base.size() - 1}) {
    spit(tmp("short.wtns"), Bytes(base.begin(), base.begin() + len));
    both("short.wtns", {"short.wtns"});
    expect_format_error([&] { read_wtns_count(tmp("short.wtns")); }, {"short.wtns"});
  }
  // Cut inside the values: the section table says so before any value is read.
  spit(tmp("cut.wtns"), Bytes(base.begin(), base.end() - 32 * 100));
  both("cut.wtns", {"cut.wtns: section 2: size", "extends past the end of the file"});
  // Only read_wtns_into is told how many values to expect; a directory is never a witness.
  spit(tmp("ok.wtns"), base);
  expect_format_error([&] { read_wtns_into(tmp("ok.wtns"), dest.data(), dest.size() - 1); },
                      {"ok.wtns: section 1 (header): nWitness is 3972 but 3971 values were expected"});
  expect_format_error([&] { read_wtns_into(tmp("missing.wtns"), dest.data(), dest.size()); }, {"missing.wtns: open"});
  expect_format_error([&] { read_wtns_into(tmpdir(), dest.data(), dest.size()); }, {"is a directory"});
}

// read_wtns_into gives the values read_wtns gives, wherever the block boundaries fall (one thread,
// and as many threads as there are blocks and more), and writes nothing past n values.
TEST(FormatsWtns, ReadIntoMatchesReadWtns) {
  REQUIRE_REFERENCE();
  for (const std::string& path : {kCeremony + "/witness.wtns", kToxic + "/witness.wtns"}) {
    const std::vector<Fr> want = read_wtns(path);
    for (size_t threads : {size_t(1), size_t(3), size_t(16)}) {
      SCOPED_TRACE(path + ", threads " + std::to_string(threads));
      const size_t before = thread_count();
      set_thread_count(threads);
      std::vector<Fr> got(want.size() + 1, Fr::from_u64(7));
      read_wtns_into(path, got.data(), want.size());
      set_thread_count(before);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin()));
      EXPECT_EQ(got.back(), Fr::from_u64(7));
    }
  }
  // A larger witness than the fixtures, so that there are several 4096-value blocks and a partial one.
  std::vector<Fr> big(3 * 4096 + 5);
  for (size_t i = 0; i < big.size(); i++) big[i] = Fr::from_u64(i * i + 1);
  write_wtns(tmp("big.wtns"), big);
  std::vector<Fr> got(big.size());
  read_wtns_into(tmp("big.wtns"), got.data(), big.size());
  EXPECT_EQ(got, big);
}

// A file that ends before the bytes asked for (one that shrank after its header was checked) is an
// error naming the file, not a crash.
TEST(FormatsWtns, PreadPastTheEndNamesTheFile) {
  spit(tmp("ten.bin"), Bytes(10, 1));
  binfile::PreadFile f(tmp("ten.bin"));
  uint8_t buf[32];
  f.read_at(2, 8, buf, "somewhere");
  expect_format_error([&] { f.read_at(4, 32, buf, "section 2 (witness)"); },
                      {"ten.bin: section 2 (witness): the file ends at byte 10", "truncated while it was read"});
}

// ------------------------------------------------------------------------------------------------
// r1cs

TEST(FormatsR1cs, ReadsCircomOutputAndRoundTrips) {
  Bytes file = circom_r1cs();
  spit(tmp("t.r1cs"), file);
  R1cs r = read_r1cs(tmp("t.r1cs"));
  EXPECT_EQ(r.n_wires, 5u);
  EXPECT_EQ(r.n_pub_out, 1u);
  EXPECT_EQ(r.n_pub_in, 1u);
  EXPECT_EQ(r.n_prv_in, 1u);
  EXPECT_EQ(r.n_labels, 5u);
  EXPECT_EQ(r.n_public(), 2u);
  ASSERT_EQ(r.constraints.size(), 2u);
  // -a * b = -t  (wires: 0 one, 1 c, 2 a, 3 b, 4 t)
  ASSERT_EQ(r.constraints[0].a.size(), 1u);
  EXPECT_EQ(r.constraints[0].a[0].wire, 2u);
  EXPECT_EQ(r.constraints[0].a[0].coeff, Fr::zero() - Fr::one());
  EXPECT_EQ(r.constraints[0].b[0].wire, 3u);
  EXPECT_TRUE(r.constraints[0].b[0].coeff.is_one());
  EXPECT_EQ(r.constraints[0].c[0].wire, 4u);
  EXPECT_EQ(r.wire_labels, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  write_r1cs(tmp("t2.r1cs"), r);
  EXPECT_TRUE(slurp(tmp("t2.r1cs")) == file);

  // Without a label map, write_r1cs leaves out section 3, and the result reads back the same.
  R1cs g;
  g.n_wires = 4;
  g.n_pub_out = 1;
  g.n_prv_in = 1;
  g.constraints.push_back({{{1, Fr::from_u64(5)}, {0, Fr::one()}}, {{2, Fr::one()}}, {{3, Fr::zero() - Fr::from_u64(2)}}});
  g.constraints.push_back({{}, {}, {}});
  write_r1cs(tmp("g.r1cs"), g);
  R1cs h = read_r1cs(tmp("g.r1cs"));
  EXPECT_TRUE(h.wire_labels.empty());
  ASSERT_EQ(h.constraints.size(), 2u);
  EXPECT_EQ(h.constraints[0].a[0].coeff, Fr::from_u64(5));
  EXPECT_EQ(h.constraints[0].c[0].coeff, Fr::zero() - Fr::from_u64(2));
  EXPECT_TRUE(h.constraints[1].a.empty());
}

// circom drops the private inputs that no constraint uses (--O1, --O2), with their wires, and still
// counts them in nPrvIn: nWires may be below 1 + nPubOut + nPubIn + nPrvIn. snarkjs sets such a
// circuit up and proves it; so does cuzk.
TEST(FormatsR1cs, ReadsACircuitWhoseUnusedPrivateInputsWereDropped) {
  Container c = Container::parse(circom_r1cs());
  put<uint32_t>(c.sec(1), 48, 7);  // nPrvIn: 7 declared, one wire left (5 < 1 + 1 + 1 + 7)
  spit(tmp("dropped.r1cs"), c.serialize());
  R1cs r = read_r1cs(tmp("dropped.r1cs"));
  EXPECT_EQ(r.n_wires, 5u);
  EXPECT_EQ(r.n_prv_in, 7u);
  EXPECT_EQ(r.constraints.size(), 2u);
  const R1csHeader h = read_r1cs_header(tmp("dropped.r1cs"));
  EXPECT_EQ(h.n_wires, 5u);
  EXPECT_EQ(h.n_prv_in, 7u);
  write_r1cs(tmp("dropped2.r1cs"), r);
  EXPECT_TRUE(slurp(tmp("dropped2.r1cs")) == c.serialize());
}

TEST(FormatsR1cs, RejectsMalformedCircuits) {
  const Bytes base = circom_r1cs();
  auto rcase = [&](const std::string& name, const std::function<void(Container&)>& corrupt,
                   std::initializer_list<std::string> needles) {
    Container c = Container::parse(base);
    corrupt(c);
    spit(tmp(name), c.serialize());
    SCOPED_TRACE(name);
    expect_format_error([&] { read_r1cs(tmp(name)); }, needles);
  };
  // Section 1: n8 @0, prime @4, nWires @36, nPubOut @40, nPubIn @44, nPrvIn @48, nLabels @52, nConstraints @60.
  // Section 2, constraint 0: nA @0, wire @4, coeff @8, nB @40, ...
  rcase("wire.r1cs", [](Container& c) { put<uint32_t>(c.sec(2), 4, 5); },
        {"wire.r1cs: section 2 (constraints): constraint 0: A term 0: wire 5 is not below nWires 5"});
  rcase("coef.r1cs", [](Container& c) { put_limbs(c.sec(2), 8, FrParams::MOD); },
        {"coef.r1cs: section 2 (constraints): constraint 0: A term 0: coefficient is not below r"});
  rcase("terms.r1cs", [](Container& c) { put<uint32_t>(c.sec(2), 0, 0x40000000u); },
        {"terms.r1cs: section 2 (constraints): constraint 0: A has 1073741824 terms"});
  rcase("ncons.r1cs", [](Container& c) { put<uint32_t>(c.sec(1), 60, 0xffffffffu); },
        {"ncons.r1cs: section 2 (constraints): 4294967295 constraints need at least"});
  rcase("ncons3.r1cs", [](Container& c) { put<uint32_t>(c.sec(1), 60, 3); }, {"ncons3.r1cs: section 2 (constraints)"});
  rcase("ncons1.r1cs", [](Container& c) { put<uint32_t>(c.sec(1), 60, 1); },
        {"ncons1.r1cs: section 2 (constraints): size mismatch"});
  rcase("prime.r1cs", [](Container& c) { put_limbs(c.sec(1), 4, kBn254R); }, {"prime.r1cs: section 1 (header)", "BN254"});
  rcase("wires.r1cs", [](Container& c) { put<uint32_t>(c.sec(1), 36, 2); },
        {"wires.r1cs: section 1 (header): nWires 2 is smaller than 1 + nPubOut + nPubIn = 3"});
  rcase("labels.r1cs", [](Container& c) { c.sec(3).resize(32); }, {"labels.r1cs: section 3 (wire labels): size mismatch"});
  rcase("label.r1cs", [](Container& c) { put<uint64_t>(c.sec(3), 8, 5); },
        {"label.r1cs: section 3 (wire labels): wire 1 has label 5, not below nLabels 5"});
  rcase("gates.r1cs", [](Container& c) { c.sections.push_back({4, Bytes(4)}); }, {"gates.r1cs: section 4", "custom gates"});
  rcase("other.r1cs", [](Container& c) { c.sections.push_back({9, Bytes(4)}); }, {"other.r1cs: section 9: unexpected"});
  rcase("nohdr.r1cs", [](Container& c) { c.sections.erase(c.sections.begin() + 1); }, {"nohdr.r1cs: section 1 (header): missing"});
  rcase("hdr.r1cs", [](Container& c) { c.sec(1).push_back(0); }, {"hdr.r1cs: section 1 (header): size mismatch"});
  for (size_t len = 0; len < base.size(); len += 7) {
    spit(tmp("short.r1cs"), Bytes(base.begin(), base.begin() + len));
    expect_format_error([&] { read_r1cs(tmp("short.r1cs")); }, {"short.r1cs"});
  }
}

// ------------------------------------------------------------------------------------------------
// JSON

TEST(FormatsJson, ReferenceFilesRoundTripByteForByte) {
  REQUIRE_REFERENCE();
  for (const std::string& dir : {kCeremony, kToxic + "/det_r0_s0", kToxic + "/det_r7_s11"}) {
    Proof p = read_proof_json(dir + "/proof.json");
    write_proof_json(tmp("proof.json"), p);
    EXPECT_EQ(slurp_text(tmp("proof.json")), slurp_text(dir + "/proof.json")) << dir;
    std::vector<Fr> pub = read_public_json(dir + "/public.json");
    write_public_json(tmp("public.json"), pub);
    EXPECT_EQ(slurp_text(tmp("public.json")), slurp_text(dir + "/public.json")) << dir;
  }
  for (const auto& [zkey, vkp] : {std::pair{kZkeyFinal, kCeremony + "/verification_key.json"},
                                  std::pair{kZkeyFast, kToxic + "/verification_key.json"}}) {
    VerificationKey vk = read_vk_json(vkp);
    VerificationKey from_key = vk_from_zkey(read_zkey(zkey));
    EXPECT_EQ(vk.n_public, 2u);
    EXPECT_EQ(vk.alpha1, from_key.alpha1);
    EXPECT_EQ(vk.beta2, from_key.beta2);
    EXPECT_EQ(vk.gamma2, from_key.gamma2);
    EXPECT_EQ(vk.delta2, from_key.delta2);
    EXPECT_EQ(vk.ic, from_key.ic);
    // Includes vk_alphabeta_12 = e(alpha1, beta2), which must match snarkjs's exactly.
    write_vk_json(tmp("vk.json"), from_key);
    EXPECT_EQ(slurp_text(tmp("vk.json")), slurp_text(vkp)) << vkp;
  }
}

// A number literal too large for a double (1e400) is valid JSON syntax that the parser cannot hold;
// it used to escape the readers as nlohmann's out_of_range instead of a FormatError.
TEST(FormatsJson, OutOfRangeNumbersAreFormatErrors) {
  const std::string f = tmp("huge.json");
  for (const char* text : {"[\"1\", 1e400]", "{\"protocol\": \"groth16\", \"nPublic\": 1e400}",
                           "{\"pi_a\": [-1e99999, \"1\", \"1\"]}"}) {
    std::ofstream(f) << text;
    EXPECT_THROW(read_public_json(f), FormatError) << text;
    EXPECT_THROW(read_vk_json(f), FormatError) << text;
    EXPECT_THROW(read_proof_json(f), FormatError) << text;
    try {
      read_vk_json(f);
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(f + ": JSON syntax: "), std::string::npos) << e.what();
    }
  }
}

TEST(FormatsJson, InfinityAndProjectivePoints) {
  Proof p{G1Affine::infinity(), g2_generator(), G1Affine::infinity()};
  write_proof_json(tmp("inf.json"), p);
  std::string text = slurp_text(tmp("inf.json"));
  EXPECT_NE(text.find("\"pi_a\": [\n  \"0\",\n  \"1\",\n  \"0\"\n ]"), std::string::npos) << text;
  Proof q = read_proof_json(tmp("inf.json"));
  EXPECT_TRUE(q.a.is_inf());
  EXPECT_EQ(q.b, g2_generator());
  // A Jacobian z other than 1 means (x/z^2, y/z^3), as in ffjavascript.
  G1 g = G1::from_affine(g1_generator());
  Fq z = Fq::from_u64(7), z2 = z.sqr();
  G1Affine a = g1_generator();
  std::string proof = R"({"pi_a":[")" + field_to_decimal(a.x * z2) + R"(",")" + field_to_decimal(a.y * z2 * z) +
                      R"(","7"],"pi_b":[[")" + field_to_decimal(g2_generator().x.c0) + R"(",")" +
                      field_to_decimal(g2_generator().x.c1) + R"("],[")" + field_to_decimal(g2_generator().y.c0) +
                      R"(",")" + field_to_decimal(g2_generator().y.c1) +
                      R"("],["1","0"]],"pi_c":[")" + field_to_decimal(a.x) + R"(",")" + field_to_decimal(a.y) +
                      R"("],"protocol":"groth16","curve":"bls12381"})";
  spit(tmp("proj.json"), proof);
  Proof r = read_proof_json(tmp("proj.json"));
  EXPECT_EQ(r.a, g.to_affine());
  EXPECT_EQ(r.c, a);
  std::vector<Fr> none;
  write_public_json(tmp("empty.json"), none);
  EXPECT_EQ(slurp_text(tmp("empty.json")), "[]");
  EXPECT_TRUE(read_public_json(tmp("empty.json")).empty());
}

TEST(FormatsJson, RejectsMalformedJson) {
  REQUIRE_REFERENCE();
  nlohmann::json proof = nlohmann::json::parse(slurp_text(kCeremony + "/proof.json"));
  nlohmann::json vk = nlohmann::json::parse(slurp_text(kCeremony + "/verification_key.json"));
  const std::string q = "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787";
  auto pcase = [&](const std::string& name, const std::function<void(nlohmann::json&)>& corrupt,
                   std::initializer_list<std::string> needles) {
    nlohmann::json j = proof;
    corrupt(j);
    spit(tmp(name), j.dump(1));
    SCOPED_TRACE(name);
    expect_format_error([&] { read_proof_json(tmp(name)); }, needles);
  };
  pcase("p1.json", [](auto& j) { j["pi_b"][1][0] = 123; }, {"p1.json: pi_b[1][0]: not a decimal string"});
  pcase("p2.json", [](auto& j) { j["pi_b"][1][0] = "0x12"; }, {"p2.json: pi_b[1][0]: not a decimal string"});
  pcase("p3.json", [](auto& j) { j["pi_a"][0] = "-5"; }, {"p3.json: pi_a[0]: not a decimal string"});
  pcase("p4.json", [&](auto& j) { j["pi_c"][1] = q; }, {"p4.json: pi_c[1]: value is not below the field modulus q"});
  pcase("p5.json", [&](auto& j) { j["pi_c"][1] = q + "0000"; }, {"p5.json: pi_c[1]: value is not below"});
  pcase("p6.json", [](auto& j) { j["pi_a"][0] = "5"; }, {"p6.json: pi_a: point is not on the curve"});
  pcase("p7.json", [](auto& j) { j["pi_b"][0][1] = "5"; }, {"p7.json: pi_b: point is not on the curve"});
  pcase("p8.json", [](auto& j) { j.erase("pi_c"); }, {"p8.json: pi_c: missing"});
  pcase("p9.json", [](auto& j) { j["pi_b"][2] = nlohmann::json::array({"1"}); }, {"p9.json: pi_b[2]: has 1 entries, expected 2"});
  pcase("p10.json", [](auto& j) { j["pi_a"] = "x"; }, {"p10.json: pi_a: not an array"});
  pcase("p11.json", [](auto& j) { j["protocol"] = "plonk"; }, {"p11.json: protocol: is \"plonk\", expected \"groth16\""});
  pcase("p12.json", [](auto& j) { j["curve"] = "bn128"; }, {"p12.json: curve: is \"bn128\"", "expected \"bls12381\" (BLS12-381)"});
  pcase("p13.json", [](auto& j) { j = nlohmann::json::array(); }, {"p13.json: top level: not a JSON object"});
  pcase("p14.json", [](auto& j) { j["pi_a"][0] = ""; }, {"p14.json: pi_a[0]: not a decimal string"});
  spit(tmp("syntax.json"), std::string("{\"pi_a\": [\"1\", "));
  expect_format_error([&] { read_proof_json(tmp("syntax.json")); }, {"syntax.json: JSON syntax"});
  expect_format_error([&] { read_proof_json(tmp("nope.json")); }, {"nope.json: open"});

  spit(tmp("pub1.json"), std::string("{\"a\": 1}"));
  expect_format_error([&] { read_public_json(tmp("pub1.json")); }, {"pub1.json: top level: not a JSON array"});
  spit(tmp("pub2.json"), std::string(R"(["1", 2])"));
  expect_format_error([&] { read_public_json(tmp("pub2.json")); }, {"pub2.json: [1]: not a decimal string"});
  spit(tmp("pub3.json"), std::string(R"(["52435875175126190479447740508185965837690552500527637822603658699938581184513"])"));
  expect_format_error([&] { read_public_json(tmp("pub3.json")); }, {"pub3.json: [0]: value is not below the field modulus r"});

  auto vcase = [&](const std::string& name, const std::function<void(nlohmann::json&)>& corrupt,
                   std::initializer_list<std::string> needles) {
    nlohmann::json j = vk;
    corrupt(j);
    spit(tmp(name), j.dump(1));
    SCOPED_TRACE(name);
    expect_format_error([&] { read_vk_json(tmp(name)); }, needles);
  };
  vcase("v1.json", [](auto& j) { j["nPublic"] = 3; }, {"v1.json: IC: has 3 points, expected nPublic + 1 = 4"});
  vcase("v2.json", [](auto& j) { j["nPublic"] = "2"; }, {"v2.json: nPublic: not a non-negative integer"});
  vcase("v3.json", [](auto& j) { j["nPublic"] = -1; }, {"v3.json: nPublic"});
  vcase("v4.json", [](auto& j) { j["IC"][2][1] = "7"; }, {"v4.json: IC[2]: point is not on the curve"});
  vcase("v5.json", [](auto& j) { j["vk_gamma_2"][1] = "7"; }, {"v5.json: vk_gamma_2[1]: not an array"});
  vcase("v6.json", [](auto& j) { j["vk_alphabeta_12"][1][2][0] = "x"; }, {"v6.json: vk_alphabeta_12[1][2][0]: not a decimal"});
  vcase("v7.json", [](auto& j) { j["vk_alphabeta_12"][0].erase(1); }, {"v7.json: vk_alphabeta_12[0]: has 2 entries"});
  vcase("v8.json", [](auto& j) { j.erase("vk_delta_2"); }, {"v8.json: vk_delta_2: missing"});
  vcase("v9.json", [](auto& j) { j["curve"] = "bn128"; }, {"v9.json: curve"});
}

// A FIFO where a witness was expected (swapped in after submission, say) is refused at once: the
// open never waits for a writer, and the readers never block on it.
TEST(FormatsWtns, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = ::testing::TempDir() + "/cuzk_fifo_" + std::to_string(::getpid()) + ".wtns";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<Fr> dest(4);
  expect_format_error([&] { read_wtns_into(fifo, dest.data(), dest.size()); }, {fifo, "is not a regular file"});
  expect_format_error([&] { read_wtns_count(fifo); }, {fifo});
  ::unlink(fifo.c_str());
}

// ZKeyMemory::ForDevice, the GPU worker's read for the cuda backend: the point sections copied as
// they are (the device checks them where they are uploaded), no coefficients (the matrices come from
// the evaluator cache), everything else checked as always.
TEST(FormatsZkey, ForDeviceLeavesThePointChecksToTheDevice) {
  REQUIRE_REFERENCE();
  std::string path = tmp("for_device.zkey");
  spit(path, slurp(kZkeyFast));
  ZKey copied = read_zkey(path);
  ZKey dev = read_zkey(path, ZKeyMemory::ForDevice);
  EXPECT_EQ(dev.a, copied.a);
  EXPECT_EQ(dev.b1, copied.b1);
  EXPECT_EQ(dev.b2, copied.b2);
  EXPECT_EQ(dev.c, copied.c);
  EXPECT_EQ(dev.h, copied.h);
  EXPECT_EQ(dev.ic, copied.ic);
  EXPECT_EQ(dev.delta2, copied.delta2);
  EXPECT_TRUE(dev.coefs.empty());
  EXPECT_EQ(dev.points_unchecked, path);
  EXPECT_TRUE(copied.points_unchecked.empty());
  // No host consumer may take such points for checked ones.
  EXPECT_THROW(wait_points_checked(dev), std::logic_error);
  EXPECT_NO_THROW(wait_points_checked(copied));
  // A point off the curve reads (the device finds it); the header's and IC's points, the container
  // and the sizes are still checked here.
  Container c = Container::parse(slurp(kZkeyFast));
  c.sec(7)[12 * 192 + 100] ^= 4;
  spit(tmp("dev_b2.zkey"), c.serialize());
  EXPECT_NO_THROW(read_zkey(tmp("dev_b2.zkey"), ZKeyMemory::ForDevice));
  expect_format_error([&] { read_zkey(tmp("dev_b2.zkey")); }, {"dev_b2.zkey: section 7 (B2): point"});
  c = Container::parse(slurp(kZkeyFast));
  c.sec(2)[100 + 50] ^= 1;
  spit(tmp("dev_alpha.zkey"), c.serialize());
  expect_format_error([&] { read_zkey(tmp("dev_alpha.zkey"), ZKeyMemory::ForDevice); },
                      {"dev_alpha.zkey: section 2 (header): alpha1 is not on the curve"});
  c = Container::parse(slurp(kZkeyFast));
  c.sec(3)[96 + 7] ^= 0x10;
  spit(tmp("dev_ic.zkey"), c.serialize());
  expect_format_error([&] { read_zkey(tmp("dev_ic.zkey"), ZKeyMemory::ForDevice); },
                      {"dev_ic.zkey: section 3 (IC): point 1 is not on the curve"});
  c = Container::parse(slurp(kZkeyFast));
  c.sec(9).resize(c.sec(9).size() - 96);
  spit(tmp("dev_h.zkey"), c.serialize());
  expect_format_error([&] { read_zkey(tmp("dev_h.zkey"), ZKeyMemory::ForDevice); },
                      {"dev_h.zkey: section 9 (H): size mismatch"});
}
