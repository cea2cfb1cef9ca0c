// The compiled witness program's runner against a plain interpretation of the same program with
// program::apply (whose semantics the tracer's self-test holds to circom's runtime): random programs
// with every operation, the bit extractions the runner fuses, shared values, duplicate outputs and
// guards, on both fields. And program.bin: a file that is damaged, truncated, of another version or
// malformed is refused with the reason.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "groth16/random.hpp"
#include "math/bls12_381.hpp"
#include "math/bn254.hpp"
#include "test_seed.hpp"
#include "witness/program.hpp"
#include "witness/program_runner.hpp"

using namespace cuzk;
using namespace cuzk::witness;
namespace fs = std::filesystem;

namespace {

unsigned arity(unsigned op) {
  switch (op) {
#define CUZK_TEST_ARITY(name, n) \
  case program::name: return n;
    CUZK_WITNESS_OPS(CUZK_TEST_ARITY)
#undef CUZK_TEST_ARITY
  }
  return 0;
}

template <class Fr>
Value prime_of() {
  Value p;
  std::memcpy(p.data(), Fr::Params::MOD, sizeof p);
  return p;
}

// Every value in order, as the program's definition reads: the reference the runner must match.
template <class Fr>
struct Reference {
  std::vector<Fr> v;
  bool undefined = false;
  std::vector<bool> guard_ok;
  bool ok() const { return !undefined && std::find(guard_ok.begin(), guard_ok.end(), false) == guard_ok.end(); }
};
template <class Fr>
Reference<Fr> interpret(const Program& p, const std::vector<Value>& in) {
  Reference<Fr> r;
  r.v.resize(p.n_values());
  for (uint32_t i = 0; i < p.n_inputs; i++) r.v[i] = to_fr<Fr>(in[i]);
  for (size_t i = 0; i < p.consts.size(); i++) r.v[p.n_inputs + i] = to_fr<Fr>(p.consts[i]);
  // An undefined operation counts where its value reaches a witness value or a guard; circom would
  // stop on any, but a value nothing reads is not computed.
  std::vector<bool> live(p.n_values(), false);
  for (uint32_t o : p.outputs) live[o] = true;
  for (const ProgramGuard& g : p.guards) live[g.value] = true;
  for (size_t i = p.nodes.size(); i-- > 0;)
    if (live[p.first_node() + i]) {
      live[p.nodes[i].a] = true;
      if (arity(p.nodes[i].op) == 2) live[p.nodes[i].b] = true;
    }
  for (size_t i = 0; i < p.nodes.size(); i++) {
    const ProgramNode& n = p.nodes[i];
    bool u = false;
    r.v[p.first_node() + i] = program::apply<Fr>(n.op, r.v[n.a], r.v[n.b], u);
    r.undefined |= u && live[p.first_node() + i];
  }
  for (const ProgramGuard& g : p.guards) {
    const Fr& x = r.v[g.value];
    r.guard_ok.push_back(g.kind == program::kMustBeZero      ? x.is_zero()
                         : g.kind == program::kMustBeNonzero ? !x.is_zero()
                                                             : x == to_fr<Fr>(g.expect));
  }
  return r;
}

template <class Fr>
Value random_value(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: return Value{rng() % 4, 0, 0, 0};
    case 1: return program::u256::sub(prime_of<Fr>(), Value{1 + rng() % 3, 0, 0, 0});  // -1, -2, -3
    case 2: return Value{rng(), rng() >> (rng() % 64), 0, 0};
    default: return from_fr(random_fr<Fr>(rng));
  }
}

