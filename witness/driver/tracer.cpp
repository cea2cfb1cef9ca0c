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
// The trace's bookkeeping is cuzk_trace_core.hpp's. A symbol lives in an FrElement of a type no circom
// element has. Operations on constants are circom's (loop counters, indices, template parameters fold
// away). Copies, which are most of the generated code, move node numbers and record nothing. Where
// the C++ code asks for a symbol's value (Fr_isTrue for a branch or an assert, Fr_toInt for an index
// or a loop bound), the tracer answers with the sample's value and records a guard: the program is
// valid for an input only while every guard sees what the sample saw.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "calcwit.hpp"
#include "circom.hpp"
#include "cuzk_driver_io.hpp"
#include "cuzk_trace_core.hpp"
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
using cuzk_trace::Raw;
using BinFn = void (*)(PFrElement, PFrElement, PFrElement);
using UnFn = void (*)(PFrElement, PFrElement);

// A symbol: a type no circom element has, and a tag in shortVal; longVal[0] is the node.
constexpr uint32_t kSymType = 0x2c5a0000u;
constexpr int32_t kSymTag = 0x5a17c0de;

// The trace. circom runs the templates it marks parallel on threads of their own: one lock.
std::mutex g_mu;
cuzk_trace::Trace g_trace;

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
FrElement concrete(PFrElement e) { return is_sym(e) ? long_of(g_trace.value(uint32_t(e->longVal[0]))) : *e; }

cuzk_trace::Operand operand(PFrElement e) {
  if (is_sym(e)) return {true, uint32_t(e->longVal[0]), Raw{}};
  return {false, 0, normal(e)};
}

void set_sym(PFrElement r, uint32_t node) {
  r->shortVal = kSymTag;
  r->type = kSymType;
  r->longVal[0] = node;
  r->longVal[1] = r->longVal[2] = r->longVal[3] = 0;
}

uint32_t node_of(PFrElement e) { return g_trace.node_of(operand(e)); }

// circom's result `cr` of an operation on a and b (b unused when unary), of which one is a symbol.
void record(uint32_t o, PFrElement r, PFrElement a, PFrElement b, const FrElement& cr) {
  const FrElement ka = *a, kb = b ? *b : FrElement{};
  const cuzk_trace::Outcome out =
      g_trace.apply(o, operand(a), b ? operand(b) : cuzk_trace::Operand{}, b == nullptr, normal(const_cast<PFrElement>(&cr)));
  switch (out.kind) {
    case cuzk_trace::Outcome::SameAsA: *r = ka; break;
    case cuzk_trace::Outcome::SameAsB: *r = kb; break;
    case cuzk_trace::Outcome::Concrete: *r = cr; break;
    case cuzk_trace::Outcome::Symbol: set_sym(r, out.node); break;
  }
}

void binary(uint32_t o, BinFn real, PFrElement r, PFrElement a, PFrElement b) {
  if (!is_sym(a) && !is_sym(b)) {
    real(r, a, b);
    return;
  }
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement ca = concrete(a), cb = concrete(b), cr;
  real(&cr, &ca, &cb);
  record(o, r, a, b, cr);
}

void unary(uint32_t o, UnFn real, PFrElement r, PFrElement a) {
  if (!is_sym(a)) {
    real(r, a);
    return;
  }
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement ca = concrete(a), cr;
  real(&cr, &ca);
  record(o, r, a, nullptr, cr);
}

int selftest(const char* out) {
  static const std::pair<uint32_t, BinFn> bin[] = {
      {op::Add, Rl_add}, {op::Sub, Rl_sub}, {op::Mul, Rl_mul}, {op::Band, Rl_band}, {op::Bor, Rl_bor},
      {op::Bxor, Rl_bxor}, {op::Shl, Rl_shl}, {op::Shr, Rl_shr}, {op::Eq, Rl_eq}, {op::Neq, Rl_neq},
      {op::Lt, Rl_lt}, {op::Gt, Rl_gt}, {op::Leq, Rl_leq}, {op::Geq, Rl_geq}, {op::Land, Rl_land},
      {op::Lor, Rl_lor}, {op::Idiv, Rl_idiv}, {op::Mod, Rl_mod}, {op::Pow, Rl_pow}, {op::Div, Rl_div}};
  static const std::pair<uint32_t, UnFn> un[] = {
      {op::Neg, Rl_neg}, {op::Square, Rl_square}, {op::Bnot, Rl_bnot}, {op::Lnot, Rl_lnot}, {op::Inv, Rl_inv}};
  Raw p;
  std::memcpy(p.data(), Fr_q.longVal, sizeof p);
  return cuzk_trace::selftest(
      out, p, [](uint32_t) { return true; },
      [](uint32_t o, const Raw& x, const Raw& y) {
        FrElement a = long_of(x), b = long_of(y), r;
        for (const auto& [k, f] : bin)
          if (k == o) f(&r, &a, &b);
        for (const auto& [k, f] : un)
          if (k == o) f(&r, &a);
        return normal(&r);
      });
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
  for (size_t k = 0; k < in.size(); k++) g_trace.input(uint32_t(k), in[k]);
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
  return g_trace.write(out, uint32_t(slots.size()), outputs) ? 0 : 3;
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
  g_trace.guard(uint32_t(a->longVal[0]), t ? op::kMustBeNonzero : op::kMustBeZero);
  return t;
}
int Fr_toInt(PFrElement a) {
  if (!is_sym(a)) return Rl_toInt(a);
  std::lock_guard<std::mutex> lk(g_mu);
  FrElement c = concrete(a);
  g_trace.guard(uint32_t(a->longVal[0]), op::kMustEqual);
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
