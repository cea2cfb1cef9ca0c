// The constraint evaluator cached on disk (ConstraintEvaluator::open_cached): the same a, b, c as
// the evaluator compiled in memory; every damaged, foreign or stale file rebuilt, never used; one
// file when several processes build at once; memory of its own where no cache can be written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "groth16/csr_image.hpp"
#include "groth16/formats.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
namespace fs = std::filesystem;
using Outcome = EvaluatorCacheReport::Outcome;

namespace {

// A scratch directory per test.
class EvaluatorCache : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("cuzk_evcache_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string cache_dir() const { return path("cache"); }
  fs::path dir_;
};

// A zkey of random sparse A and B (empty rows, coefficients of one, several terms per row) with
// placeholder points: synthesis reads only the header and the coefficients.
ZKey random_zkey(uint64_t seed, uint32_t domain = 1 << 10, uint32_t n_vars = 700) {
  std::mt19937_64 rng(seed);
  ZKey zk;
  zk.n_vars = n_vars;
  zk.n_public = 2;
  zk.domain_size = domain;
  zk.log_domain = std::countr_zero(domain);
  zk.ic.assign(zk.n_public + 1, G1Affine{});
  std::vector<ZKeyCoef> coefs;
  for (uint32_t row = 0; row < domain; row++)
    for (uint32_t m = 0; m < 2; m++)
      for (uint64_t k = rng() % 4; k > 0; k--)
        coefs.push_back({m, row, uint32_t(rng() % n_vars), rng() % 3 == 0 ? Fr::one() : random_fr(rng)});
  std::shuffle(coefs.begin(), coefs.end(), rng);
  zk.coefs.assign(coefs.begin(), coefs.end());
  zk.a.assign(n_vars, G1Affine{});
  zk.b1.assign(n_vars, G1Affine{});
  zk.b2.assign(n_vars, G2Affine{});
  zk.c.assign(n_vars - zk.n_public - 1, G1Affine{});
  zk.h.assign(domain, G1Affine{});
  return zk;
}

std::vector<Fr> random_witness(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> w(n);
  for (auto& x : w) x = random_fr(rng);
  w[0] = Fr::one();
  return w;
}

// Requires ev to give exactly the a, b, c of the evaluator compiled in memory from the zkey file.
void expect_same_as_compiled(const ConstraintEvaluator& ev, const std::string& zkey_path) {
  const ConstraintEvaluator ref = ConstraintEvaluator::compile(read_zkey_coefficients(zkey_path));
  ASSERT_EQ(ev.n_rows, ref.n_rows);
  ASSERT_EQ(ev.n_vars, ref.n_vars);
  const std::vector<Fr> w = random_witness(ref.n_vars, ref.n_rows);
  std::vector<Fr> a1, b1, c1, a2, b2, c2;
  ref.evaluate(w, a1, b1, c1);
  ev.evaluate(w, a2, b2, c2);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
  EXPECT_EQ(c1, c2);
}

using Bytes = std::vector<uint8_t>;
Bytes slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}
void spit(const std::string& p, const Bytes& b) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write((const char*)b.data(), (std::streamsize)b.size());
}

size_t temporaries_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

}  // namespace