// A random program in the shape the tracer writes: operands are earlier values, mostly recent ones;
// constants small and large; circom's bit extraction (x >> k) & 1, often several bits of one value;
// outputs that repeat values and name inputs and constants; guards that hold on `sample`.
template <class Fr>
Program random_program(std::mt19937_64& rng, const std::vector<Value>& sample) {
  Program p;
  p.prime = prime_of<Fr>();
  p.n_inputs = uint32_t(sample.size());
  const unsigned bits = program::IntView<Fr>::get().bits;
  for (uint64_t c : std::initializer_list<uint64_t>{0, 1, 2, 3, 7, 64, bits - 1, bits, 300})
    p.consts.push_back(Value{c, 0, 0, 0});
  for (int i = 0; i < 4; i++) p.consts.push_back(random_value<Fr>(rng));
  auto konst = [&](uint64_t c) {
    for (size_t i = 0; i < p.consts.size(); i++)
      if (p.consts[i] == Value{c, 0, 0, 0}) return uint32_t(p.n_inputs + i);
    // Values are numbered constants first: one added after the first node would renumber them.
    EXPECT_TRUE(p.nodes.empty()) << "constant " << c << " is not made before the nodes";
    p.consts.push_back(Value{c, 0, 0, 0});
    return uint32_t(p.n_inputs + p.consts.size() - 1);
  };
  for (uint32_t k = 0; k < bits + 8; k++) konst(k);  // shifts, exponents, small factors
  for (uint32_t k = 0; k < 40; k++) konst(uint64_t(1) << k);
  p.consts.push_back(program::u256::sub(p.prime, Value{2, 0, 0, 0}));  // -2
  const uint32_t minus2 = uint32_t(p.n_inputs + p.consts.size() - 1);
  const uint32_t first = p.first_node();
  auto pick = [&]() -> uint32_t {
    const uint32_t n = uint32_t(first + p.nodes.size());
    if (rng() % 4 == 0 || n == first) return uint32_t(rng() % n);
    const uint32_t back = 1 + uint32_t(rng() % std::min<uint32_t>(8, n - first));
    return n - back;
  };
  const size_t n_nodes = 40 + rng() % 200;
  std::vector<uint32_t> eqs, gadgets;
  while (p.nodes.size() < n_nodes) {
    const uint32_t shape = uint32_t(rng() % 14);
    if (shape < 2) {
      // Several bits of one value, each as circom writes it: (x >> k) & 1, or x & 1 for bit 0.
      const uint32_t x = pick();
      for (int b = 0, nb = 1 + int(rng() % 4); b < nb; b++) {
        const uint32_t k = uint32_t(rng() % bits);
        uint32_t src = x;
        if (k) {
          p.nodes.push_back({program::Shr, x, konst(k)});
          src = uint32_t(first + p.nodes.size() - 1);
        }
        if (rng() % 2) {
          p.nodes.push_back({program::Band, src, konst(1)});
        } else {
          p.nodes.push_back({program::Band, konst(1), src});
        }
      }
      continue;
    }
    if (shape == 2) {
      // A bit's products and its complement, as circom's sums of bits and Ch/Maj/Xor write them.
      const uint32_t bitv = uint32_t(first + p.nodes.size() - 1);
      p.nodes.push_back({program::Mul, bitv, rng() % 2 ? pick() : konst(64)});
      p.nodes.push_back({program::Sub, konst(1), bitv});
      p.nodes.push_back({program::Mul, pick(), uint32_t(first + p.nodes.size() - 1)});
      continue;
    }
    if (shape == 3) {
      // An equality, as circom's `===` checks it (a guard is put on some below).
      p.nodes.push_back({program::Eq, pick(), rng() % 3 ? pick() : uint32_t(first + p.nodes.size() - 1)});
      eqs.push_back(uint32_t(first + p.nodes.size() - 1));
      continue;
    }
    auto last = [&] { return uint32_t(first + p.nodes.size() - 1); };
    if (shape == 4) {
      // Num2Bits' check of a bit it made, out * (out - 1) === 0, in its several spellings.
      p.nodes.push_back({program::Band, pick(), konst(1)});
      const uint32_t bitv = last();
      const uint32_t form = uint32_t(rng() % 4);
      if (form == 0) p.nodes.push_back({program::Sub, bitv, konst(1)});
      if (form == 1) p.nodes.push_back({program::Sub, konst(1), bitv});
      if (form < 2) p.nodes.push_back(rng() % 2 ? ProgramNode{program::Mul, bitv, last()} : ProgramNode{program::Mul, last(), bitv});
      if (form == 2) p.nodes.push_back({program::Mul, bitv, bitv});
      if (form == 3) p.nodes.push_back({program::Mul, bitv, rng() % 2 ? konst(0) : pick()});
      p.nodes.push_back({program::Eq, last(), rng() % 2 ? konst(0) : pick()});
      eqs.push_back(last());
      continue;
    }
    if (shape == 5) {
      // An accumulator of bits times constants or values, as Num2Bits' lc1 and SHA-256's adders.
      uint32_t acc = pick();
      for (int t = 0, n = 1 + int(rng() % 6); t < n; t++) {
        const uint32_t bitv = rng() % 3 ? uint32_t(first + p.nodes.size() - 1) : pick();
        p.nodes.push_back({program::Mul, bitv, rng() % 2 ? konst(uint64_t(1) << (rng() % 40)) : pick()});
        const uint32_t term = last();
        const uint32_t how = uint32_t(rng() % 3);
        p.nodes.push_back(how == 0 ? ProgramNode{program::Add, acc, term}
                          : how == 1 ? ProgramNode{program::Add, term, acc}
                                     : ProgramNode{program::Sub, acc, term});
        acc = last();
      }
      continue;
    }
    if (shape == 7) {
      // SHA-256's xor3, ch or maj of three bits (or of any three values), with circom's 2 * and
      // 4 * and sometimes -2 as p - 2.
      uint32_t x[3];
      for (uint32_t& v : x) {
        if (rng() % 4) p.nodes.push_back({program::Band, pick(), konst(1)});
        v = rng() % 4 ? last() : pick();
      }
      const uint32_t a = x[0], b = x[1], c = x[2];
      const uint32_t mid = (p.nodes.push_back({program::Mul, b, c}), last());
      const uint32_t form = uint32_t(rng() % 3);
      if (form == 0) {  // xor3: a * (1 - 2b - 2c + 4 mid) + b + c - 2 mid
        p.nodes.push_back({program::Mul, konst(2), b});
        p.nodes.push_back({program::Sub, konst(1), last()});
        const uint32_t t1 = last();
        p.nodes.push_back({program::Mul, konst(2), c});
        p.nodes.push_back({program::Sub, t1, last()});
        const uint32_t t2 = last();
        p.nodes.push_back({program::Mul, konst(4), mid});
        p.nodes.push_back({program::Add, t2, last()});
        p.nodes.push_back({program::Mul, a, last()});
        p.nodes.push_back({program::Add, last(), b});
        p.nodes.push_back({program::Add, last(), c});
        const uint32_t t3 = last();
        if (rng() % 2) {
          p.nodes.push_back({program::Mul, konst(2), mid});
          p.nodes.push_back({program::Sub, t3, last()});
        } else {
          p.nodes.push_back({program::Mul, minus2, mid});
          p.nodes.push_back({program::Add, t3, last()});
        }
      } else if (form == 1) {  // ch: a * (b - c) + c
        p.nodes.push_back({program::Sub, b, c});
        p.nodes.push_back({program::Mul, a, last()});
        p.nodes.push_back({program::Add, last(), c});
      } else {  // maj: a * (b + c - 2 mid) + mid
        p.nodes.push_back({program::Add, b, c});
        const uint32_t t = last();
        p.nodes.push_back({program::Mul, konst(2), mid});
        p.nodes.push_back({program::Sub, t, last()});
        p.nodes.push_back({program::Mul, a, last()});
        p.nodes.push_back({program::Add, last(), mid});
      }
      gadgets.push_back(last());
      continue;
    }
    if (shape == 6) {
      // Products with small powers of two and with 1; sums with 0.
      const uint64_t c = rng() % 3 ? uint64_t(1) << (rng() % 7) : rng() % 40;
      p.nodes.push_back(rng() % 2 ? ProgramNode{program::Mul, konst(c), pick()} : ProgramNode{program::Mul, pick(), konst(c)});
      const uint32_t z = konst(0);
      const uint32_t form = uint32_t(rng() % 3);
      p.nodes.push_back(form == 0   ? ProgramNode{program::Add, last(), z}
                        : form == 1 ? ProgramNode{program::Add, z, last()}
                                    : ProgramNode{program::Sub, last(), z});
      continue;
    }
    unsigned op;
    do op = unsigned(2 + rng() % (program::kOpCount - 2));
    while (op == program::Pow && rng() % 4);  // fewer exponentiations: they cost ~300 products
    const uint32_t a = pick();
    uint32_t b = arity(op) == 2 ? pick() : 0;
    if ((op == program::Shl || op == program::Shr) && rng() % 2) b = konst(rng() % (bits + 8));
    if (op == program::Pow && rng() % 2) b = konst(rng() % 9);
    p.nodes.push_back({op, a, b});
  }
  // Outputs: mostly nodes, some repeated, some inputs and constants.
  p.n_witness = 1 + uint32_t(rng() % 120);
  for (uint32_t i = 0; i < p.n_witness; i++) {
    const uint32_t r = uint32_t(rng() % 10);
    p.outputs.push_back(r == 0 ? uint32_t(rng() % first) : uint32_t(first + rng() % p.nodes.size()));
  }
  for (uint32_t g : gadgets)  // a gadget's result is a signal: a witness value
    if (rng() % 2) p.outputs.push_back(g);
  p.n_witness = uint32_t(p.outputs.size());
  // Guards as the tracer records them: what the sample showed.
  const Reference<Fr> ref = interpret<Fr>(p, sample);
  for (int g = 0, ng = int(rng() % 6); g < ng; g++) {
    uint32_t v = uint32_t(rng() % p.n_values());
    if (!eqs.empty() && rng() % 2) v = eqs[rng() % eqs.size()];
    ProgramGuard gd{v, program::kMustEqual, from_fr(ref.v[v])};
    if (rng() % 2) gd.kind = ref.v[v].is_zero() ? program::kMustBeZero : program::kMustBeNonzero;
    p.guards.push_back(gd);
  }
  return p;
}

