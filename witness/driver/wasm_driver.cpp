// cuzk's driver for circom's .wasm witness calculator, translated to C by wasm2c. It is not compiled
// with cuzk: the artefact build compiles it once per toolchain and links it with each translated
// module (cuzk_wasm_glue.h is the whole interface between them) into the artefact's `generator`, which
// is also its `tracer`:
//
//   generator --describe -                      prints the circuit's sizes and input table as JSON
//   generator --serve - <ppid>                  serves witness requests on fd 3 until EOF
//   tracer --trace - <inputs> <out>             runs the circuit once on the sample inputs and writes
//                                               the operations that depend on them
//   tracer --selftest <out>                     writes the runtime's results of every operation on
//                                               edge values, for the build to check its evaluator
//
// The module is used as circom's witness_calculator.js uses it: its input table maps the hash of a
// signal's name to the signal and its size; a value goes through the shared memory
// (writeSharedRWMemory) before setInputSignal(hash, index); the last input runs the circuit; then
// getWitness(i) leaves witness value i in the shared memory, normal form. A failed assert comes back
// through the import exceptionHandler(4) after printErrorMessage() has given circom's message.
//
// A field element in the module's memory is an i32 short value, a u32 type (bit 31: long, bit 30:
// Montgomery) and the long value, n32 32-bit words. During a trace a symbol is an element of a type
// circom never writes; its first word is the node. Copies (Fr_copy, Fr_copyn) move it untouched.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuzk_serve.hpp"
#include "cuzk_trace_core.hpp"
#include "wasm-rt-impl.h"

// What the module's imports reach: the instance, and circom's error message being built.
struct Z_runtime_instance_t {
  void* inst = nullptr;
  std::string err;
};

extern "C" {
extern int cuzk_tracing;  // the hooks trace while it is set
void* cuzk_wasm_instantiate(Z_runtime_instance_t* host);
uint8_t* cuzk_wasm_memory(void* i, uint64_t* size);
uint32_t cuzk_wasm_grow(void* i, uint32_t pages);
void cuzk_wasm_init(void* i, uint32_t sanity);
uint32_t cuzk_wasm_field_len32(void* i);
void cuzk_wasm_raw_prime(void* i);
uint32_t cuzk_wasm_read_shared(void* i, uint32_t j);
void cuzk_wasm_write_shared(void* i, uint32_t j, uint32_t v);
uint32_t cuzk_wasm_witness_size(void* i);
uint32_t cuzk_wasm_input_size(void* i);
void cuzk_wasm_set_input(void* i, uint32_t msb, uint32_t lsb, uint32_t pos);
void cuzk_wasm_get_witness(void* i, uint32_t k);
uint32_t cuzk_wasm_message_char(void* i);
uint32_t cuzk_wasm_map_position(void* i, uint64_t hash);
int cuzk_wasm_native_mul(void);  // circom's Montgomery product runs natively (checked against the wasm's)
// circom's runtime itself, by cuzk's operation numbers (the build writes these beside the hooks)
int cuzk_wasm_rt_has(unsigned op);
void cuzk_wasm_rt_binary(void* i, unsigned op, uint32_t r, uint32_t a, uint32_t b);
void cuzk_wasm_rt_unary(void* i, unsigned op, uint32_t r, uint32_t a);
uint32_t cuzk_wasm_rt_is_true(void* i, uint32_t a);
uint32_t cuzk_wasm_rt_to_int(void* i, uint32_t a);
void cuzk_wasm_rt_normalize(void* i, unsigned which, uint32_t a);
uint32_t cuzk_wasm_rt_eq_raw(void* i, uint32_t a, uint32_t b);
}