TEST_F(EvaluatorCache, RoundTripGivesTheCompiledEvaluatorsResults) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed()));
  EvaluatorCacheReport rep;
  ConstraintEvaluator ev = ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Built);
  EXPECT_EQ(rep.reason, "no cache file yet");
  EXPECT_EQ(fs::path(rep.path).parent_path(), fs::path(cache_dir()));
  EXPECT_TRUE(rep.path.ends_with(".csr"));
  EXPECT_EQ(fs::path(rep.path).filename().string().rfind("k-", 0), 0u) << rep.path;
  EXPECT_EQ(rep.zkey.n_vars, 700u);
  EXPECT_EQ(rep.zkey.n_public, 2u);
  EXPECT_EQ(rep.zkey.domain_size, 1u << 10);
  expect_same_as_compiled(ev, path("k.zkey"));
  EXPECT_EQ(temporaries_in(cache_dir()), 0u);

  ConstraintEvaluator again = ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Hit);
  EXPECT_EQ(rep.reason, "");
  expect_same_as_compiled(again, path("k.zkey"));
  // The mapping stays valid without the file: a rebuild renames a new file over it.
  fs::remove(rep.path);
  expect_same_as_compiled(again, path("k.zkey"));

  // The in-memory form is laid out the same way, byte for byte apart from the zkey digest.
  ConstraintEvaluator mem = ConstraintEvaluator::compile(read_zkey_coefficients(path("k.zkey")));
  ASSERT_EQ(mem.a_val.size(), again.a_val.size());
  EXPECT_EQ(std::memcmp(mem.a_col.data(), again.a_col.data(), mem.a_col.size_bytes()), 0);
  EXPECT_EQ(std::memcmp(mem.b_val.data(), again.b_val.data(), mem.b_val.size_bytes()), 0);
}

// Each damage to the file is found, named in the report, and repaired by a rebuild.
TEST_F(EvaluatorCache, DamagedFilesAreRebuiltNeverUsed) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed()));
  EvaluatorCacheReport rep;
  ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  const std::string file = rep.path;
  const Bytes good = slurp(file);
  const auto hdr = [&] {
    csr_image::Header h;
    std::memcpy(&h, good.data(), sizeof h);
    return h;
  }();
  const auto L = csr_image::layout(hdr.n_rows, hdr.a_nnz, hdr.b_nnz);
  auto with_header = [&](const std::function<void(csr_image::Header&)>& f) {
    Bytes b = good;
    csr_image::Header h = hdr;
    f(h);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
  };
  auto resealed = [&](const std::function<void(Bytes&)>& f) {
    Bytes b = good;
    f(b);
    csr_image::seal(b.data());
    return b;
  };
  struct Case {
    const char* name;
    Bytes bytes;
    const char* why;
  };
  Bytes flipped = good;
  flipped[L.b_val + 5] ^= 0x10;
  const Case cases[] = {
      {"empty", Bytes{}, "truncated"},
      {"header only", Bytes(good.begin(), good.begin() + 100), "truncated"},
      {"cut in the body", Bytes(good.begin(), good.begin() + (ptrdiff_t)(good.size() / 2)), "(truncated?)"},
      {"one bit of a value", flipped, "body checksum mismatch"},
      {"foreign file", slurp(path("k.zkey")), "wrong magic"},
      {"future version", with_header([](auto& h) { h.version = 99; }), "format version 99"},
      {"edited count", with_header([](auto& h) { h.n_vars += 1; }), "header checksum mismatch"},
      {"trailing bytes", [&] { Bytes b = good; b.resize(b.size() + 64); return b; }(), "(truncated?)"},
      // Bytes whose checksums agree but whose indices would leave the arrays: still refused.
      {"column out of range",
       resealed([&](Bytes& b) { std::memset(b.data() + L.a_col + 8, 0xff, 4); }), "a column of A is not below nVars"},
      {"row pointers decreasing",
       resealed([&](Bytes& b) {
         uint32_t v = 0xffffff;
         std::memcpy(b.data() + L.b_row_ptr + 4 * 7, &v, 4);
       }),
       "row pointers of B decrease"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    spit(file, c.bytes);
    ConstraintEvaluator ev = ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
    EXPECT_EQ(rep.outcome, Outcome::Built);
    EXPECT_NE(rep.reason.find(c.why), std::string::npos) << rep.reason;
    expect_same_as_compiled(ev, path("k.zkey"));
    EXPECT_TRUE(slurp(file) == good);  // the rebuild is deterministic
    ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
    EXPECT_EQ(rep.outcome, Outcome::Hit);
  }
}