template <class Fr>
void runner_matches_reference(const char* field) {
  auto rng = test::test_rng(field);
  int ok = 0, refused = 0;
  std::map<std::string, uint64_t> made;  // instructions of each kind, over all programs
  for (int iter = 0; iter < 300; iter++) {
    std::vector<Value> sample(1 + rng() % 5);
    for (Value& v : sample) v = random_value<Fr>(rng);
    const Program p = random_program<Fr>(rng, sample);
    // Chunks of every size down to one instruction: values read across chunks.
    const uint32_t chunk = iter % 3 == 0 ? ProgramRunner<Fr>::kDefaultChunk : 1 + uint32_t(rng() % 40);
    const ProgramRunner<Fr> run(p, chunk);
    for (const auto& [n, kind] : run.instruction_counts()) made[kind] += n;
    for (int t = 0; t < 4; t++) {
      std::vector<Value> in = sample;
      for (Value& v : in)
        if (t && rng() % 2) v = random_value<Fr>(rng);
      const Reference<Fr> ref = interpret<Fr>(p, in);
      std::vector<Fr> w(p.n_witness);
      const auto res = run.run(in.data(), w.data());
      using O = typename ProgramRunner<Fr>::Outcome;
      SCOPED_TRACE(::testing::Message() << field << " program " << iter << " input " << t << " chunk " << chunk);
      if (ref.ok()) {
        ASSERT_EQ(int(res.outcome), int(O::Ok));
        for (uint32_t i = 0; i < p.n_witness; i++)
          ASSERT_EQ(from_fr(w[i]), from_fr(ref.v[p.outputs[i]])) << "witness value " << i;
        ok++;
      } else {
        ASSERT_NE(int(res.outcome), int(O::Ok));
        if (res.outcome == O::GuardFailed) {
          ASSERT_LT(res.where, ref.guard_ok.size());
          EXPECT_FALSE(ref.guard_ok[res.where]) << "the runner names a guard that holds";
        } else {
          EXPECT_TRUE(ref.undefined);
        }
        refused++;
      }
      if (t == 0 && !ref.undefined) {
        ASSERT_TRUE(ref.ok()) << "the guards must hold on the sample";
      }
    }
  }
  EXPECT_GT(ok, 300);
  EXPECT_GT(refused, 20);
  // The random shapes reach every fused form.
  for (const char* kind : {"IntBit", "Select", "SelAdd", "SelSub", "Double", "Table"})
    EXPECT_GT(made[kind], 0u) << kind;
}

