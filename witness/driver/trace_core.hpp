// The bookkeeping of cuzk's tracers, whatever circom output they run (circom's C++ in tracer.cpp,
// circom's .wasm in wasm_driver.cpp): compiled into the artefact, never into cuzk.
//
// During a trace a field element is either a constant, held as circom holds it, or a symbol: the
// result of an operation on values that depend on the inputs, held as a node number. An operation
// on a symbol appends a node, or finds the same node already made; where circom's code asks for a
// symbol's value (a branch, an assert, an index), the tracer answers with the sample's value and
// records a guard. The trace file and the self-test file are what witness/program_build.cpp reads.
#pragma once
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "cuzk_ops.hpp"

namespace cuzk_trace {

namespace op = cuzk::witness::program;
using Raw = std::array<uint64_t, 4>;  // a value in normal form, little-endian 64-bit limbs

struct Node {
  uint32_t op, a, b;
};
struct Guard {
  uint32_t node, kind;
  Raw value;
};
struct RawHash {
  size_t operator()(const Raw& v) const { return size_t(v[0] * 0x9e3779b97f4a7c15ull ^ v[1] ^ (v[2] << 1) ^ (v[3] << 2)); }
};
// Every word of the key counts in full: the guards' keys are (node, kind, value), whose first word
// varies most, and an (op, a, b) key's second and third words do.
struct KeyHash {
  size_t operator()(const std::array<uint32_t, 3>& k) const {
    uint64_t h = (uint64_t(k[0]) << 32 | k[1]) * 0x9e3779b97f4a7c15ull ^ uint64_t(k[2]) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return size_t(h ^ (h >> 29));
  }
};

inline bool commutes(uint32_t o) {
  return o == op::Add || o == op::Mul || o == op::Eq || o == op::Neq || o == op::Band || o == op::Bor ||
         o == op::Bxor || o == op::Land || o == op::Lor;
}

inline bool is_small(const Raw& v, uint64_t small) { return v[0] == small && v[1] == 0 && v[2] == 0 && v[3] == 0; }

// An operand as the tracer sees it: a symbol (its node) or a constant (its value).
struct Operand {
  bool sym;
  uint32_t node;  // when sym
  Raw value;      // when constant
};

// What the result of an operation on operands of which at least one is a symbol becomes.
struct Outcome {
  enum Kind { SameAsA, SameAsB, Concrete, Symbol } kind;
  uint32_t node;  // for Symbol
};

class Trace {
 public:
  // The node of main input k, numbered k: call for k = 0, 1, ... before anything else.
  uint32_t input(uint32_t k, const Raw& v) { return push(op::Input, k, 0, v); }
  const Raw& value(uint32_t node) const { return vals_[node]; }

  uint32_t constant(const Raw& v) {
    auto it = const_node_.find(v);
    if (it != const_node_.end()) return it->second;
    consts_.push_back(v);
    uint32_t n = push(op::Const, uint32_t(consts_.size() - 1), 0, v);
    const_node_.emplace(v, n);
    return n;
  }
  uint32_t node_of(const Operand& x) { return x.sym ? x.node : constant(x.value); }

  // A binary operation (b unused for unary ones) whose result circom computes as `result`.
  // Identities that hold for every value of the other operand (field operations only) keep that
  // operand, a product with a constant 0 is the constant, and anything else is a node.
  Outcome apply(uint32_t o, const Operand& a, const Operand& b, bool unary, const Raw& result) {
    if (!unary) {
      if (!b.sym && ((o == op::Add && is_small(b.value, 0)) || (o == op::Sub && is_small(b.value, 0)) ||
                     (o == op::Mul && is_small(b.value, 1))))
        return {Outcome::SameAsA, 0};
      if (!a.sym && ((o == op::Add && is_small(a.value, 0)) || (o == op::Mul && is_small(a.value, 1))))
        return {Outcome::SameAsB, 0};
      if (o == op::Mul && ((!a.sym && is_small(a.value, 0)) || (!b.sym && is_small(b.value, 0))))
        return {Outcome::Concrete, 0};
    }
    uint32_t na = node_of(a), nb = unary ? 0 : node_of(b);
    if (!unary && commutes(o) && na > nb) std::swap(na, nb);
    const std::array<uint32_t, 3> key{o, na, nb};
    auto it = cse_.find(key);
    if (it != cse_.end()) return {Outcome::Symbol, it->second};
    const uint32_t n = push(o, na, nb, result);
    cse_.emplace(key, n);
    return {Outcome::Symbol, n};
  }

