// cuzk's tracer for a circom C++ witness generator. Like driver.cpp it is not compiled with cuzk:
// the artefact build links it with circom's `--c` output into the artefact's `tracer` executable,
// where it replaces circom's runtime (fr.asm, fr.cpp). Those are linked in too, with their
// functions renamed from Fr_* to Rl_*, so that every concrete value is still circom's own.
//
//   tracer --trace <circuit.dat> <inputs> <out>   runs the circuit once on the sample inputs and
//                                                 writes the operations that depend on them
//   tracer --selftest <out>                       writes circom's results of every operation on
//                                                 edge values, for the build to check its evaluator
//
// During the trace a field element is either a constant, held as circom holds it, or a symbol: the
// result of an operation on values that depend on the inputs, held as a node number. Operations on
// constants are circom's (loop counters, indices, template parameters fold away); an operation on a
// symbol appends a node, or finds the same node already made. Copies, which are most of the generated
// code, move node numbers and record nothing. Where the C++ code asks for a symbol's value
// (Fr_isTrue for a branch or an assert, Fr_toInt for an index or a loop bound), the tracer answers
// with the sample's value and records a guard: the program is valid for an input only while every
// guard sees what the sample saw.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "calcwit.hpp"
#include "circom.hpp"
#include "cuzk_driver_io.hpp"
#include "cuzk_ops.hpp"
#include "fr.hpp"

Circom_Circuit* loadCircuit(std::string const& datFileName);  // circom's main.cpp

// circom's runtime under the names the build gave it.
extern "C" {
void Rl_add(PFrElement r, PFrElement a, PFrElement b);
void Rl_sub(PFrElement r, PFrElement a, PFrElement b);
void Rl_neg(PFrElement r, PFrElement a);
void Rl_mul(PFrElement r, PFrElement a, PFrElement b);
void Rl_square(PFrElement r, PFrElement a);
void Rl_band(PFrElement r, PFrElement a, PFrElement b);
void Rl_bor(PFrElement r, PFrElement a, PFrElement b);
void Rl_bxor(PFrElement r, PFrElement a, PFrElement b);
void Rl_bnot(PFrElement r, PFrElement a);
void Rl_shl(PFrElement r, PFrElement a, PFrElement b);
void Rl_shr(PFrElement r, PFrElement a, PFrElement b);
void Rl_eq(PFrElement r, PFrElement a, PFrElement b);
void Rl_neq(PFrElement r, PFrElement a, PFrElement b);
void Rl_lt(PFrElement r, PFrElement a, PFrElement b);
void Rl_gt(PFrElement r, PFrElement a, PFrElement b);
void Rl_leq(PFrElement r, PFrElement a, PFrElement b);
void Rl_geq(PFrElement r, PFrElement a, PFrElement b);
void Rl_land(PFrElement r, PFrElement a, PFrElement b);
void Rl_lor(PFrElement r, PFrElement a, PFrElement b);
void Rl_lnot(PFrElement r, PFrElement a);
void Rl_toNormal(PFrElement r, PFrElement a);
void Rl_toLongNormal(PFrElement r, PFrElement a);
void Rl_toMontgomery(PFrElement r, PFrElement a);
int Rl_isTrue(PFrElement a);
int Rl_toInt(PFrElement a);
void Rl_fail();
}
void Rl_str2element(PFrElement pE, char const* s, uint base);
char* Rl_element2str(PFrElement pE);
void Rl_idiv(PFrElement r, PFrElement a, PFrElement b);
void Rl_mod(PFrElement r, PFrElement a, PFrElement b);
void Rl_inv(PFrElement r, PFrElement a);
void Rl_div(PFrElement r, PFrElement a, PFrElement b);
void Rl_pow(PFrElement r, PFrElement a, PFrElement b);

