// Circuit inputs against a generator's manifest: every accepted number form, and a clear error naming
// the signal for every kind of bad input. The hashes are circom's own (read from a generator circom
// compiled), so fnv1a is checked against a reference we did not write.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "witness/inputs.hpp"
#include "witness/manifest.hpp"
#include "witness/wasm_build.hpp"

using namespace cuzk::witness;
using nlohmann::json;

namespace {

constexpr Value kR = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull};

// A circuit with inputs a, in[2][3] (6 values) and bus field s.x, in that order.
Manifest sample(bool names = true) {
  Manifest m;
  m.prime = kR;
  m.n_witness = 20;
  m.n_signals = 30;
  m.input_start = 2;
  m.n_inputs = 8;
  m.names_known = names;
  for (auto [n, off, size] : {std::tuple<const char*, uint32_t, uint32_t>{"a", 0, 1}, {"in", 1, 6}, {"s.x", 7, 1}})
    m.inputs.push_back({names ? n : "", fnv1a(n), off, size});
  return m;
}

Value v(uint64_t x) { return Value{x, 0, 0, 0}; }

std::string error_of(const json& in, const Manifest& m = sample()) {
  try {
    parse_inputs(in, m);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

json good() { return json::parse(R"({"a": 1, "in": [[1,2,3],[4,5,6]], "s": {"x": "7"}})"); }

}  // namespace

TEST(Witness, Fnv1aMatchesCircom) {
  // circom --c output of tests/e2e/circuits/multiplier.circom: its .dat input table.
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a("b"), 0xaf63df4c8601f1a5ull);
}

TEST(Witness, ValuesInSignalOrder) {
  auto vals = parse_inputs(good(), sample());
  ASSERT_EQ(vals.size(), 8u);
  EXPECT_EQ(vals[0], v(1));
  for (uint64_t i = 0; i < 6; i++) EXPECT_EQ(vals[1 + i], v(i + 1)) << i;  // in, row-major
  EXPECT_EQ(vals[7], v(7));
}

TEST(Witness, NumberForms) {
  json in = good();
  auto a_of = [&](json x) {
    in["a"] = x;
    return parse_inputs(in, sample())[0];
  };
  EXPECT_EQ(a_of("0x1F"), v(31));
  EXPECT_EQ(a_of("0X1f"), v(31));
  EXPECT_EQ(a_of("0o17"), v(15));
  EXPECT_EQ(a_of("0b101"), v(5));
  EXPECT_EQ(a_of("18446744073709551616"), (Value{0, 1, 0, 0}));
  EXPECT_EQ(a_of(18446744073709551615ull), v(~0ull));
  EXPECT_EQ(a_of(4.0), v(4));
  EXPECT_EQ(a_of("0"), v(0));
  EXPECT_EQ(a_of("-0"), v(0));
  Value minus1 = kR;
  minus1[0] -= 1;
  EXPECT_EQ(a_of("-1"), minus1);
  EXPECT_EQ(a_of(-1), minus1);
  // r - 1 is the largest value; r and above are refused.
  EXPECT_EQ(a_of("52435875175126190479447740508185965837690552500527637822603658699938581184512"), minus1);
}

