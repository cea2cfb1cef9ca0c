// Builds circom's .wasm into a witness generator artefact: wasm2c, the runtime calls routed through
// hooks, gcc, and cuzk's wasm driver.
#include "witness/wasm_build.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "witness/build_tools.hpp"
#include "witness/driver_source.hpp"
#include "witness/program/ops.hpp"

namespace cuzk::witness::wasm {

namespace fs = std::filesystem;
using build_tools::read_file;
using build_tools::tail_of;

namespace {

// The flags of every object. -O2 compiles wasm2c's C of a large circuit in about the time of -O1
// and runs it faster.
const std::vector<std::string> kCFlags = {"-O2", "-fno-strict-aliasing", "-w"};
const std::vector<std::string> kCxxFlags = {"-std=c++17", "-O2", "-fno-strict-aliasing", "-w"};
// What the steps below make of the same sources with the same tools; changed whenever they change.
const char* const kRuntimeRecipe = "wasm runtime 1: wasm-rt-impl.c, wasm_driver.cpp";
const char* const kModuleRecipe = "wasm module 1: wasm2c -n circuit, runtime calls through cuzk's hooks";
const char* const kRuntimeObjects[] = {"wasm-rt-impl.o", "wasm_driver.o"};

// Where Debian's wabt keeps wasm2c's runtime: its source and the header the translated C includes.
const char* const kRuntimeDirs[] = {"/usr/share/wabt/wasm2c", "/usr/src/wasm2c", "/usr/local/share/wabt/wasm2c"};
const char* const kHeaderDirs[] = {"/usr/include", "/usr/local/include", "/usr/share/wabt/wasm2c", "/usr/src/wasm2c"};

// A runtime function the generated code calls, and how its hook traces it.
enum class Hook { Binary, Unary, IsTrue, ToInt, Normalize, Copy };
struct RuntimeFn {
  const char* name;
  Hook hook;
  unsigned op;  // program::Op, or for Normalize: 0 toNormal, 1 toLongNormal, 2 toMontgomery
};
const RuntimeFn kRuntimeFns[] = {
    {"Fr_add", Hook::Binary, program::Add},     {"Fr_sub", Hook::Binary, program::Sub},
    {"Fr_mul", Hook::Binary, program::Mul},     {"Fr_band", Hook::Binary, program::Band},
    {"Fr_bor", Hook::Binary, program::Bor},     {"Fr_bxor", Hook::Binary, program::Bxor},
    {"Fr_shl", Hook::Binary, program::Shl},     {"Fr_shr", Hook::Binary, program::Shr},
    {"Fr_eq", Hook::Binary, program::Eq},       {"Fr_neq", Hook::Binary, program::Neq},
    {"Fr_lt", Hook::Binary, program::Lt},       {"Fr_gt", Hook::Binary, program::Gt},
    {"Fr_leq", Hook::Binary, program::Leq},     {"Fr_geq", Hook::Binary, program::Geq},
    {"Fr_land", Hook::Binary, program::Land},   {"Fr_lor", Hook::Binary, program::Lor},
    {"Fr_idiv", Hook::Binary, program::Idiv},   {"Fr_mod", Hook::Binary, program::Mod},
    {"Fr_pow", Hook::Binary, program::Pow},     {"Fr_div", Hook::Binary, program::Div},
    {"Fr_neg", Hook::Unary, program::Neg},      {"Fr_square", Hook::Unary, program::Square},
    {"Fr_bnot", Hook::Unary, program::Bnot},    {"Fr_lnot", Hook::Unary, program::Lnot},
    {"Fr_inv", Hook::Unary, program::Inv},      {"Fr_isTrue", Hook::IsTrue, 0},
    {"Fr_toInt", Hook::ToInt, 0},               {"Fr_toNormal", Hook::Normalize, 0},
    {"Fr_toLongNormal", Hook::Normalize, 1},    {"Fr_toMontgomery", Hook::Normalize, 2},
    {"Fr_copy", Hook::Copy, 0},                 {"Fr_copyn", Hook::Copy, 0},
};
// The parameter types (after the instance) and result each kind of hook expects.
std::string signature_of(Hook h) {
  switch (h) {
    case Hook::Binary: return "void(u32,u32,u32)";
    case Hook::Unary: return "void(u32,u32)";
    case Hook::IsTrue:
    case Hook::ToInt: return "u32(u32)";
    case Hook::Normalize: return "void(u32)";
    case Hook::Copy: return "";
  }
  return "";
}
// setInputSignal reads its value as an integer and compares it with its short form (its own hooks),
// and clears a short element; getRawPrime copies the prime's words. Raw calls nowhere else.
const std::map<std::string, std::set<std::string>> kRawCalls = {
    {"setInputSignal", {"Fr_toInt", "Fr_eqR", "Fr_int_zero"}}, {"getRawPrime", {"Fr_int_copy"}}};
// The exports the driver calls, and the module's imports it provides.
const char* const kExports[] = {"memory", "init", "getFieldNumLen32", "getRawPrime", "readSharedRWMemory",
                                "writeSharedRWMemory", "setInputSignal", "getInputSize", "getWitnessSize",
                                "getWitness", "getMessageChar"};
const char* const kImports[] = {"exceptionHandler", "printErrorMessage", "writeBufferMessage", "showSharedRWMemory"};

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "static <ret> w2c_<name>(Z_circuit_instance_t*, <types>);" -> name and "ret(types)".
bool parse_declaration(const std::string& line, std::string* name, std::string* sig) {
  const std::string pre = "static ";
  if (line.rfind(pre, 0) != 0 || line.size() < 3 || line.compare(line.size() - 2, 2, ");") != 0) return false;
  const size_t sp = line.find(' ', pre.size());
  if (sp == std::string::npos || line.compare(sp + 1, 4, "w2c_") != 0) return false;
  const size_t open = line.find('(', sp);
  if (open == std::string::npos) return false;
  const std::string first = "Z_circuit_instance_t*";
  if (line.compare(open + 1, first.size(), first) != 0) return false;
  *name = line.substr(sp + 5, open - sp - 5);
  std::string params = line.substr(open + 1 + first.size(), line.size() - 2 - (open + 1 + first.size()));
  params.erase(std::remove(params.begin(), params.end(), ' '), params.end());
  if (!params.empty() && params[0] == ',') params.erase(0, 1);
  *sig = line.substr(pre.size(), sp - pre.size()) + "(" + params + ")";
  return true;
}

// "static <ret> w2c_<name>(Z_circuit_instance_t* instance...) {" -> name.
bool parse_definition(const std::string& line, std::string* name) {
  const std::string pre = "static ";
  if (line.rfind(pre, 0) != 0 || line.size() < 2 || line.compare(line.size() - 2, 2, " {") != 0) return false;
  const size_t sp = line.find(' ', pre.size());
  if (sp == std::string::npos || line.compare(sp + 1, 4, "w2c_") != 0) return false;
  const size_t open = line.find('(', sp);
  if (open == std::string::npos || line.compare(open + 1, 30, "Z_circuit_instance_t* instance") != 0) return false;
  *name = line.substr(sp + 5, open - sp - 5);
  return true;
}

bool is_runtime(const std::string& fn) { return fn.rfind("Fr_", 0) == 0; }

}  // namespace

std::optional<Source> find_wasm(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::canonical(path, ec);
  if (ec) throw WitnessError(path + ": " + ec.message());
  Source s;
  if (fs::is_regular_file(p)) {
    if (p.extension() != ".wasm")
      throw WitnessError(path + ": expected circom's .wasm (--wasm), its <name>_js folder, or its <name>_cpp folder (--c)");
    s.wasm = p;
  } else if (fs::is_directory(p)) {
    std::vector<fs::path> found;
    bool dat = false;
    for (const auto& e : fs::directory_iterator(p)) {
      if (e.path().extension() == ".wasm" && e.is_regular_file()) found.push_back(e.path());
      if (e.path().extension() == ".dat") dat = true;
    }
    if (found.empty() || dat) return std::nullopt;
    if (found.size() != 1)
      throw WitnessError(path + ": expected one .wasm (circom's <name>_js folder), found " + std::to_string(found.size()));
    s.wasm = found[0];
  } else {
    return std::nullopt;
  }
  s.name = s.wasm.stem().string();
  // circom writes <out>/<name>.sym and <out>/<name>_js/<name>.wasm.
  for (const fs::path& sym : {s.wasm.parent_path() / (s.name + ".sym"), s.wasm.parent_path().parent_path() / (s.name + ".sym")})
    if (fs::is_regular_file(sym, ec)) {
      s.sym = sym;
      break;
    }
  return s;
}

Tools toolchain() {
  Tools t;
  t.wasm2c = build_tools::command_output({"wasm2c", "--version"});
  t.gcc = build_tools::command_output({"gcc", "--version"});
  t.gxx = build_tools::command_output({"g++", "--version"});
  std::error_code ec;
  for (const char* d : kRuntimeDirs)
    if (fs::is_regular_file(fs::path(d) / "wasm-rt-impl.c", ec)) {
      t.runtime_dir = d;
      break;
    }
  for (const char* d : kHeaderDirs)
    if (fs::is_regular_file(fs::path(d) / "wasm-rt.h", ec)) {
      t.header_dir = d;
      break;
    }
  return t;
}

namespace {

void require(const Tools& t) {
  if (t.wasm2c.empty() || t.runtime_dir.empty() || t.header_dir.empty())
    throw WitnessError("a circom .wasm needs wasm2c and its runtime (Debian's wabt package: run scripts/setup.sh)");
}

void add_runtime(build_tools::Hasher& h, const Tools& t) {
  h.add(kRuntimeRecipe);
  for (const EmbeddedSource& src : kWasmDriverSources) h.add(src.text);
  for (const std::string& f : kCFlags) h.add(f);
  for (const std::string& f : kCxxFlags) h.add(f);
  for (const std::string* s : {&t.wasm2c, &t.gcc, &t.gxx}) h.add(*s);
  for (const fs::path& f : {t.runtime_dir / "wasm-rt-impl.c", t.runtime_dir / "wasm-rt-impl.h", t.header_dir / "wasm-rt.h"})
    if (fs::is_regular_file(f)) h.add_file(f);
}

std::string runtime_key(const Tools& t) {
  build_tools::Hasher h;
  add_runtime(h, t);
  return h.hex();
}

}  // namespace

std::string key_of(const Source& s, const Tools& tools) {
  require(tools);
  build_tools::Hasher h;
  h.add(kModuleRecipe);
  add_runtime(h, tools);
  h.add_file(s.wasm);
  if (s.sym.empty()) h.add(std::string());
  else h.add_file(s.sym);
  return h.hex();
}

Translation route_runtime_calls(const std::string& c, const std::string& h) {
  Translation t;
  std::map<std::string, const RuntimeFn*> known;
  for (const RuntimeFn& f : kRuntimeFns) known[f.name] = &f;
  for (const char* e : kExports)
    if (h.find(std::string("Z_circuitZ_") + e + "(") == std::string::npos) t.missing.push_back(std::string("export ") + e);
  for (size_t at = h.find("/* import: '"); at != std::string::npos; at = h.find("/* import: '", at + 1)) {
    const size_t end = h.find(" */", at);
    const std::string what = h.substr(at + 11, end == std::string::npos ? 0 : end - at - 11);
    bool ok = false;
    for (const char* i : kImports) ok = ok || what == std::string("'runtime' '") + i + "'";
    if (!ok) t.missing.push_back("import " + what);
  }
  std::map<std::string, std::string> sigs;    // every declared function's signature
  std::set<std::string> hooked, input_hooks;  // the hooks the routed calls need
  std::set<std::string> problems;
  bool native_mul = false;
  std::string out;
  out.reserve(c.size() + (1 << 16));
  std::istringstream in(c);
  std::string line, fn;
  bool in_body = false;
  while (std::getline(in, line)) {
    std::string name, sig;
    if (!in_body && parse_declaration(line, &name, &sig)) sigs[name] = sig;
    if (!in_body && parse_definition(line, &name)) {
      in_body = true;
      fn = name;
      // circom's Montgomery product, renamed: the glue's native one stands in for it once checked.
      if (fn == "Fr_F1m_mul" && sigs[fn] == "void(u32,u32,u32)") {
        line.replace(line.find("w2c_Fr_F1m_mul"), 14, "cuzk_wasm_Fr_F1m_mul");
        native_mul = true;
      }
    } else if (in_body && line == "}") {
      in_body = false;
    } else if (in_body && !is_runtime(fn)) {
      // The calls this function makes to the runtime: "w2c_Fr_<name>(instance".
      std::string routed;
      size_t from = 0;
      for (size_t p = line.find("w2c_Fr_"); p != std::string::npos; p = line.find("w2c_Fr_", p + 1)) {
        if (p > 0 && ident(line[p - 1])) continue;
        size_t e = p + 4;
        while (e < line.size() && ident(line[e])) e++;
        if (line.compare(e, 9, "(instance") != 0) continue;
        const std::string callee = line.substr(p + 4, e - p - 4);
        auto raw = kRawCalls.find(fn);
        const bool raw_ok = raw != kRawCalls.end() && raw->second.count(callee);
        const auto k = known.find(callee);
        std::string to;
        if (fn == "setInputSignal" && (callee == "Fr_toInt" || callee == "Fr_eqR") &&
            sigs[callee] == (callee == "Fr_toInt" ? "u32(u32)" : "u32(u32,u32)")) {
          to = "cuzk_input_" + callee;
          input_hooks.insert(callee);
        } else if (k != known.end() && k->second->hook == Hook::Copy) {
          continue;
        } else if (k != known.end() && sigs[callee] == signature_of(k->second->hook)) {
          to = "cuzk_hook_" + callee;
          hooked.insert(callee);
        } else if (!raw_ok) {
          problems.insert(fn + " calls " + callee);
          continue;
        } else {
          continue;
        }
        routed.append(line, from, p - from);
        routed += to;
        from = e;
      }
      if (from) {
        routed.append(line, from, std::string::npos);
        line.swap(routed);
      }
    }
    out += line;
    out += '\n';
  }
  if (sigs.find("getInputSignalMapPosition") == sigs.end()) t.missing.push_back("function getInputSignalMapPosition");
  if (std::none_of(sigs.begin(), sigs.end(), [](const auto& f) { return is_runtime(f.first); }))
    t.missing.push_back("its functions' names (the name section, which wasm-strip removes)");
  if (!problems.empty()) {
    t.untraceable = "the wasm calls circom's runtime where the tracer cannot follow it (";
    size_t n = 0;
    for (const std::string& p : problems) {
      if (n++ == 5) {
        t.untraceable += ", ...";
        break;
      }
      t.untraceable += (n > 1 ? ", " : "") + p;
    }
    t.untraceable += ")";
  }
  std::string pre = "/* cuzk: wasm2c's translation of a circom .wasm, its calls to circom's runtime routed through\n"
                    " * the hooks below (see cuzk_wasm_glue.h). */\n#include \"circuit.h\"\n#include \"cuzk_wasm_glue.h\"\n";
  std::string post = "\n/* the hooks */\n";
  for (const std::string& f : hooked) {
    const RuntimeFn& r = *known[f];
    const std::string params = r.hook == Hook::Binary ? "u32, u32, u32" : r.hook == Hook::Unary ? "u32, u32" : "u32";
    pre += std::string("static ") + (r.hook == Hook::IsTrue || r.hook == Hook::ToInt ? "u32" : "void") + " cuzk_hook_" +
           f + "(Z_circuit_instance_t*, " + params + ");\n";
    switch (r.hook) {
      case Hook::Binary: post += "CUZK_HOOK_BINARY(" + f + ", " + std::to_string(r.op) + ")\n"; break;
      case Hook::Unary: post += "CUZK_HOOK_UNARY(" + f + ", " + std::to_string(r.op) + ")\n"; break;
      case Hook::IsTrue: post += "CUZK_HOOK_VALUE(" + f + ", cuzk_trace_is_true)\n"; break;
      case Hook::ToInt: post += "CUZK_HOOK_VALUE(" + f + ", cuzk_trace_to_int)\n"; break;
      case Hook::Normalize: post += "CUZK_HOOK_NORMALIZE(" + f + ", " + std::to_string(r.op) + ")\n"; break;
      case Hook::Copy: break;
    }
  }
  for (const std::string& f : input_hooks) {
    pre += std::string("static u32 cuzk_input_") + f + "(Z_circuit_instance_t*, " +
           (f == "Fr_toInt" ? "u32" : "u32, u32") + ");\n";
    post += std::string(f == "Fr_toInt" ? "CUZK_HOOK_INPUT_TO_INT(" : "CUZK_HOOK_INPUT_EQ(") + f + ")\n";
  }
  // circom's runtime by operation, for the tracer's concrete values and its self-test: the functions
  // of the expected signature only; the others abort (and the tracer never asks for them).
  auto has = [&](const char* f, const std::string& sig) { return sigs.count(f) && sigs[f] == sig; };
  std::string bin, un, has_ops;
  for (const RuntimeFn& r : kRuntimeFns) {
    if ((r.hook != Hook::Binary && r.hook != Hook::Unary) || !has(r.name, signature_of(r.hook))) continue;
    (r.hook == Hook::Binary ? bin : un) += "    case " + std::to_string(r.op) + ": w2c_" + r.name + "(i, r, a" +
                                           (r.hook == Hook::Binary ? ", b" : "") + "); return;\n";
    has_ops += "    case " + std::to_string(r.op) + ":\n";
  }
  post += "\nvoid cuzk_wasm_rt_binary(void* i, unsigned op, u32 r, u32 a, u32 b) {\n  switch (op) {\n" + bin +
          "  }\n  abort();\n}\n";
  post += "void cuzk_wasm_rt_unary(void* i, unsigned op, u32 r, u32 a) {\n  switch (op) {\n" + un +
          "  }\n  abort();\n}\n";
  post += "int cuzk_wasm_rt_has(unsigned op) {\n  switch (op) {\n" + has_ops + "      return 1;\n  }\n  return 0;\n}\n";
  auto value_fn = [&](const char* entry, const char* f, const char* sig, const char* params, const char* args) {
    post += std::string("u32 ") + entry + "(void* i, " + params + ") { " +
            (has(f, sig) ? std::string("return w2c_") + f + "(i, " + args + ");" : std::string("abort();")) + " }\n";
  };
  value_fn("cuzk_wasm_rt_is_true", "Fr_isTrue", "u32(u32)", "u32 a", "a");
  value_fn("cuzk_wasm_rt_to_int", "Fr_toInt", "u32(u32)", "u32 a", "a");
  value_fn("cuzk_wasm_rt_eq_raw", "Fr_eqR", "u32(u32,u32)", "u32 a, u32 b", "a, b");
  post += "void cuzk_wasm_rt_normalize(void* i, unsigned which, u32 a) {\n  switch (which) {\n";
  for (const RuntimeFn& r : kRuntimeFns)
    if (r.hook == Hook::Normalize && has(r.name, "void(u32)"))
      post += "    case " + std::to_string(r.op) + ": w2c_" + r.name + "(i, a); return;\n";
  post += "  }\n  abort();\n}\n";
  if (t.untraceable.empty())
    for (const char* f : {"Fr_isTrue", "Fr_toInt", "Fr_toLongNormal", "Fr_eqR"})
      if (!sigs.count(f)) t.untraceable = std::string("the wasm's runtime has no ") + f;
  if (native_mul) post += "\n#define CUZK_NATIVE_MUL 1";
  post += "\n#define CUZK_WASM_GLUE_DEFINE 1\n#include \"cuzk_wasm_glue.h\"\n";
  t.code = pre + out + post;
  return t;
}

Manifest build(const Source& s, const fs::path& work, const fs::path& runtime_cache, const Tools& tools,
               const Log& log) {
  require(tools);
  const std::string logf = (work / "build.log").string(), what = "witness generator " + s.name;
  if (log) log(what + ": wasm2c " + s.wasm.string());
  if (build_tools::wait_for(build_tools::spawn(
          {"wasm2c", "-n", "circuit", s.wasm.string(), "-o", (work / "circuit.c").string()}, logf)) != 0)
    throw WitnessError("translating " + s.wasm.string() + " with wasm2c failed: " + tail_of(read_file(logf), 1500));
  Translation tr = route_runtime_calls(read_file(work / "circuit.c"), read_file(work / "circuit.h"));
  fs::remove(work / "circuit.c");
  if (!tr.missing.empty()) {
    std::string m;
    for (const std::string& x : tr.missing) m += (m.empty() ? "" : ", ") + x;
    throw WitnessError(s.wasm.string() + ": not a circom 2 witness calculator that cuzk can run (" + m + ")");
  }
  std::ofstream(work / "circuit_hooked.c") << tr.code;
  tr.code.clear();
  for (const EmbeddedSource& src : kWasmDriverSources) std::ofstream(work / src.name) << src.text;

  build_tools::SharedObjects rt(runtime_cache, runtime_key(tools),
                                std::vector<std::string>(std::begin(kRuntimeObjects), std::end(kRuntimeObjects)));
  const fs::path& d = rt.dir();
  const std::vector<std::string> inc = {"-I" + work.string(), "-I" + tools.header_dir.string(),
                                        "-I" + tools.runtime_dir.string()};
  auto cc = [&](const char* tool, const std::vector<std::string>& flags, const fs::path& src, const fs::path& obj) {
    std::vector<std::string> a = {tool};
    a.insert(a.end(), flags.begin(), flags.end());
    a.insert(a.end(), inc.begin(), inc.end());
    a.insert(a.end(), {"-c", src.string(), "-o", obj.string()});
    return a;
  };
  std::vector<build_tools::Step> steps = {{cc("gcc", kCFlags, work / "circuit_hooked.c", work / "circuit.o"), logf}};
  if (rt.hit()) {
    if (log) log(what + ": wasm2c's runtime and cuzk's driver from " + d.string());
  } else {
    steps.push_back({cc("gcc", kCFlags, tools.runtime_dir / "wasm-rt-impl.c", d / "wasm-rt-impl.o"), logf});
    steps.push_back({cc("g++", kCxxFlags, work / "wasm_driver.cpp", d / "wasm_driver.o"), logf});
  }
  std::string cannot_start;
  for (size_t step : build_tools::run_steps(steps, log, what, &cannot_start))
    throw WitnessError("building the witness generator of " + s.wasm.string() + ": " +
                       (cannot_start.empty() ? steps[step].argv[0] + " failed" : cannot_start) + ": " +
                       tail_of(read_file(logf), 1500));
  rt.keep();
  std::vector<std::string> link = {"g++", "-o", (work / "generator").string(), (work / "circuit.o").string()};
  for (const char* o : kRuntimeObjects) link.push_back((rt.dir() / o).string());
  for (const char* a : {"-static-libstdc++", "-static-libgcc", "-lm"}) link.push_back(a);
  if (log) log(what + ": linking");
  if (build_tools::wait_for(build_tools::spawn(link, logf)) != 0)
    throw WitnessError("linking the witness generator of " + s.wasm.string() + " failed: " +
                       tail_of(read_file(logf), 1500));
  for (const char* f : {"circuit.o", "circuit.h", "circuit_hooked.c", "build.log"}) fs::remove(work / f);
  for (const EmbeddedSource& src : kWasmDriverSources) fs::remove(work / src.name);
  // The tracer is the generator itself: its hooks trace when it is started as the tracer.
  std::error_code ec;
  if (!tr.untraceable.empty()) {
    std::ofstream(work / "tracer.failed") << tr.untraceable << "\n";
    if (log) log("witness tracer: " + tr.untraceable);
  } else {
    fs::create_hard_link(work / "generator", work / "tracer", ec);
    if (ec) fs::copy_file(work / "generator", work / "tracer", ec);
    if (ec) throw WitnessError((work / "tracer").string() + ": " + ec.message());
  }
  Manifest m = build_tools::describe(s.wasm.string(), work, "-", s.name, s.sym, "");
  m.source = "wasm";
  return m;
}

}  // namespace cuzk::witness::wasm