namespace {

namespace op = cuzk::witness::program;
using Raw = std::array<uint64_t, Fr_N64>;
using BinFn = void (*)(PFrElement, PFrElement, PFrElement);
using UnFn = void (*)(PFrElement, PFrElement);

// A symbol: a type no circom element has, and a tag in shortVal; longVal[0] is the node.
constexpr uint32_t kSymType = 0x2c5a0000u;
constexpr int32_t kSymTag = 0x5a17c0de;

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

// The trace. circom runs the templates it marks parallel on threads of their own: one lock.
std::mutex g_mu;
std::vector<Node> g_nodes;
std::vector<Raw> g_vals;  // each node's value on the sample, normal form
std::vector<Raw> g_consts;
std::unordered_map<Raw, uint32_t, RawHash> g_const_node;
std::unordered_map<std::array<uint32_t, 3>, uint32_t, KeyHash> g_cse;
std::vector<Guard> g_guards;
std::unordered_map<std::array<uint32_t, 3>, uint32_t, KeyHash> g_guard_seen;

bool is_sym(const FrElement* e) { return e->type == kSymType && e->shortVal == kSymTag; }

Raw normal(PFrElement e) {
  FrElement t;
  Rl_toLongNormal(&t, e);
  Raw v;
  std::memcpy(v.data(), t.longVal, sizeof v);
  return v;
}

FrElement long_of(const Raw& v) {
  FrElement e;
  e.shortVal = 0;
  e.type = Fr_LONG;
  std::memcpy(e.longVal, v.data(), sizeof e.longVal);
  return e;
}

// What circom would compute with: a symbol's sample value, or the constant itself.
FrElement concrete(PFrElement e) { return is_sym(e) ? long_of(g_vals[e->longVal[0]]) : *e; }

void set_sym(PFrElement r, uint32_t node) {
  r->shortVal = kSymTag;
  r->type = kSymType;
  r->longVal[0] = node;
  r->longVal[1] = r->longVal[2] = r->longVal[3] = 0;
}

uint32_t push(uint32_t o, uint32_t a, uint32_t b, const Raw& v) {
  if (g_nodes.size() >= 0xfffffff0u) {
    std::fprintf(stderr, "cuzk-tracer: more than 2^32 operations\n");
    std::_Exit(4);
  }
  g_nodes.push_back(Node{o, a, b});
  g_vals.push_back(v);
  return uint32_t(g_nodes.size() - 1);
}

uint32_t const_node(const Raw& v) {
  auto it = g_const_node.find(v);
  if (it != g_const_node.end()) return it->second;
  g_consts.push_back(v);
  uint32_t n = push(op::Const, uint32_t(g_consts.size() - 1), 0, v);
  g_const_node.emplace(v, n);
  return n;
}

uint32_t node_of(PFrElement e) { return is_sym(e) ? uint32_t(e->longVal[0]) : const_node(normal(e)); }

bool is_const_value(PFrElement e, uint64_t small) {
  if (is_sym(e)) return false;
  Raw v = normal(e);
  return v[0] == small && v[1] == 0 && v[2] == 0 && v[3] == 0;
}

void make(PFrElement r, uint32_t o, uint32_t a, uint32_t b, PFrElement result) {
  const std::array<uint32_t, 3> key{o, a, b};
  auto it = g_cse.find(key);
  if (it != g_cse.end()) {
    set_sym(r, it->second);
    return;
  }
  const uint32_t n = push(o, a, b, normal(result));
  g_cse.emplace(key, n);
  set_sym(r, n);
}

bool commutes(uint32_t o) {
  return o == op::Add || o == op::Mul || o == op::Eq || o == op::Neq || o == op::Band || o == op::Bor ||
         o == op::Bxor || o == op::Land || o == op::Lor;
}

void binary(uint32_t o, BinFn real, PFrElement r, PFrElement a, PFrElement b) {
  if (!is_sym(a) && !is_sym(b)) {
    real(r, a, b);
    return;
  }
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement ca = concrete(a), cb = concrete(b), cr;
  real(&cr, &ca, &cb);
  // Identities that hold for every value of the other operand (field operations only).
  if ((o == op::Add && is_const_value(b, 0)) || (o == op::Sub && is_const_value(b, 0)) ||
      (o == op::Mul && is_const_value(b, 1))) {
    *r = *a;
    return;
  }
  if ((o == op::Add && is_const_value(a, 0)) || (o == op::Mul && is_const_value(a, 1))) {
    *r = *b;
    return;
  }
  if (o == op::Mul && (is_const_value(a, 0) || is_const_value(b, 0))) {
    *r = cr;
    return;
  }
  uint32_t na = node_of(a), nb = node_of(b);
  if (commutes(o) && na > nb) std::swap(na, nb);
  make(r, o, na, nb, &cr);
}

void unary(uint32_t o, UnFn real, PFrElement r, PFrElement a) {
  if (!is_sym(a)) {
    real(r, a);
    return;
  }
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement ca = concrete(a), cr;
  real(&cr, &ca);
  make(r, o, node_of(a), 0, &cr);
}

void guard(uint32_t node, uint32_t kind, const Raw& v) {
  const std::array<uint32_t, 3> key{node, kind, uint32_t(v[0])};
  auto it = g_guard_seen.find(key);
  if (it != g_guard_seen.end() && g_guards[it->second].value == v) return;
  g_guard_seen[key] = uint32_t(g_guards.size());
  g_guards.push_back(Guard{node, kind, v});
}

template <class T>
bool put(FILE* f, const T* p, size_t n) {
  return n == 0 || std::fwrite(p, sizeof(T), n, f) == n;
}

// The values the self-test runs every operation on: the edges of the integer views circom takes of
// a field element (signed halves, 32/64-bit words, shift counts near the field's bit length), and
// pseudo-random ones.
std::vector<Raw> edge_values() {
  Raw p;
  std::memcpy(p.data(), Fr_q.longVal, sizeof p);
  auto sub_small = [&](uint64_t k) {  // q - k
    Raw v = p;
    unsigned __int128 borrow = k;
    for (int i = 0; i < Fr_N64; i++) {
      unsigned __int128 d = (unsigned __int128)v[i] - borrow;
      v[i] = uint64_t(d);
      borrow = (d >> 64) ? 1 : 0;
    }
    return v;
  };
  auto half = [&](Raw v) {  // v >> 1
    for (int i = 0; i < Fr_N64; i++) v[i] = (v[i] >> 1) | (i + 1 < Fr_N64 ? v[i + 1] << 63 : 0);
    return v;
  };
  auto pow2 = [](int k) {
    Raw v{};
    v[size_t(k / 64)] = uint64_t(1) << (k % 64);
    return v;
  };
  auto less_q = [&](const Raw& v) {
    for (int i = Fr_N64 - 1; i >= 0; i--)
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
    if (less_q(v)) vs.push_back(v);
    Raw m = v;  // 2^k - 1
    for (int i = 0; i < Fr_N64; i++) {
      if (m[i] != 0) {
        m[i]--;
        break;
      }
      m[i] = ~uint64_t(0);
    }
    if (less_q(m)) vs.push_back(m);
  }
  for (uint64_t k : {1ull, 2ull, 3ull, 31ull, 32ull, 33ull, 64ull, 253ull, 254ull, 255ull, 256ull, 0x80000000ull,
                     0x100000000ull})
    vs.push_back(sub_small(k));
  Raw h = half(p);  // (q-1)/2, the largest "positive" value, and its neighbours
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
    while (!less_q(v)) v[3] >>= 1;
    vs.push_back(v);
  }
  return vs;
}