// Num2Bits as circom's generated code computes it: bits (x >> i) & 1, the check out * (out - 1) ===
// 0 of each, and lc1 = sum of out[i] * 2^i with lc1 === x. The runner extracts the bits from one
// integer, folds the checks away (a bit it extracted is 0 or 1) and adds lc1's terms with their
// choices: what remains is the bits, the sum and one comparison.
template <class Fr>
void num2bits() {
  constexpr uint32_t n = 16;
  Program p;
  p.prime = prime_of<Fr>();
  p.n_inputs = 1;
  p.consts = {Value{0, 0, 0, 0}, Value{1, 0, 0, 0}};
  for (uint32_t i = 1; i < n; i++) p.consts.push_back(Value{i, 0, 0, 0});               // shifts
  for (uint32_t i = 0; i < n; i++) p.consts.push_back(Value{uint64_t(1) << i, 0, 0, 0});  // 2^i
  const uint32_t zero = 1, one = 2, first = p.first_node();
  auto shift = [&](uint32_t i) { return 2 + i; };
  auto pow2 = [&](uint32_t i) { return 2 + n + i; };
  auto node = [&](ProgramNode nd) {
    p.nodes.push_back(nd);
    return uint32_t(first + p.nodes.size() - 1);
  };
  uint32_t lc = zero;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t bit = node({program::Band, i ? node({program::Shr, 0, shift(i)}) : 0u, one});
    p.outputs.push_back(bit);
    const uint32_t check = node({program::Eq, node({program::Mul, bit, node({program::Sub, bit, one})}), zero});
    p.guards.push_back({check, program::kMustBeNonzero, {}});
    lc = node({program::Add, lc, node({program::Mul, bit, pow2(i)})});
  }
  p.guards.push_back({node({program::Eq, lc, 0}), program::kMustBeNonzero, {}});
  p.n_witness = n;
  const ProgramRunner<Fr> run(p);
  std::map<std::string, uint64_t> made;
  for (const auto& [count, kind] : run.instruction_counts()) made[kind] = count;
  const std::map<std::string, uint64_t> want = {{"ToInt", 1}, {"IntBit", n}, {"Select", 1}, {"SelAdd", n - 1}, {"GuardSame", 1}};
  EXPECT_EQ(made, want);
  std::vector<Fr> w(n);
  for (uint64_t x : {uint64_t(0), uint64_t(1), uint64_t(0xbeef), uint64_t(0xffff)}) {
    const Value in{x, 0, 0, 0};
    ASSERT_EQ(int(run.run(&in, w.data()).outcome), 0) << x;
    for (uint32_t i = 0; i < n; i++) EXPECT_EQ(from_fr(w[i]), (Value{(x >> i) & 1, 0, 0, 0})) << x << " bit " << i;
  }
  // 2^16 has no 16-bit decomposition: lc1 === x fails, and the input goes to the native generator.
  const Value big{uint64_t(1) << n, 0, 0, 0};
  const auto r = run.run(&big, w.data());
  EXPECT_EQ(int(r.outcome), int(ProgramRunner<Fr>::Outcome::GuardFailed));
  EXPECT_EQ(r.where, n);
}

}  // namespace