  // The path depended on this node's value: a branch or assert (kMustBeZero, kMustBeNonzero), or an
  // index or bound taken from it (kMustEqual its value).
  void guard(uint32_t node, uint32_t kind) {
    const Raw v = kind == op::kMustEqual ? vals_[node] : Raw{};
    const std::array<uint32_t, 3> key{node, kind, uint32_t(v[0])};
    auto it = guard_seen_.find(key);
    if (it != guard_seen_.end() && guards_[it->second].value == v) return;
    guard_seen_[key] = uint32_t(guards_.size());
    guards_.push_back(Guard{node, kind, v});
  }

  // Writes the trace: the witness's values are the nodes `outputs`.
  bool write(const char* path, uint32_t n_inputs, const std::vector<uint32_t>& outputs) const {
    FILE* f = std::fopen(path, "wb");
    if (!f) return false;
    const uint32_t n_witness = uint32_t(outputs.size());
    const uint64_t counts[3] = {nodes_.size(), consts_.size(), guards_.size()};
    bool ok = put(f, op::kTraceMagic, 8) && put(f, &n_inputs, 1) && put(f, &n_witness, 1) && put(f, counts, 3) &&
              put(f, consts_.data(), consts_.size()) && put(f, nodes_.data(), nodes_.size()) &&
              put(f, guards_.data(), guards_.size()) && put(f, outputs.data(), outputs.size());
    return (std::fclose(f) == 0) && ok;
  }

  template <class T>
  static bool put(FILE* f, const T* p, size_t n) {
    return n == 0 || std::fwrite(p, sizeof(T), n, f) == n;
  }

 private:
  uint32_t push(uint32_t o, uint32_t a, uint32_t b, const Raw& v) {
    if (nodes_.size() >= 0xfffffff0u) {
      std::fprintf(stderr, "cuzk-tracer: more than 2^32 operations\n");
      std::_Exit(4);
    }
    nodes_.push_back(Node{o, a, b});
    vals_.push_back(v);
    return uint32_t(nodes_.size() - 1);
  }