namespace {

using cuzk_trace::Raw;
namespace op = cuzk::witness::program;

Z_runtime_instance_t g_host;
void* g_inst = nullptr;
bool g_in_child = false;  // serving one witness, or tracing: a failure ends the process

// circom's message so far (getMessageChar until 0).
std::string message() {
  std::string m;
  for (int n = 0; n < 1 << 16; n++) {
    const uint32_t c = cuzk_wasm_message_char(g_inst);
    if (c == 0) break;
    m.push_back(char(c));
  }
  return m;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

const char* trap_name(int code) {
  switch (code) {
    case WASM_RT_TRAP_OOB: return "out of bounds memory access";
    case WASM_RT_TRAP_INT_OVERFLOW: return "integer overflow";
    case WASM_RT_TRAP_DIV_BY_ZERO: return "integer division by zero";
    case WASM_RT_TRAP_INVALID_CONVERSION: return "invalid conversion";
    case WASM_RT_TRAP_UNREACHABLE: return "unreachable executed";
    case WASM_RT_TRAP_CALL_INDIRECT: return "invalid indirect call";
    case WASM_RT_TRAP_UNCAUGHT_EXCEPTION: return "uncaught exception";
    case WASM_RT_TRAP_EXHAUSTION: return "call stack exhausted";
    default: return "trap";
  }
}

// What the module is running: named when it traps.
const char* g_phase = "";

// Runs f; a trap in the module ends the process with status 5, naming the phase and the trap on
// stderr. Once per process: saving the signal mask for the unwind is a system call.
template <class F>
void guarded(F&& f) {
  const int code = wasm_rt_impl_try();
  if (code != 0) {
    std::fprintf(stderr, "cuzk-wasm: the circuit's wasm trapped in %s: %s\n", g_phase, trap_name(code));
    std::fflush(nullptr);
    _exit(5);
  }
  f();
}

[[noreturn]] void fail(const char* why) {
  std::fprintf(stderr, "cuzk-wasm: %s\n", why);
  std::fflush(nullptr);
  _exit(3);
}

void instantiate() {
  g_inst = cuzk_wasm_instantiate(&g_host);
  g_host.inst = g_inst;
  if (cuzk_wasm_field_len32(g_inst) != 8) fail("the circuit's prime is not 256 bits wide");
}

Raw prime() {
  cuzk_wasm_raw_prime(g_inst);
  Raw p{};
  for (uint32_t j = 0; j < 8; j++) p[j / 2] |= uint64_t(cuzk_wasm_read_shared(g_inst, j)) << (32 * (j % 2));
  return p;
}

// One main input signal of the table: its hash, first signal id and size.
struct Entry {
  uint64_t hash;
  uint32_t signal, size;
};

// The input table, found through the module's own lookup: the lookup of hash 0 ends on an empty
// slot of the table, whose slots of 16 bytes (256 of them in circom 2) lie within kTableSpan bytes
// either side of it; an address there holding a nonzero hash h is a table entry exactly when the
// lookup of h returns it.
constexpr uint32_t kTableSpan = 1 << 16;
std::vector<Entry> input_table() {
  std::vector<Entry> out;
  const uint32_t empty = cuzk_wasm_map_position(g_inst, 0);
  if (empty == 0) fail("the circuit's input table is full or missing");
  uint64_t size = 0;
  const uint32_t lo = empty >= kTableSpan ? empty - kTableSpan : empty % 16;
  for (uint64_t at = lo; at < uint64_t(empty) + kTableSpan; at += 16) {
    const uint8_t* mem = cuzk_wasm_memory(g_inst, &size);
    if (at + 16 > size) break;
    Entry e;
    std::memcpy(&e.hash, mem + at, 8);
    std::memcpy(&e.signal, mem + at + 8, 4);
    std::memcpy(&e.size, mem + at + 12, 4);
    if (e.hash != 0 && cuzk_wasm_map_position(g_inst, e.hash) == at) out.push_back(e);
  }
  return out;
}

// Where main input value k goes, as (hash, index), in signal order.
struct Slot {
  uint64_t hash;
  uint32_t index;
};
std::vector<Slot> input_slots(uint32_t* start) {
  const std::vector<Entry> table = input_table();
  const uint32_t n = cuzk_wasm_input_size(g_inst);
  uint32_t first = UINT32_MAX;
  for (const Entry& e : table)
    if (e.size) first = std::min(first, e.signal);
  std::vector<Slot> slots(n, Slot{0, 0});
  std::vector<bool> seen(n, false);
  for (const Entry& e : table)
    for (uint32_t j = 0; j < e.size; j++) {
      const uint64_t pos = uint64_t(e.signal) - first + j;
      if (pos >= n || seen[pos]) fail("the circuit's input table does not match its input count");
      seen[pos] = true;
      slots[pos] = Slot{e.hash, j};
    }
  for (bool s : seen)
    if (!s) fail("the circuit's input table does not match its input count");
  *start = n ? first : 0;
  return slots;
}

int describe() {
  instantiate();
  const Raw p = prime();
  uint32_t start = 0;
  const std::vector<Entry> table = input_table();
  input_slots(&start);  // checks the table against the input count
  std::printf("{\"driver\":1,\"native_mul\":%s,\"n_witness\":%u,\"n_signals\":0,\"input_start\":%u,\"n_inputs\":%u,"
              "\"prime\":[",
              cuzk_wasm_native_mul() ? "true" : "false", cuzk_wasm_witness_size(g_inst), start, cuzk_wasm_input_size(g_inst));
  for (int i = 0; i < 4; i++) std::printf("%s\"%016" PRIx64 "\"", i ? "," : "", p[size_t(i)]);
  std::printf("],\"limbs\":4,\"inputs\":[");
  bool first = true;
  for (const Entry& e : table) {
    if (e.size == 0) continue;
    std::printf("%s{\"hash\":\"%016" PRIx64 "\",\"signal\":%u,\"size\":%u}", first ? "" : ",", e.hash, e.signal, e.size);
    first = false;
  }
  std::printf("]}\n");
  return 0;
}

void set_inputs(const std::vector<Slot>& slots, const std::vector<uint64_t>& in, int* pending) {
  for (size_t k = 0; k < slots.size(); k++) {
    for (uint32_t j = 0; j < 8; j++)
      cuzk_wasm_write_shared(g_inst, j, uint32_t(in[k * 4 + j / 2] >> (32 * (j % 2))));
    if (pending) *pending = int(k);
    g_phase = "setInputSignal";
    cuzk_wasm_set_input(g_inst, uint32_t(slots[k].hash >> 32), uint32_t(slots[k].hash), slots[k].index);
    if (pending && *pending >= 0) fail("setInputSignal did not read its value as the tracer expects");
  }
}

// The child: computes one witness and writes it into dest (normal form, as snarkjs reads it).
void compute(const std::vector<Slot>& slots, const std::vector<uint64_t>& in, const std::string& dest,
             uint64_t offset, uint64_t n_witness) {
  g_in_child = true;
  uint8_t* out = cuzk_driver::map_destination(dest, offset, n_witness, 32);
  guarded([&] {
    g_phase = "init";
    cuzk_wasm_init(g_inst, 0);
    set_inputs(slots, in, nullptr);
    g_phase = "getWitness";
    for (uint64_t i = 0; i < n_witness; i++) {
      cuzk_wasm_get_witness(g_inst, uint32_t(i));
      uint32_t w[8];
      for (uint32_t j = 0; j < 8; j++) w[j] = cuzk_wasm_read_shared(g_inst, j);
      std::memcpy(out + i * 32, w, 32);
    }
  });
}

// ---- the tracer ----

constexpr uint32_t kElem = 40;  // bytes of one element: header and 8 words
constexpr uint32_t kSymType = 0x2c5a0000u;
constexpr int32_t kSymTag = 0x5a17c0de;

struct Elem {
  uint8_t b[kElem];
};

cuzk_trace::Trace g_trace;
int g_pending_input = -1;     // the input whose value setInputSignal is about to read
int64_t g_last_normal = -1;   // the element getWitness last normalized

uint8_t* at(uint32_t addr) {
  uint64_t size = 0;
  uint8_t* mem = cuzk_wasm_memory(g_inst, &size);
  if (uint64_t(addr) + kElem > size) fail("an element lies outside the module's memory");
  return mem + addr;
}
Elem load(uint32_t addr) {
  Elem e;
  std::memcpy(e.b, at(addr), kElem);
  return e;
}
void store(uint32_t addr, const Elem& e) { std::memcpy(at(addr), e.b, kElem); }

bool is_sym(const Elem& e) {
  int32_t s;
  uint32_t t;
  std::memcpy(&s, e.b, 4);
  std::memcpy(&t, e.b + 4, 4);
  return s == kSymTag && t == kSymType;
}
uint32_t node_in(const Elem& e) {
  uint32_t n;
  std::memcpy(&n, e.b + 8, 4);
  return n;
}
Elem sym_elem(uint32_t node) {
  Elem e{};
  std::memcpy(e.b, &kSymTag, 4);
  std::memcpy(e.b + 4, &kSymType, 4);
  std::memcpy(e.b + 8, &node, 4);
  return e;
}
// A long, normal-form element of value v.
Elem long_elem(const Raw& v) {
  Elem e{};
  const uint32_t type = 0x80000000u;
  std::memcpy(e.b + 4, &type, 4);
  std::memcpy(e.b + 8, v.data(), 32);
  return e;
}
// circom's normal form of the concrete element at addr, which is normalized in place (as circom's
// Fr_toLongNormal does) and read.
Raw normalize_in_place(uint32_t addr) {
  cuzk_wasm_rt_normalize(g_inst, 1, addr);
  Raw v;
  std::memcpy(v.data(), at(addr) + 8, 32);
  return v;
}
// The same, leaving the element as it was.
Raw value_of(uint32_t addr) {
  const Elem keep = load(addr);
  const Raw v = normalize_in_place(addr);
  store(addr, keep);
  return v;
}
cuzk_trace::Operand operand(uint32_t addr, const Elem& e) {
  if (is_sym(e)) return {true, node_in(e), Raw{}};
  return {false, 0, value_of(addr)};
}
Raw concrete(const cuzk_trace::Operand& x) { return x.sym ? g_trace.value(x.node) : x.value; }

void check_apart(uint32_t r, uint32_t a) {
  if (r != a && (r < a ? a - r : r - a) < kElem) fail("overlapping elements in one operation");
}

// An operation of which one operand is a symbol: circom's runtime computes it on the sample's values,
// written into the operands' places for the call and put back after it.
void operation(unsigned o, uint32_t r, uint32_t a, uint32_t b, bool unary) {
  const Elem ea = load(a), eb = unary ? Elem{} : load(b);
  if (!is_sym(ea) && (unary || !is_sym(eb))) {
    if (unary) cuzk_wasm_rt_unary(g_inst, o, r, a);
    else cuzk_wasm_rt_binary(g_inst, o, r, a, b);
    return;
  }
  check_apart(r, a);
  if (!unary) check_apart(r, b), check_apart(a, b);
  const cuzk_trace::Operand oa = operand(a, ea), ob = unary ? cuzk_trace::Operand{} : operand(b, eb);
  store(a, long_elem(concrete(oa)));
  if (!unary) store(b, long_elem(concrete(ob)));
  if (unary) cuzk_wasm_rt_unary(g_inst, o, r, a);
  else cuzk_wasm_rt_binary(g_inst, o, r, a, b);
  const Elem cr = load(r);
  const Raw vr = normalize_in_place(r);
  store(a, ea);
  if (!unary) store(b, eb);
  const cuzk_trace::Outcome out = g_trace.apply(o, oa, ob, unary, vr);
  switch (out.kind) {
    case cuzk_trace::Outcome::SameAsA: store(r, ea); break;
    case cuzk_trace::Outcome::SameAsB: store(r, eb); break;
    case cuzk_trace::Outcome::Concrete: store(r, cr); break;
    case cuzk_trace::Outcome::Symbol: store(r, sym_elem(out.node)); break;
  }
}

// A question about a symbol's value: circom's answer on the sample, and a guard.
template <class Ask>
uint32_t ask(uint32_t a, Ask&& real) {
  const Elem e = load(a);
  if (!is_sym(e)) return real();
  store(a, long_elem(g_trace.value(node_in(e))));
  const uint32_t v = real();
  store(a, e);
  return v;
}

int trace(const char* inputs_path, const char* out) {
  instantiate();
  uint32_t start = 0;
  const std::vector<Slot> slots = input_slots(&start);
  std::vector<Raw> in(slots.size());
  FILE* fi = std::fopen(inputs_path, "rb");
  if (!fi || std::fread(in.data(), sizeof(Raw), in.size(), fi) != in.size()) fail("cannot read the sample inputs");
  std::fclose(fi);
  std::vector<uint64_t> words(in.size() * 4);
  if (!in.empty()) std::memcpy(words.data(), in.data(), words.size() * 8);
  for (size_t k = 0; k < in.size(); k++) g_trace.input(uint32_t(k), in[k]);
  g_in_child = true;
  cuzk_tracing = 1;
  const uint32_t n_witness = cuzk_wasm_witness_size(g_inst);
  std::vector<uint32_t> outputs(n_witness);
  guarded([&] {
    g_phase = "init";
    cuzk_wasm_init(g_inst, 0);
    set_inputs(slots, words, &g_pending_input);
    g_phase = "getWitness";
    for (uint32_t i = 0; i < n_witness; i++) {
      g_last_normal = -1;
      cuzk_wasm_get_witness(g_inst, i);
      if (g_last_normal < 0) fail("getWitness did not normalize its value as the tracer expects");
      const Elem e = load(uint32_t(g_last_normal));
      Raw v;
      std::memcpy(v.data(), e.b + 8, 32);
      outputs[i] = is_sym(e) ? node_in(e) : g_trace.constant(v);
    }
  });
  cuzk_tracing = 0;
  return g_trace.write(out, uint32_t(in.size()), outputs) ? 0 : 3;
}

int selftest(const char* out) {
  instantiate();
  const Raw p = prime();
  uint64_t size = 0;
  cuzk_wasm_memory(g_inst, &size);
  if (cuzk_wasm_grow(g_inst, 1) == UINT32_MAX) fail("cannot grow the module's memory");
  const uint32_t a = uint32_t(size), b = a + 64, r = a + 128;
  g_in_child = true;
  int rc = 3;
  g_phase = "the self-test";
  guarded([&] {
    rc = cuzk_trace::selftest(
        out, p, [](uint32_t o) { return cuzk_wasm_rt_has(o) != 0; },
        [&](uint32_t o, const Raw& x, const Raw& y) {
          store(a, long_elem(x));
          store(b, long_elem(y));
          bool unary = false;
          for (const cuzk_trace::SelftestOp& e : cuzk_trace::kSelftestOps)
            if (e.op == o) unary = e.unary;
          if (unary) cuzk_wasm_rt_unary(g_inst, o, r, a);
          else cuzk_wasm_rt_binary(g_inst, o, r, a, b);
          return normalize_in_place(r);
        });
  });
  return rc;
}

}  // namespace

extern "C" {
int cuzk_tracing = 0;

void cuzk_trace_binary(void*, unsigned o, uint32_t r, uint32_t a, uint32_t b) { operation(o, r, a, b, false); }
void cuzk_trace_unary(void*, unsigned o, uint32_t r, uint32_t a) { operation(o, r, a, 0, true); }
uint32_t cuzk_trace_is_true(void*, uint32_t a) {
  const Elem e = load(a);
  const uint32_t t = ask(a, [&] { return cuzk_wasm_rt_is_true(g_inst, a); });
  if (is_sym(e)) g_trace.guard(node_in(e), t ? op::kMustBeNonzero : op::kMustBeZero);
  return t;
}
uint32_t cuzk_trace_to_int(void*, uint32_t a) {
  const Elem e = load(a);
  const uint32_t v = ask(a, [&] { return cuzk_wasm_rt_to_int(g_inst, a); });
  if (is_sym(e)) g_trace.guard(node_in(e), op::kMustEqual);
  return v;
}
// A symbol's form is the evaluator's business; constants keep circom's.
void cuzk_trace_normalize(void*, unsigned which, uint32_t a) {
  if (which == 1) g_last_normal = a;
  if (!is_sym(load(a))) cuzk_wasm_rt_normalize(g_inst, which, a);
}
// setInputSignal reads the value it was given as an integer, to keep it in short form when it fits:
// the tracer puts the input's symbol there instead, and both forms are the same value.
uint32_t cuzk_trace_input_to_int(void*, uint32_t a) {
  if (g_pending_input >= 0) {
    store(a, sym_elem(uint32_t(g_pending_input)));
    g_pending_input = -1;
    return 0;
  }
  if (is_sym(load(a))) return 0;
  return cuzk_wasm_rt_to_int(g_inst, a);
}
uint32_t cuzk_trace_input_eq(void*, uint32_t a, uint32_t b) {
  if (is_sym(load(a)) || is_sym(load(b))) return 0;
  return cuzk_wasm_rt_eq_raw(g_inst, a, b);
}

// The module's imports (circom's names; witness_calculator.js gives the same meaning).
void Z_runtimeZ_exceptionHandler(Z_runtime_instance_t* host, uint32_t code) {
  static const char* const kinds[] = {"Unknown error. ",
                                      "Signal not found. ",
                                      "Too many signals set. ",
                                      "Signal already set. ",
                                      "Assert Failed. ",
                                      "Not enough memory. ",
                                      "Input signal array access exceeds the size. "};
  const std::string text = one_line(std::string(kinds[code < 7 ? code : 0]) + host->err);
  // An assert's line on stdout is what the serving process and the build look for.
  std::fprintf(code == 4 ? stdout : stderr, "%s\n", text.c_str());
  std::fflush(nullptr);
  _exit(code == 4 ? 1 : 10 + int(code < 7 ? code : 0));
}
void Z_runtimeZ_printErrorMessage(Z_runtime_instance_t* host) { host->err += message() + "\n"; }
void Z_runtimeZ_writeBufferMessage(Z_runtime_instance_t*) {
  const std::string m = message();
  if (!g_in_child || cuzk_tracing) return;
  std::fputs(m == "\n" ? "\n" : (m + " ").c_str(), stdout);
}
void Z_runtimeZ_showSharedRWMemory(Z_runtime_instance_t*) {}
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--describe") == 0) return describe();
  if (argc == 4 && std::strcmp(argv[1], "--serve") == 0) {
    if (!cuzk_driver::serving_parent(argv[3])) return 1;
    instantiate();
    uint32_t start = 0;
    const std::vector<Slot> slots = input_slots(&start);
    return cuzk_driver::serve(slots.size(), [&](const std::vector<uint64_t>& in, const std::string& dest,
                                                uint64_t offset, uint64_t n_witness) {
      compute(slots, in, dest, offset, n_witness);
    });
  }
  if (argc == 5 && std::strcmp(argv[1], "--trace") == 0) return trace(argv[3], argv[4]);
  if (argc == 3 && std::strcmp(argv[1], "--selftest") == 0) return selftest(argv[2]);
  std::fprintf(stderr,
               "usage: %s --describe - | --serve - <parent pid> | --trace - <inputs> <out> | --selftest <out>\n",
               argv[0]);
  return 2;
}
