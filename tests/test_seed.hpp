// Seeds for randomised tests, so that every failure can be replayed.
//
// One base seed per test process: CUZK_TEST_SEED when it is set (decimal, or hex with 0x), a fresh
// one from std::random_device otherwise. It is printed once ("random seed N"), and every test that
// draws from it prints it again and records it as the XML/JSON report property `cuzk_test_seed`.
// Replay a failure with
//
//   CUZK_TEST_SEED=N build/bin/cuzk_tests --gtest_filter=Suite.Name
//
// Each test draws from its own stream: the base seed mixed with the test's full name (and an
// optional stream label), so a test sees the same values whether it runs alone, under ctest (one
// process per test) or with the whole binary, in any order.
//
// Header-only, plain C++20 and GoogleTest, so that the host tests and the GPU tests share it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuzk::test {

// The value of CUZK_TEST_SEED: decimal, or hex with a 0x prefix, within 64 bits, nothing else.
inline uint64_t parse_seed(std::string_view s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string_view digits = hex ? s.substr(2) : s;
  const uint64_t base = hex ? 16 : 10;
  if (digits.empty()) throw std::invalid_argument("CUZK_TEST_SEED is empty");
  uint64_t v = 0;
  for (char ch : digits) {
    uint64_t d;
    if (ch >= '0' && ch <= '9')
      d = uint64_t(ch - '0');
    else if (hex && ch >= 'a' && ch <= 'f')
      d = uint64_t(ch - 'a' + 10);
    else if (hex && ch >= 'A' && ch <= 'F')
      d = uint64_t(ch - 'A' + 10);
    else
      throw std::invalid_argument("CUZK_TEST_SEED='" + std::string(s) + "' is not a decimal or 0x-hex number");
    if (v > (UINT64_MAX - d) / base)
      throw std::invalid_argument("CUZK_TEST_SEED='" + std::string(s) + "' does not fit in 64 bits");
    v = v * base + d;
  }
  return v;
}

// The process's base seed (see above); printed the first time it is asked for.
inline uint64_t base_seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("CUZK_TEST_SEED");
    const bool given = env && *env;
    uint64_t s;
    if (given) {
      s = parse_seed(env);
    } else {
      std::random_device rd;
      s = (uint64_t(rd()) << 32) ^ rd();
    }
    std::printf("[cuzk test] random seed %llu (%s; CUZK_TEST_SEED=%llu replays it)\n", (unsigned long long)s,
                given ? "from CUZK_TEST_SEED" : "fresh", (unsigned long long)s);
    std::fflush(stdout);
    return s;
  }();
  return seed;
}

namespace detail {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

inline std::string current_test_name() {
  const testing::TestInfo* t = testing::UnitTest::GetInstance()->current_test_info();
  return t ? std::string(t->test_suite_name()) + "." + t->name() : std::string();
}

}  // namespace detail

// The seed of the running test's stream `label`. The first call in a test prints the base seed
// beside the test's name and records it as the test property `cuzk_test_seed`.
inline uint64_t test_seed(std::string_view label = {}) {
  const uint64_t base = base_seed();
  const testing::TestInfo* t = testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = detail::current_test_name();
  static const testing::TestInfo* reported = nullptr;
  if (t && t != reported) {
    reported = t;
    testing::Test::RecordProperty("cuzk_test_seed", std::to_string(base));
    std::printf("[cuzk test] %s: CUZK_TEST_SEED=%llu\n", name.c_str(), (unsigned long long)base);
    std::fflush(stdout);
  }
  std::string key = name;
  key += '/';
  key += label;
  return detail::splitmix64(base ^ detail::fnv1a64(key));
}

// A generator for the running test's stream `label`.
inline std::mt19937_64 test_rng(std::string_view label = {}) { return std::mt19937_64(test_seed(label)); }

// One generator shared by a file's helper functions: it is reseeded with test_rng() the first time
// each test uses it, so helpers need not pass a generator around and tests stay independent.
inline std::mt19937_64& shared_test_rng() {
  static const testing::TestInfo* owner = nullptr;
  static bool seeded = false;
  static std::mt19937_64 g;
  const testing::TestInfo* now = testing::UnitTest::GetInstance()->current_test_info();
  if (!seeded || now != owner) {
    owner = now;
    seeded = true;
    g = test_rng();
  }
  return g;
}

}  // namespace cuzk::test