TEST(WitnessProgram, RunnerMatchesReferenceBls12_381) { runner_matches_reference<bls12_381::Fr>("bls12_381"); }
TEST(WitnessProgram, RunnerMatchesReferenceBn254) { runner_matches_reference<bn254::Fr>("bn254"); }

// SHA-256's xor3 as circom computes it, out = a * (1 - 2b - 2c + 4 mid) + b + c - 2 mid with the
// signal mid = b * c: a table of a, b, c, beside mid's choice.
template <class Fr>
void xor3() {
  Program p;
  p.prime = prime_of<Fr>();
  p.n_inputs = 1;
  p.consts = {Value{1, 0, 0, 0}, Value{2, 0, 0, 0}, Value{4, 0, 0, 0}};
  const uint32_t one = 1, two = 2, four = 3, first = p.first_node();
  auto node = [&](ProgramNode nd) {
    p.nodes.push_back(nd);
    return uint32_t(first + p.nodes.size() - 1);
  };
  const uint32_t a = node({program::Band, 0, one});
  const uint32_t b = node({program::Band, node({program::Shr, 0, one}), one});
  const uint32_t c = node({program::Band, node({program::Shr, 0, two}), one});
  const uint32_t mid = node({program::Mul, b, c});
  uint32_t t = node({program::Sub, one, node({program::Mul, two, b})});
  t = node({program::Sub, t, node({program::Mul, two, c})});
  t = node({program::Add, t, node({program::Mul, four, mid})});
  t = node({program::Add, node({program::Add, node({program::Mul, a, t}), b}), c});
  const uint32_t out = node({program::Sub, t, node({program::Mul, two, mid})});
  p.outputs = {mid, out};
  p.n_witness = 2;
  const ProgramRunner<Fr> run(p);
  std::map<std::string, uint64_t> made;
  for (const auto& [count, kind] : run.instruction_counts()) made[kind] = count;
  const std::map<std::string, uint64_t> want = {{"ToInt", 1}, {"IntBit", 3}, {"Select", 1}, {"Table", 1}};
  EXPECT_EQ(made, want);
  std::vector<Fr> w(2);
  for (uint64_t x = 0; x < 8; x++) {
    const Value in{x, 0, 0, 0};
    ASSERT_EQ(int(run.run(&in, w.data()).outcome), 0);
    const uint64_t bits[3] = {x & 1, (x >> 1) & 1, (x >> 2) & 1};
    EXPECT_EQ(from_fr(w[0]), (Value{bits[1] & bits[2], 0, 0, 0})) << x;
    EXPECT_EQ(from_fr(w[1]), (Value{bits[0] ^ bits[1] ^ bits[2], 0, 0, 0})) << x;
  }
}