TEST(Witness, ErrorsNameTheSignal) {
  json in = good();
  in.erase("a");
  EXPECT_EQ(error_of(in), "missing input signal 'a'");
  in = good();
  in.erase("in");
  EXPECT_EQ(error_of(in), "missing input signal 'in' (6 values)");
  in = good();
  in["zz"] = 1;
  EXPECT_NE(error_of(in).find("signal 'zz' is not an input of the circuit (its inputs: a, in, s.x)"), std::string::npos)
      << error_of(in);
  in = good();
  in["in"] = json::parse("[[1,2,3],[4,5]]");
  EXPECT_EQ(error_of(in), "signal 'in' expects 6 values, got 5");
  in = good();
  in["in"][1][2] = "12a";
  EXPECT_EQ(error_of(in), "signal 'in[1][2]': '12a' is not a decimal number");
  in = good();
  in["a"] = "0xg";
  EXPECT_EQ(error_of(in), "signal 'a': '0xg' is not a hex number");
  in = good();
  in["a"] = "";
  EXPECT_EQ(error_of(in), "signal 'a': '' is not a number");
  in = good();
  in["a"] = "52435875175126190479447740508185965837690552500527637822603658699938581184513";
  EXPECT_EQ(error_of(in), "signal 'a': value is not below the field's prime (bls12381 scalar field)");
  in = good();
  in["a"] = std::string(100, '9');
  EXPECT_EQ(error_of(in), "signal 'a': value is not below the field's prime (bls12381 scalar field)");
  in = good();
  in["a"] = 1.5;
  EXPECT_EQ(error_of(in), "signal 'a': 1.5 is not an exact integer (give large values as decimal strings)");
  in = good();
  in["a"] = 1e30;
  EXPECT_NE(error_of(in).find("is not an exact integer"), std::string::npos);
  in = good();
  in["a"] = nullptr;
  EXPECT_EQ(error_of(in), "signal 'a': expected a number or a numeric string, got null");
  in = good();
  in["s"] = json::object();
  EXPECT_NE(error_of(in).find("signal 's' is not an input of the circuit"), std::string::npos) << error_of(in);
  EXPECT_EQ(error_of(json::array()), "circuit inputs must be a JSON object of signal names");
  EXPECT_EQ(error_of(json(5)), "circuit inputs must be a JSON object of signal names");
}

TEST(Witness, DottedAndNestedBusNamesAreTheSameSignal) {
  json in = good();
  in.erase("s");
  in["s.x"] = 7;
  EXPECT_EQ(parse_inputs(in, sample())[7], v(7));
  in["s"] = json::parse(R"({"x": 8})");
  EXPECT_EQ(error_of(in), "signal 's.x' is given twice");
}

TEST(Witness, UnknownNamesStillCheckedByHash) {
  Manifest m = sample(false);
  EXPECT_EQ(parse_inputs(good(), m).size(), 8u);
  json in = good();
  in.erase("in");
  EXPECT_EQ(error_of(in, m), "missing input signal #1 (6 values) (names unknown: compile the circuit with circom --sym)");
}

// Inputs nested tens of thousands deep (a 40 KiB body of brackets, inline in POST /v1/proofs) used
// to recurse once per level through the input walk and overflow the stack: the supervisor died.
TEST(Witness, DeepNestingIsAnInputErrorNotAStackOverflow) {
  const int d = 100000;
  json arr = good();
  arr["in"] = json::parse(std::string(d, '[') + "1" + std::string(d, ']'));
  EXPECT_EQ(error_of(arr), "signal 'in[0][0][0][0][0][0][0][0][0][0][0][0...': nested more than 64 levels deep");
  std::string obj;
  for (int i = 0; i < d; i++) obj += "{\"s\": ";
  obj += "1" + std::string(d, '}');
  EXPECT_EQ(error_of(json::parse(obj)), "signal 's.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s...': nested more than 64 levels deep");
  // Ordinary nesting is untouched: ten levels around one value are still that value.
  json ten = good();
  ten["a"] = json::parse("[[[[[[[[[[9]]]]]]]]]]");
  EXPECT_EQ(parse_inputs(ten, sample())[0], v(9));
}