int selftest(const char* out) {
  struct Entry {
    uint32_t op;
    BinFn bin;
    UnFn un;
  };
  const Entry ops[] = {
      {op::Add, Rl_add, nullptr},   {op::Sub, Rl_sub, nullptr},   {op::Mul, Rl_mul, nullptr},
      {op::Neg, nullptr, Rl_neg},   {op::Square, nullptr, Rl_square}, {op::Band, Rl_band, nullptr},
      {op::Bor, Rl_bor, nullptr},   {op::Bxor, Rl_bxor, nullptr}, {op::Bnot, nullptr, Rl_bnot},
      {op::Shl, Rl_shl, nullptr},   {op::Shr, Rl_shr, nullptr},   {op::Eq, Rl_eq, nullptr},
      {op::Neq, Rl_neq, nullptr},   {op::Lt, Rl_lt, nullptr},     {op::Gt, Rl_gt, nullptr},
      {op::Leq, Rl_leq, nullptr},   {op::Geq, Rl_geq, nullptr},   {op::Land, Rl_land, nullptr},
      {op::Lor, Rl_lor, nullptr},   {op::Lnot, nullptr, Rl_lnot}, {op::Idiv, Rl_idiv, nullptr},
      {op::Mod, Rl_mod, nullptr},   {op::Pow, Rl_pow, nullptr},   {op::Inv, nullptr, Rl_inv},
      {op::Div, Rl_div, nullptr},
  };
  const std::vector<Raw> vs = edge_values();
  FILE* f = std::fopen(out, "wb");
  if (!f) return 3;
  uint64_t n = 0;
  std::vector<std::array<Raw, 3>> rec;
  std::vector<uint32_t> rec_op;
  auto is_zero = [](const Raw& v) { return v == Raw{}; };
  for (const Entry& e : ops) {
    for (size_t i = 0; i < vs.size(); i++) {
      if (e.un) {
        FrElement a = long_of(vs[i]), r;
        e.un(&r, &a);
        rec.push_back({vs[i], Raw{}, normal(&r)});
        rec_op.push_back(e.op);
        continue;
      }
      for (size_t j = 0; j < vs.size(); j++) {
        // circom's integer division by zero stops the generator (GMP raises SIGFPE); the
        // program refuses it too, so there is nothing to compare.
        if ((e.op == op::Idiv || e.op == op::Mod) && is_zero(vs[j])) continue;
        FrElement a = long_of(vs[i]), b = long_of(vs[j]), r;
        e.bin(&r, &a, &b);
        rec.push_back({vs[i], vs[j], normal(&r)});
        rec_op.push_back(e.op);
      }
    }
  }
  n = rec.size();
  bool ok = put(f, op::kSelftestMagic, 8) && put(f, &n, 1) && put(f, rec_op.data(), rec_op.size()) &&
            put(f, rec.data(), rec.size());
  ok = (std::fclose(f) == 0) && ok;
  return ok ? 0 : 3;
}