TEST(WitnessProgram, Xor3IsATableBls12_381) { xor3<bls12_381::Fr>(); }
TEST(WitnessProgram, Xor3IsATableBn254) { xor3<bn254::Fr>(); }

TEST(WitnessProgram, Num2BitsFoldsToItsBitsAndOneSumBls12_381) { num2bits<bls12_381::Fr>(); }
TEST(WitnessProgram, Num2BitsFoldsToItsBitsAndOneSumBn254) { num2bits<bn254::Fr>(); }

// A witness value that is the same node as another, an input or a constant is still written.
TEST(WitnessProgram, OutputsNamingInputsConstantsAndRepeats) {
  using Fr = bls12_381::Fr;
  Program p;
  p.prime = prime_of<Fr>();
  p.n_inputs = 2;
  p.consts = {Value{5, 0, 0, 0}};
  p.nodes = {{program::Mul, 0, 1}, {program::Add, 3, 2}};  // v3 = x*y, v4 = x*y + 5
  p.outputs = {4, 0, 2, 3, 4, 3};
  p.n_witness = uint32_t(p.outputs.size());
  const ProgramRunner<Fr> run(p);
  const std::vector<Value> in = {Value{6, 0, 0, 0}, Value{7, 0, 0, 0}};
  std::vector<Fr> w(p.n_witness);
  ASSERT_EQ(int(run.run(in.data(), w.data()).outcome), 0);
  const uint64_t want[] = {47, 6, 5, 42, 47, 42};
  for (size_t i = 0; i < w.size(); i++) EXPECT_EQ(from_fr(w[i]), (Value{want[i], 0, 0, 0})) << i;
}