TEST(Witness, InputsFileIsBoundedAndRegular) {
  const std::string dir = ::testing::TempDir() + "/cuzk_witness_test";
  std::filesystem::create_directories(dir);
  const std::string f = dir + "/in.json";
  std::ofstream(f) << good().dump();
  EXPECT_EQ(read_inputs_file(f, sample(), 1 << 20).size(), 8u);
  auto err = [&](const std::string& path, uint64_t max) {
    try {
      read_inputs_file(path, sample(), max);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(err(f, 10).find("more than the limit of 10"), std::string::npos);
  EXPECT_EQ(err(dir, 1 << 20), dir + ": is a directory");
  const std::string fifo = dir + "/fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(err(fifo, 1 << 20), fifo + ": is not a regular file");  // and returns at once: no writer needed
  EXPECT_EQ(err("/dev/zero", 1 << 20), "/dev/zero: is not a regular file");
  std::ofstream(f) << "{\"a\": ";
  EXPECT_EQ(err(f, 1 << 20), f + ": not JSON (byte 7)");
  std::ofstream(f) << "{\"a\": 1}";
  EXPECT_EQ(err(f, 1 << 20), f + ": missing input signals 'in' (6 values), 's.x'");
  // A number too large for a double used to escape as nlohmann's out_of_range, not an InputError.
  std::ofstream(f) << "{\"a\": 1e400}";
  EXPECT_EQ(err(f, 1 << 20), f + ": a number is out of range (give large values as decimal strings)");
  std::filesystem::remove_all(dir);
}

TEST(Witness, ManifestRoundTripAndRejections) {
  const std::string dir = ::testing::TempDir() + "/cuzk_manifest_test";
  std::filesystem::create_directories(dir);
  Manifest m = sample();
  m.circuit = "c";
  m.key = "abc";
  write_manifest(dir, m);
  ASSERT_TRUE(is_artefact(dir));
  Manifest r = read_manifest(dir);
  EXPECT_EQ(r.prime, m.prime);
  EXPECT_EQ(r.curve(), "bls12381");
  EXPECT_EQ(r.n_inputs, 8u);
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.inputs[1].name, "in");
  EXPECT_EQ(r.inputs[1].hash, fnv1a("in"));
  EXPECT_EQ(r.inputs[1].size, 6u);
  auto err = [&](const std::string& text) {
    std::ofstream(dir + "/manifest.json") << text;
    try {
      read_manifest(dir);
    } catch (const WitnessError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(err("{").find("not JSON"), std::string::npos);
  EXPECT_NE(err("{\"format\": \"x\"}").find("not a cuzk witness-generator manifest"), std::string::npos);
  write_manifest(dir, m);
  std::ifstream in(dir + "/manifest.json");
  json good_json = json::parse(in);
  json bad = good_json;
  bad["version"] = 99;
  EXPECT_NE(err(bad.dump()).find("manifest version 99"), std::string::npos);
  bad = good_json;
  bad["n_inputs"] = 9;
  EXPECT_NE(err(bad.dump()).find("the inputs cover 8 values, n_inputs is 9"), std::string::npos);
  bad = good_json;
  bad["inputs"][1]["offset"] = 7;
  EXPECT_NE(err(bad.dump()).find("out of range"), std::string::npos);
  bad = good_json;
  bad["prime"] = json::array({"1", "2"});
  EXPECT_NE(err(bad.dump()).find("prime must be 4 limbs"), std::string::npos);
  // What a generator was built from: absent in manifests written before circom's .wasm was taken.
  EXPECT_EQ(r.source, "cpp");
  EXPECT_EQ(r.dat_path(), dir + "/circuit.dat");
  bad = good_json;
  bad.erase("source");
  EXPECT_EQ(err(bad.dump()), "(accepted)");
  bad["source"] = "rust";
  EXPECT_NE(err(bad.dump()).find("'source' must be cpp or wasm"), std::string::npos);
  m.source = "wasm";
  write_manifest(dir, m);
  EXPECT_EQ(read_manifest(dir).dat_path(), "-");
  std::filesystem::remove_all(dir);
}

namespace {

// The shape of wasm2c's C (Debian's wabt 1.0.32, module name "circuit"): declarations, then
// definitions whose bodies end with a "}" line, calls passing the instance first.
const char* const kWasmHeader = R"(
/* import: 'runtime' 'exceptionHandler' */
void Z_runtimeZ_exceptionHandler(struct Z_runtime_instance_t*, u32);
wasm_rt_memory_t* Z_circuitZ_memory(Z_circuit_instance_t* instance);
void Z_circuitZ_init(Z_circuit_instance_t*, u32);
u32 Z_circuitZ_getFieldNumLen32(Z_circuit_instance_t*);
void Z_circuitZ_getRawPrime(Z_circuit_instance_t*);
u32 Z_circuitZ_readSharedRWMemory(Z_circuit_instance_t*, u32);
void Z_circuitZ_writeSharedRWMemory(Z_circuit_instance_t*, u32, u32);
void Z_circuitZ_setInputSignal(Z_circuit_instance_t*, u32, u32, u32);
u32 Z_circuitZ_getInputSize(Z_circuit_instance_t*);
u32 Z_circuitZ_getWitnessSize(Z_circuit_instance_t*);
void Z_circuitZ_getWitness(Z_circuit_instance_t*, u32);
u32 Z_circuitZ_getMessageChar(Z_circuit_instance_t*);
)";

std::string wasm_c(const std::string& template_body) {
  return R"(static void w2c_Fr_F1m_mul(Z_circuit_instance_t*, u32, u32, u32);
static void w2c_Fr_copy(Z_circuit_instance_t*, u32, u32);
static void w2c_Fr_int_zero(Z_circuit_instance_t*, u32);
static u32 w2c_Fr_isTrue(Z_circuit_instance_t*, u32);
static u32 w2c_Fr_toInt(Z_circuit_instance_t*, u32);
static void w2c_Fr_toLongNormal(Z_circuit_instance_t*, u32);
static u32 w2c_Fr_eqR(Z_circuit_instance_t*, u32, u32);
static u32 w2c_Fr_isNegative(Z_circuit_instance_t*, u32);
static void w2c_Fr_mul(Z_circuit_instance_t*, u32, u32, u32);
static u32 w2c_getInputSignalMapPosition(Z_circuit_instance_t*, u64);
static void w2c_setInputSignal(Z_circuit_instance_t*, u32, u32, u32);
static u32 w2c_Main_0_run(Z_circuit_instance_t*, u32);

static void w2c_Fr_F1m_mul(Z_circuit_instance_t* instance, u32 w2c_x, u32 w2c_y, u32 w2c_r) {
  FUNC_PROLOGUE;
}
static void w2c_Fr_mul(Z_circuit_instance_t* instance, u32 w2c_pR, u32 w2c_pA, u32 w2c_pB) {
  w2c_Fr_F1m_mul(instance, w2c_pA, w2c_pB, w2c_pR);
  w2c_Fr_toLongNormal(instance, w2c_pR);
}
static void w2c_setInputSignal(Z_circuit_instance_t* instance, u32 w2c_hmsb, u32 w2c_hlsb, u32 w2c_pos) {
  w2c_i2 = w2c_Fr_toInt(instance, w2c_i2);
  w2c_Fr_int_zero(instance, w2c_i1);
  w2c_i0 = w2c_Fr_eqR(instance, w2c_i0, w2c_i1);
  w2c_Fr_copy(instance, w2c_i0, w2c_i1);
}
static u32 w2c_Main_0_run(Z_circuit_instance_t* instance, u32 w2c_offset) {
)" + template_body + "}\n";
}

}  // namespace

TEST(WitnessWasm, RuntimeCallsOfGeneratedCodeGoThroughHooks) {
  const wasm::Translation t = wasm::route_runtime_calls(
      wasm_c("  w2c_Fr_mul(instance, w2c_i1, w2c_i2, w2c_i3);\n  w2c_i0 = w2c_Fr_isTrue(instance, w2c_i0);\n"
             "  w2c_Fr_copy(instance, w2c_i0, w2c_i1);\n"),
      kWasmHeader);
  EXPECT_TRUE(t.missing.empty());
  EXPECT_EQ(t.untraceable, "");
  // The template's calls, through the hooks; copies move symbols untouched.
  EXPECT_NE(t.code.find("  cuzk_hook_Fr_mul(instance, w2c_i1, w2c_i2, w2c_i3);"), std::string::npos);
  EXPECT_NE(t.code.find("  w2c_i0 = cuzk_hook_Fr_isTrue(instance, w2c_i0);"), std::string::npos);
  EXPECT_NE(t.code.find("CUZK_HOOK_BINARY(Fr_mul, 4)"), std::string::npos);
  EXPECT_NE(t.code.find("static void cuzk_hook_Fr_mul(Z_circuit_instance_t*, u32, u32, u32);"), std::string::npos);
  // setInputSignal's reading of its value has hooks of its own; the runtime's calls are its own.
  EXPECT_NE(t.code.find("  w2c_i2 = cuzk_input_Fr_toInt(instance, w2c_i2);"), std::string::npos);
  EXPECT_NE(t.code.find("  w2c_i0 = cuzk_input_Fr_eqR(instance, w2c_i0, w2c_i1);"), std::string::npos);
  EXPECT_NE(t.code.find("  w2c_Fr_int_zero(instance, w2c_i1);"), std::string::npos);
  EXPECT_NE(t.code.find("  w2c_Fr_F1m_mul(instance, w2c_pA, w2c_pB, w2c_pR);\n  w2c_Fr_toLongNormal(instance, w2c_pR);"),
            std::string::npos);
  EXPECT_EQ(t.code.find("cuzk_hook_Fr_copy"), std::string::npos);
  // The Montgomery product's definition is renamed: the glue's native one stands in for it.
  EXPECT_NE(t.code.find("static void cuzk_wasm_Fr_F1m_mul(Z_circuit_instance_t* instance,"), std::string::npos);
  EXPECT_NE(t.code.find("#define CUZK_NATIVE_MUL 1"), std::string::npos);
  // The runtime by operation number, for the tracer: only what the module has.
  EXPECT_NE(t.code.find("case 4: w2c_Fr_mul(i, r, a, b); return;"), std::string::npos);
  EXPECT_EQ(t.code.find("w2c_Fr_add(i"), std::string::npos);
}

TEST(WitnessWasm, UnknownRuntimeCallsMakeItUntraceableNotWrong) {
  // A template that reads a value through a runtime function the tracer does not follow: the
  // generator is still made (the call stays as it was), the tracer is not.
  const wasm::Translation t =
      wasm::route_runtime_calls(wasm_c("  w2c_i0 = w2c_Fr_isNegative(instance, w2c_i0);\n"), kWasmHeader);
  EXPECT_TRUE(t.missing.empty());
  EXPECT_NE(t.untraceable.find("Main_0_run calls Fr_isNegative"), std::string::npos) << t.untraceable;
  EXPECT_NE(t.code.find("  w2c_i0 = w2c_Fr_isNegative(instance, w2c_i0);"), std::string::npos);
}

TEST(WitnessWasm, ModulesThatAreNotCircomsAreNamedForWhatTheyLack) {
  std::string h = kWasmHeader;
  h.replace(h.find("void Z_circuitZ_getWitness("), 27, "void Z_circuitZ_getWitnessX(");
  h += "/* import: 'env' 'memory' */\n";
  std::string c = wasm_c("");
  c.replace(c.find("w2c_getInputSignalMapPosition"), 29, "w2c_unrelated");
  const wasm::Translation t = wasm::route_runtime_calls(c, h);
  std::string all;
  for (const std::string& m : t.missing) all += m + ";";
  EXPECT_NE(all.find("export getWitness;"), std::string::npos) << all;
  EXPECT_NE(all.find("import 'env' 'memory';"), std::string::npos) << all;
  EXPECT_NE(all.find("function getInputSignalMapPosition;"), std::string::npos) << all;
}