int trace(const char* dat, const char* inputs_path, const char* out) {
  Circom_Circuit* circuit = loadCircuit(dat);
  const std::vector<cuzk_driver::Slot> slots = cuzk_driver::input_slots(circuit);
  std::vector<Raw> in(slots.size());
  FILE* fi = std::fopen(inputs_path, "rb");
  if (!fi || std::fread(in.data(), sizeof(Raw), in.size(), fi) != in.size()) {
    std::fprintf(stderr, "cuzk-tracer: cannot read %zu input values from %s\n", in.size(), inputs_path);
    return 3;
  }
  std::fclose(fi);
  for (size_t k = 0; k < in.size(); k++) push(op::Input, uint32_t(k), 0, in[k]);
  Circom_CalcWit* ctx = new Circom_CalcWit(circuit);
  if (slots.empty()) ctx->tryRunCircuit();
  for (size_t k = 0; k < slots.size(); k++) {
    FrElement v;
    set_sym(&v, uint32_t(k));
    ctx->setInputSignal(slots[k].hash, slots[k].index, v);
  }
  if (ctx->getRemaingInputsToBeSet() != 0) {
    std::fprintf(stderr, "cuzk-tracer: %u inputs were not set\n", ctx->getRemaingInputsToBeSet());
    return 3;
  }
  const uint32_t n_witness = get_size_of_witness();
  std::vector<uint32_t> outputs(n_witness);
  for (uint32_t i = 0; i < n_witness; i++) {
    FrElement v;
    ctx->getWitness(i, &v);
    outputs[i] = node_of(&v);
  }
  FILE* f = std::fopen(out, "wb");
  if (!f) return 3;
  const uint32_t n_inputs = uint32_t(slots.size());
  const uint64_t counts[3] = {g_nodes.size(), g_consts.size(), g_guards.size()};
  bool ok = put(f, op::kTraceMagic, 8) && put(f, &n_inputs, 1) && put(f, &n_witness, 1) && put(f, counts, 3) &&
            put(f, g_consts.data(), g_consts.size()) && put(f, g_nodes.data(), g_nodes.size()) &&
            put(f, g_guards.data(), g_guards.size()) && put(f, outputs.data(), outputs.size());
  ok = (std::fclose(f) == 0) && ok;
  return ok ? 0 : 3;
}

}  // namespace