namespace {

Program small_program() {
  Program p;
  p.key = "0123456789abcdef";
  p.prime = prime_of<bls12_381::Fr>();
  p.n_inputs = 2;
  p.consts = {Value{1, 0, 0, 0}, Value{9, 0, 0, 0}};
  p.nodes = {{program::Mul, 0, 1}, {program::Shr, 4, 3}, {program::Band, 5, 2}, {program::Neg, 6, 0}};
  p.guards = {{6, program::kMustBeNonzero, {}}, {1, program::kMustEqual, Value{3, 0, 0, 0}}};
  p.outputs = {7, 4, 0};
  p.n_witness = 3;
  return p;
}

struct ProgramFile : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("cuzk_program_test_" + std::to_string(::getpid()));
  std::string path = (dir / "program.bin").string();
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  std::string bytes() {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  void put(const std::string& b) { std::ofstream(path, std::ios::binary | std::ios::trunc) << b; }
  std::string error() {
    try {
      read_program(path);
    } catch (const WitnessError& e) {
      return e.what();
    }
    return "(accepted)";
  }
};

}  // namespace

TEST_F(ProgramFile, RoundTrip) {
  const Program p = small_program();
  write_program(path, p);
  const Program q = read_program(path);
  EXPECT_EQ(q.key, p.key);
  EXPECT_EQ(q.prime, p.prime);
  EXPECT_EQ(q.n_inputs, p.n_inputs);
  EXPECT_EQ(q.consts, p.consts);
  ASSERT_EQ(q.nodes.size(), p.nodes.size());
  for (size_t i = 0; i < p.nodes.size(); i++) {
    EXPECT_EQ(q.nodes[i].op, p.nodes[i].op);
    EXPECT_EQ(q.nodes[i].a, p.nodes[i].a);
    EXPECT_EQ(q.nodes[i].b, p.nodes[i].b);
  }
  ASSERT_EQ(q.guards.size(), p.guards.size());
  EXPECT_EQ(q.guards[1].expect, p.guards[1].expect);
  EXPECT_EQ(q.outputs, p.outputs);
}

TEST_F(ProgramFile, DamageIsRefusedWithTheReason) {
  write_program(path, small_program());
  const std::string good = bytes();
  // Any flipped byte of the body fails the checksum.
  for (size_t at = 112; at < good.size(); at += 7) {
    std::string b = good;
    b[at] ^= 0x20;
    put(b);
    EXPECT_NE(error().find("checksum mismatch"), std::string::npos) << "byte " << at << ": " << error();
  }
  put(good.substr(0, good.size() - 3));
  EXPECT_NE(error().find("truncated"), std::string::npos) << error();
  put(good.substr(0, 50));
  EXPECT_NE(error().find("too short"), std::string::npos) << error();
  std::string b = good;
  b[8] = char(b[8] + 1);  // the version
  put(b);
  EXPECT_NE(error().find("program version"), std::string::npos) << error();
  b = good;
  b[0] = 'X';
  put(b);
  EXPECT_NE(error().find("not a cuzk witness program"), std::string::npos) << error();
  fs::remove(path);
  EXPECT_NE(error().find("cannot open"), std::string::npos) << error();
}