// A zkey replaced at the same path (another circuit, or the same circuit's new key) is noticed by
// its content; a key at another path has a file of its own.
TEST_F(EvaluatorCache, ChangedZkeyInvalidatesTheFile) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed()));
  EvaluatorCacheReport rep;
  ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  const std::string first = rep.path;

  // One coefficient changed, nothing else: same sizes, same counts.
  ZKey zk = random_zkey(cuzk::test::test_seed());
  zk.coefs[17].value += Fr::one();
  write_zkey(path("k.zkey"), zk);
  ConstraintEvaluator ev = ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Built);
  EXPECT_EQ(rep.path, first);
  EXPECT_NE(rep.reason.find("another zkey"), std::string::npos) << rep.reason;
  expect_same_as_compiled(ev, path("k.zkey"));

  // Only a key point changed: still another key, rebuilt.
  zk.delta1 = bls12_381::g1_generator();
  write_zkey(path("k.zkey"), zk);
  ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Built);

  // A different circuit under another name: its own file, the first one untouched.
  write_zkey(path("other.zkey"), random_zkey(cuzk::test::test_seed("other"), 1 << 9, 300));
  ConstraintEvaluator o = ConstraintEvaluator::open_cached(path("other.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Built);
  EXPECT_NE(rep.path, first);
  expect_same_as_compiled(o, path("other.zkey"));
  ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Hit);
}

// Processes that start together build the file once; the others wait for it and map it.
TEST_F(EvaluatorCache, ConcurrentProcessesBuildOneFile) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed(), 1 << 14, 9000));
  constexpr int kProcs = 4;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; i++) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      while (::read(gate[0], &c, 1) < 0) {
      }  // EOF once the parent closes its end: all start together
      int code = 3;
      try {
        EvaluatorCacheReport rep;
        ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
        code = rep.outcome == Outcome::Built ? 1 : rep.outcome == Outcome::Hit ? 0 : 2;
      } catch (...) {
      }
      ::_exit(code);
    }
    kids.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  int built = 0, hit = 0;
  for (pid_t pid : kids) {
    int st = 0;
    ASSERT_EQ(::waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st));
    built += WEXITSTATUS(st) == 1;
    hit += WEXITSTATUS(st) == 0;
  }
  EXPECT_EQ(built, 1);
  EXPECT_EQ(hit, kProcs - 1);
  EXPECT_EQ(temporaries_in(cache_dir()), 0u);
  EvaluatorCacheReport rep;
  ConstraintEvaluator ev = ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Hit);
  expect_same_as_compiled(ev, path("k.zkey"));
}

// A temporary file left by a builder that died is cleared by the next build.
TEST_F(EvaluatorCache, LeftoverTemporaryIsRemoved) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed()));
  EvaluatorCacheReport rep;
  ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  fs::remove(rep.path);
  spit(rep.path + ".tmp.999999", Bytes(100, 7));
  ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir(), &rep);
  EXPECT_EQ(rep.outcome, Outcome::Built);
  EXPECT_EQ(temporaries_in(cache_dir()), 0u);
}

// Where the directory cannot be made, the evaluator is compiled in memory and the report says why.
TEST_F(EvaluatorCache, UnusableDirectoryFallsBackToMemory) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed()));
  spit(path("file"), Bytes(3, 0));
  EvaluatorCacheReport rep;
  ConstraintEvaluator ev = ConstraintEvaluator::open_cached(path("k.zkey"), path("file") + "/cache", &rep);
  EXPECT_EQ(rep.outcome, Outcome::Uncached);
  EXPECT_NE(rep.reason.find("cannot create the directory"), std::string::npos) << rep.reason;
  expect_same_as_compiled(ev, path("k.zkey"));
}

// A malformed zkey is the caller's error, as from read_zkey_coefficients.
TEST_F(EvaluatorCache, MalformedZkeyThrows) {
  write_zkey(path("k.zkey"), random_zkey(cuzk::test::test_seed()));
  Bytes b = slurp(path("k.zkey"));
  b.resize(b.size() - 10);
  spit(path("k.zkey"), b);
  EXPECT_THROW(ConstraintEvaluator::open_cached(path("k.zkey"), cache_dir()), FormatError);
}