// circom's runtime, as the generated code calls it.
extern "C" {
void Fr_copy(PFrElement r, PFrElement a) { std::memmove(r, a, sizeof *r); }
void Fr_copyn(PFrElement r, PFrElement a, int n) {
  if (n > 0) std::memmove(r, a, sizeof *r * size_t(n));
}
void Fr_add(PFrElement r, PFrElement a, PFrElement b) { binary(op::Add, Rl_add, r, a, b); }
void Fr_sub(PFrElement r, PFrElement a, PFrElement b) { binary(op::Sub, Rl_sub, r, a, b); }
void Fr_mul(PFrElement r, PFrElement a, PFrElement b) { binary(op::Mul, Rl_mul, r, a, b); }
void Fr_band(PFrElement r, PFrElement a, PFrElement b) { binary(op::Band, Rl_band, r, a, b); }
void Fr_bor(PFrElement r, PFrElement a, PFrElement b) { binary(op::Bor, Rl_bor, r, a, b); }
void Fr_bxor(PFrElement r, PFrElement a, PFrElement b) { binary(op::Bxor, Rl_bxor, r, a, b); }
void Fr_shl(PFrElement r, PFrElement a, PFrElement b) { binary(op::Shl, Rl_shl, r, a, b); }
void Fr_shr(PFrElement r, PFrElement a, PFrElement b) { binary(op::Shr, Rl_shr, r, a, b); }
void Fr_eq(PFrElement r, PFrElement a, PFrElement b) { binary(op::Eq, Rl_eq, r, a, b); }
void Fr_neq(PFrElement r, PFrElement a, PFrElement b) { binary(op::Neq, Rl_neq, r, a, b); }
void Fr_lt(PFrElement r, PFrElement a, PFrElement b) { binary(op::Lt, Rl_lt, r, a, b); }
void Fr_gt(PFrElement r, PFrElement a, PFrElement b) { binary(op::Gt, Rl_gt, r, a, b); }
void Fr_leq(PFrElement r, PFrElement a, PFrElement b) { binary(op::Leq, Rl_leq, r, a, b); }
void Fr_geq(PFrElement r, PFrElement a, PFrElement b) { binary(op::Geq, Rl_geq, r, a, b); }
void Fr_land(PFrElement r, PFrElement a, PFrElement b) { binary(op::Land, Rl_land, r, a, b); }
void Fr_lor(PFrElement r, PFrElement a, PFrElement b) { binary(op::Lor, Rl_lor, r, a, b); }
void Fr_neg(PFrElement r, PFrElement a) { unary(op::Neg, Rl_neg, r, a); }
void Fr_square(PFrElement r, PFrElement a) { unary(op::Square, Rl_square, r, a); }
void Fr_bnot(PFrElement r, PFrElement a) { unary(op::Bnot, Rl_bnot, r, a); }
void Fr_lnot(PFrElement r, PFrElement a) { unary(op::Lnot, Rl_lnot, r, a); }
// A symbol's form is the evaluator's business; constants keep circom's.
void Fr_toNormal(PFrElement r, PFrElement a) {
  if (is_sym(a)) *r = *a;
  else Rl_toNormal(r, a);
}
void Fr_toLongNormal(PFrElement r, PFrElement a) {
  if (is_sym(a)) *r = *a;
  else Rl_toLongNormal(r, a);
}
void Fr_toMontgomery(PFrElement r, PFrElement a) {
  if (is_sym(a)) *r = *a;
  else Rl_toMontgomery(r, a);
}
int Fr_isTrue(PFrElement a) {
  if (!is_sym(a)) return Rl_isTrue(a);
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement c = concrete(a);
  const int t = Rl_isTrue(&c);
  guard(uint32_t(a->longVal[0]), t ? op::kMustBeNonzero : op::kMustBeZero, Raw{});
  return t;
}
int Fr_toInt(PFrElement a) {
  if (!is_sym(a)) return Rl_toInt(a);
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement c = concrete(a);
  const uint32_t n = uint32_t(a->longVal[0]);
  guard(n, op::kMustEqual, g_vals[n]);
  return Rl_toInt(&c);
}
void Fr_fail() { Rl_fail(); }
}

void Fr_str2element(PFrElement pE, char const* s, uint base) { Rl_str2element(pE, s, base); }
char* Fr_element2str(PFrElement pE) {
  FrElement c;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    c = concrete(pE);
  }
  return Rl_element2str(&c);
}
void Fr_idiv(PFrElement r, PFrElement a, PFrElement b) { binary(op::Idiv, Rl_idiv, r, a, b); }
void Fr_mod(PFrElement r, PFrElement a, PFrElement b) { binary(op::Mod, Rl_mod, r, a, b); }
void Fr_pow(PFrElement r, PFrElement a, PFrElement b) { binary(op::Pow, Rl_pow, r, a, b); }
void Fr_div(PFrElement r, PFrElement a, PFrElement b) { binary(op::Div, Rl_div, r, a, b); }
void Fr_inv(PFrElement r, PFrElement a) { unary(op::Inv, Rl_inv, r, a); }

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--trace") == 0) return trace(argv[2], argv[3], argv[4]);
  if (argc == 3 && std::strcmp(argv[1], "--selftest") == 0) return selftest(argv[2]);
  std::fprintf(stderr, "usage: %s --trace <circuit.dat> <inputs> <out> | --selftest <out>\n", argv[0]);
  return 2;
}