TEST_F(ProgramFile, MalformedProgramsAreRefused) {
  // Checksummed but wrong: each must be refused on reading, never reach the runner.
  auto refused = [&](Program p, const std::string& what) {
    write_program(path, p);
    EXPECT_NE(error().find(what), std::string::npos) << error();
  };
  Program p = small_program();
  p.nodes[1].a = 5;  // node 1 is value 5: reads itself
  refused(p, "node 1 is malformed");
  p = small_program();
  p.nodes[0].op = program::kOpCount;
  refused(p, "node 0 is malformed");
  p = small_program();
  p.nodes[0].op = program::Input;
  refused(p, "node 0 is malformed");
  p = small_program();
  p.nodes[3].b = 1;  // a unary operation with a second operand
  refused(p, "node 3 is malformed");
  p = small_program();
  p.guards[0].value = 99;
  refused(p, "guard 0 is malformed");
  p = small_program();
  p.guards[1].kind = 7;
  refused(p, "guard 1 is malformed");
  p = small_program();
  p.outputs[2] = 8;
  refused(p, "witness value 2 is malformed");
  p = small_program();
  p.consts[1] = p.prime;  // not below the field's prime
  refused(p, "constant 1 is not below the prime");
}

TEST_F(ProgramFile, StoredLayoutRunsAsTheLaidOutOneAndOnlyForItsProgram) {
  using Fr = bls12_381::Fr;
  const Program p = small_program();
  write_program(path, p);
  const uint64_t sum = program_checksum(p);
  EXPECT_EQ(program_file_checksum(path), sum);
  const ProgramRunner<Fr> laid(p, 2);  // short chunks: several of them
  const std::string lp = (dir / "layout.bin").string();
  laid.save_layout(lp, p.key, sum);
  std::string why;
  auto mapped = ProgramRunner<Fr>::open_layout(lp, p.key, sum, &why);
  ASSERT_TRUE(mapped) << why;
  EXPECT_TRUE(mapped->mapped());
  EXPECT_EQ(mapped->instructions(), laid.instructions());
  EXPECT_EQ(mapped->chunks(), laid.chunks());
  for (uint64_t a : {0ull, 3ull, 7ull}) {
    const Value in[2] = {Value{a, 0, 0, 0}, Value{3, 0, 0, 0}};
    std::vector<Fr> w1(p.n_witness), w2(p.n_witness);
    const auto r1 = laid.run(in, w1.data()), r2 = mapped->run(in, w2.data());
    EXPECT_EQ(int(r1.outcome), int(r2.outcome)) << a;
    EXPECT_EQ(r1.where, r2.where) << a;
    if (r1.outcome == ProgramRunner<Fr>::Outcome::Ok)
      for (uint32_t i = 0; i < p.n_witness; i++) EXPECT_EQ(from_fr(w1[i]), from_fr(w2[i])) << a << " value " << i;
  }
  // Another artefact, another program, another field, damage, truncation: refused, saying why.
  auto refused = [&](const std::string& want, const std::string& key, uint64_t s) {
    std::string w;
    EXPECT_FALSE(ProgramRunner<Fr>::open_layout(lp, key, s, &w));
    EXPECT_NE(w.find(want), std::string::npos) << w;
  };
  refused("laid out from another program", "another key", sum);
  refused("laid out from another program", p.key, sum + 1);
  std::string w;
  EXPECT_FALSE(ProgramRunner<bn254::Fr>::open_layout(lp, p.key, sum, &w));
  EXPECT_NE(w.find("laid out from another program"), std::string::npos) << w;
  std::ifstream f(lp, std::ios::binary);
  const std::string good(std::istreambuf_iterator<char>(f), {});
  for (size_t at = 136; at < good.size(); at += 13) {
    std::string b = good;
    b[at] ^= 0x10;
    std::ofstream(lp, std::ios::binary | std::ios::trunc) << b;
    refused("checksum mismatch", p.key, sum);
  }
  std::ofstream(lp, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 5);
  refused("truncated", p.key, sum);
  fs::remove(lp);
  refused("absent", p.key, sum);
}