  std::vector<Node> nodes_;
  std::vector<Raw> vals_;  // each node's value on the sample, normal form
  std::vector<Raw> consts_;
  std::unordered_map<Raw, uint32_t, RawHash> const_node_;
  std::unordered_map<std::array<uint32_t, 3>, uint32_t, KeyHash> cse_;
  std::vector<Guard> guards_;
  std::unordered_map<std::array<uint32_t, 3>, uint32_t, KeyHash> guard_seen_;
};

// The values the self-test runs every operation on, for the prime p: the edges of the integer views
// circom takes of a field element (signed halves, 32/64-bit words, shift counts near the field's bit
// length), and pseudo-random ones.
inline std::vector<Raw> edge_values(const Raw& p) {
  auto sub_small = [&](uint64_t k) {  // p - k
    Raw v = p;
    unsigned __int128 borrow = k;
    for (int i = 0; i < 4; i++) {
      unsigned __int128 d = (unsigned __int128)v[i] - borrow;
      v[i] = uint64_t(d);
      borrow = (d >> 64) ? 1 : 0;
    }
    return v;
  };
  auto half = [&](Raw v) {  // v >> 1
    for (int i = 0; i < 4; i++) v[i] = (v[i] >> 1) | (i + 1 < 4 ? v[i + 1] << 63 : 0);
    return v;
  };
  auto pow2 = [](int k) {
    Raw v{};
    v[size_t(k / 64)] = uint64_t(1) << (k % 64);
    return v;
  };
  auto less_p = [&](const Raw& v) {
    for (int i = 3; i >= 0; i--)
      if (v[i] != p[i]) return v[i] < p[i];
    return false;
  };
  std::vector<Raw> vs;
  for (uint64_t k : {0ull, 1ull, 2ull, 3ull, 5ull, 7ull, 8ull, 31ull, 32ull, 33ull, 63ull, 64ull, 65ull, 127ull,
                     128ull, 200ull, 252ull, 253ull, 254ull, 255ull, 256ull, 257ull, 511ull, 0x7fffffffull,
                     0x80000000ull, 0xffffffffull, 0x100000000ull, 0x7fffffffffffffffull, 0xffffffffffffffffull})
    vs.push_back(Raw{k, 0, 0, 0});
  for (int k : {64, 65, 127, 128, 191, 192, 200, 250, 252, 253, 254}) {
    Raw v = pow2(k);
    if (less_p(v)) vs.push_back(v);
    Raw m = v;  // 2^k - 1
    for (int i = 0; i < 4; i++) {
      if (m[i] != 0) {
        m[i]--;
        break;
      }
      m[i] = ~uint64_t(0);
    }
    if (less_p(m)) vs.push_back(m);
  }
  for (uint64_t k : {1ull, 2ull, 3ull, 31ull, 32ull, 33ull, 64ull, 253ull, 254ull, 255ull, 256ull, 0x80000000ull,
                     0x100000000ull})
    vs.push_back(sub_small(k));
  Raw h = half(p);  // (p-1)/2, the largest "positive" value, and its neighbours
  vs.push_back(h);
  Raw h1 = h;
  h1[0]++;
  vs.push_back(h1);
  Raw h2 = h1;
  h2[0]++;
  vs.push_back(h2);
  Raw hm = h;
  hm[0]--;
  vs.push_back(hm);
  uint64_t s = 0x243f6a8885a308d3ull;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  for (int i = 0; i < 24; i++) {
    Raw v{next(), next(), next(), next()};
    v[3] &= p[3] >> (i % 3 == 0 ? 0 : 8);  // some near full width, some narrower
    while (!less_p(v)) v[3] >>= 1;
    vs.push_back(v);
  }
  return vs;
}

// The operations the self-test covers and their arity.
struct SelftestOp {
  uint32_t op;
  bool unary;
};
inline constexpr SelftestOp kSelftestOps[] = {
    {op::Add, false},  {op::Sub, false}, {op::Mul, false},  {op::Neg, true},   {op::Square, true},
    {op::Band, false}, {op::Bor, false}, {op::Bxor, false}, {op::Bnot, true},  {op::Shl, false},
    {op::Shr, false},  {op::Eq, false},  {op::Neq, false},  {op::Lt, false},   {op::Gt, false},
    {op::Leq, false},  {op::Geq, false}, {op::Land, false}, {op::Lor, false},  {op::Lnot, true},
    {op::Idiv, false}, {op::Mod, false}, {op::Pow, false},  {op::Inv, true},   {op::Div, false},
};

// Writes circom's result of every operation the runtime has (has(op)) on every edge value (pairs of
// them for binary ones): compute(op, a, b) is the runtime's result, normal form.
template <class Has, class Compute>
int selftest(const char* out, const Raw& p, Has&& has, Compute&& compute) {
  const std::vector<Raw> vs = edge_values(p);
  std::vector<std::array<Raw, 3>> rec;
  std::vector<uint32_t> rec_op;
  for (const SelftestOp& e : kSelftestOps) {
    if (!has(e.op)) continue;
    for (size_t i = 0; i < vs.size(); i++) {
      if (e.unary) {
        rec.push_back({vs[i], Raw{}, compute(e.op, vs[i], Raw{})});
        rec_op.push_back(e.op);
        continue;
      }
      for (size_t j = 0; j < vs.size(); j++) {
        // circom's integer division by zero stops the generator; the program refuses it too, so
        // there is nothing to compare.
        if ((e.op == op::Idiv || e.op == op::Mod) && vs[j] == Raw{}) continue;
        rec.push_back({vs[i], vs[j], compute(e.op, vs[i], vs[j])});
        rec_op.push_back(e.op);
      }
    }
  }
  FILE* f = std::fopen(out, "wb");
  if (!f) return 3;
  const uint64_t n = rec.size();
  bool ok = Trace::put(f, op::kSelftestMagic, 8) && Trace::put(f, &n, 1) && Trace::put(f, rec_op.data(), rec_op.size()) &&
            Trace::put(f, rec.data(), rec.size());
  ok = (std::fclose(f) == 0) && ok;
  return ok ? 0 : 3;
}

}  // namespace cuzk_trace
