// Builds circom's C++ witness generator into an artefact, and keeps a cache of them keyed by a hash
// of everything that goes into the executable, beside a cache of the objects that every circuit on
// the same prime shares (circom's runtime, cuzk's driver and tracer).
#include "witness/build.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <vector>

#include "witness/build_tools.hpp"
#include "witness/driver_source.hpp"
#include "witness/file_lock.hpp"
#include "witness/scratch.hpp"
#include "witness/wasm_build.hpp"

namespace cuzk::witness {

namespace fs = std::filesystem;

namespace {

using build_tools::command_output;
using build_tools::read_file;
using build_tools::spawn;
using build_tools::tail_of;
using build_tools::wait_for;

// The flags every object is compiled with. circom's own Makefile uses -O3; -O2 builds large generated
// circuits markedly faster at about the same witness speed.
const std::vector<std::string> kCxxFlags = {"-std=c++17", "-O2", "-fno-strict-aliasing", "-w"};

// The folder circom wrote: <name>.cpp + <name>.dat, and its runtime files.
struct Sources {
  fs::path dir;
  std::string name;
  fs::path sym;  // <name>.sym beside the folder, when circom was run with --sym
};

Sources find_sources(const std::string& src) {
  Sources s;
  std::error_code ec;
  s.dir = fs::canonical(src, ec);
  if (ec) throw WitnessError(src + ": " + ec.message());
  if (!fs::is_directory(s.dir))
    throw WitnessError(src + ": expected circom's <name>_cpp folder (--c), or its <name>_js folder or .wasm file (--wasm)");
  std::vector<std::string> dats;
  for (const auto& e : fs::directory_iterator(s.dir))
    if (e.path().extension() == ".dat") dats.push_back(e.path().stem().string());
  if (dats.size() != 1)
    throw WitnessError(src + ": expected exactly one <name>.dat (circom --c output) or one .wasm (circom --wasm), found " +
                       std::to_string(dats.size()) + " .dat files");
  s.name = dats[0];
  const std::string needed[] = {s.name + ".cpp", "calcwit.cpp", "calcwit.hpp", "circom.hpp",
                                "fr.cpp",          "fr.hpp",      "fr.asm",      "main.cpp"};
  for (const std::string& f : needed)
    if (!fs::is_regular_file(s.dir / f)) throw WitnessError(src + ": missing " + f + " (not circom --c output?)");
  fs::path sym = s.dir.parent_path() / (s.name + ".sym");
  if (fs::is_regular_file(sym)) s.sym = sym;
  return s;
}

// The versions of the tools that make the objects, for the cache keys.
struct Tools {
  std::string gxx, nasm, binutils;  // binutils: nm and objcopy, which make the tracer's copy of the runtime
};
Tools toolchain() {
  return {command_output({"g++", "--version"}), command_output({"nasm", "-v"}), command_output({"objcopy", "--version"})};
}

// The regular files of the source folder, sorted, but for circom's Makefile (unused).
std::vector<fs::path> source_files(const Sources& s) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(s.dir))
    if (e.is_regular_file() && e.path().filename() != "Makefile") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string key_of(const Sources& s, const Tools& tools) {
  build_tools::Hasher h;
  for (const EmbeddedSource& src : kDriverSources) h.add(src.text);
  for (const std::string& f : kCxxFlags) h.add(f);
  h.add(tools.gxx);
  h.add(tools.nasm);
  for (const fs::path& f : source_files(s)) {
    h.add(f.filename().string());
    h.add_file(f);
  }
  if (s.sym.empty()) h.add(std::string());
  else h.add_file(s.sym);
  return h.hex();
}

// The objects that every generator links beside its circuit.o: circom's runtime and cuzk's driver.
const char* const kRuntimeObjects[] = {"fr_asm.o", "calcwit.o", "fr.o", "circom_main.o", "driver.o"};
// The tracer's: cuzk's tracer, and circom's runtime again with its own functions renamed Fr_* -> Rl_*.
const char* const kTracerObjects[] = {"tracer.o", "rl_fr.o", "rl_fr_asm.o"};
// What the steps below make of the same sources with the same tools; changed whenever they change.
const char* const kRuntimeRecipe = "runtime 1: main.cpp -Dmain=cuzk_circom_generated_main, objcopy Fr_* Rl_*";

// The key of the runtime objects: every file of the source folder but the circuit's own <name>.cpp
// and <name>.dat (circom writes the same runtime files for every circuit on the same prime; any other
// file there could be a header they include), cuzk's driver and tracer, the flags and the tools.
std::string runtime_key(const Sources& s, const Tools& tools) {
  build_tools::Hasher h;
  h.add(kRuntimeRecipe);
  for (const EmbeddedSource& src : kDriverSources) h.add(src.text);
  for (const std::string& f : kCxxFlags) h.add(f);
  for (const std::string* t : {&tools.gxx, &tools.nasm, &tools.binutils}) h.add(*t);
  for (const fs::path& f : source_files(s)) {
    const std::string n = f.filename().string();
    if (n == s.name + ".cpp" || n == s.name + ".dat") continue;
    h.add(n);
    h.add_file(f);
  }
  return h.hex();
}

// The tracer's copy of circom's runtime in dir, from fr.o and fr_asm.o there: its own functions
// renamed Fr_* -> Rl_* (same length, so C++ names stay well-formed). Returns "" or why it failed.
std::string rename_runtime(const fs::path& dir) {
  const std::string logf = (dir / "tracer.log").string();
  const std::string syms = (dir / "fr_symbols.txt").string();
  if (wait_for(spawn({"nm", "-g", "--defined-only", (dir / "fr.o").string(), (dir / "fr_asm.o").string()}, syms)) != 0)
    return "nm failed: " + tail_of(read_file(syms), 500);
  std::ofstream map(dir / "fr_rename.txt");
  std::istringstream in(read_file(syms));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string addr, type, name;
    if (!(ls >> addr >> type >> name) || (type != "T" && type != "W")) continue;
    const size_t at = name.find("Fr_");
    if (at == std::string::npos) continue;
    std::string renamed = name;
    renamed.replace(at, 3, "Rl_");
    map << name << " " << renamed << "\n";
  }
  map.close();
  for (const char* o : {"fr.o", "fr_asm.o"})
    if (wait_for(spawn({"objcopy", "--redefine-syms=" + (dir / "fr_rename.txt").string(), (dir / o).string(),
                        (dir / (std::string("rl_") + o)).string()},
                       logf)) != 0)
      return "objcopy failed: " + tail_of(read_file(logf), 500);
  return "";
}

// The tracer: the same circuit objects linked with cuzk's tracer in place of circom's runtime, whose
// own functions stay in, renamed, for the tracer's concrete values. A tracer that cannot be made
// leaves the generator usable: the reason is kept in tracer.failed, and the circuit runs on the
// native generator.
void link_tracer(const Sources& s, const fs::path& work, const fs::path& rt, const std::string& not_made,
                 const Log& log) {
  const std::string logf = (work / "tracer.log").string();
  auto fail = [&](const std::string& why) {
    std::ofstream(work / "tracer.failed") << why << "\n";
    if (log) log("witness tracer: " + why);
  };
  if (!not_made.empty()) return fail(not_made);
  std::vector<std::string> link = {"g++", "-no-pie", "-o", (work / "tracer").string(), (work / "circuit.o").string()};
  for (const char* o : {"calcwit.o", "circom_main.o", "tracer.o", "rl_fr.o", "rl_fr_asm.o"})
    link.push_back((rt / o).string());
  for (const char* a : {"-static-libstdc++", "-static-libgcc", "-Wl,-Bstatic", "-lgmp", "-Wl,-Bdynamic", "-pthread"})
    link.push_back(a);
  if (log) log("witness tracer " + s.name + ": linking");
  if (wait_for(spawn(link, logf)) != 0) return fail("linking the tracer failed: " + tail_of(read_file(logf), 1000));
  fs::remove(work / "tracer.log");
}

// Compiles the circuit into work, and the runtime objects into <runtime_cache>/<key> unless they are
// there already (build_tools::SharedObjects), then links the generator and the tracer. A runtime
// whose tracer could not be made is not kept: the next build tries again.
void compile(const Sources& s, const fs::path& work, const fs::path& runtime_cache, const Tools& tools,
             const Log& log) {
  const std::string logf = (work / "build.log").string();
  const std::string inc = "-I" + s.dir.string();
  std::vector<std::string> objects(std::begin(kRuntimeObjects), std::end(kRuntimeObjects));
  objects.insert(objects.end(), std::begin(kTracerObjects), std::end(kTracerObjects));
  build_tools::SharedObjects rt(runtime_cache, runtime_key(s, tools), objects);
  auto cxx = [&](const std::string& src, const fs::path& obj, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"g++"};
    a.insert(a.end(), kCxxFlags.begin(), kCxxFlags.end());
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {inc, "-c", src, "-o", obj.string()});
    return a;
  };
  std::vector<build_tools::Step> steps = {{cxx((s.dir / (s.name + ".cpp")).string(), work / "circuit.o"), logf}};
  const size_t tracer_step = 6;
  const fs::path& d = rt.dir();
  if (rt.hit()) {
    if (log) log("witness generator " + s.name + ": circom's runtime and cuzk's driver from " + d.string());
  } else {
    for (const auto& [name, text] : kDriverSources) std::ofstream(d / name) << text;
    const std::string own = "-I" + d.string();
    steps.push_back({{"nasm", "-felf64", (s.dir / "fr.asm").string(), "-o", (d / "fr_asm.o").string()}, logf});
    steps.push_back({cxx((s.dir / "calcwit.cpp").string(), d / "calcwit.o"), logf});
    steps.push_back({cxx((s.dir / "fr.cpp").string(), d / "fr.o"), logf});
    steps.push_back({cxx((s.dir / "main.cpp").string(), d / "circom_main.o", {"-Dmain=cuzk_circom_generated_main"}),
                     logf});
    steps.push_back({cxx((d / "driver.cpp").string(), d / "driver.o", {own}), logf});
    steps.push_back({cxx((d / "tracer.cpp").string(), d / "tracer.o", {own}), (d / "tracer.log").string(), true});
  }
  std::string cannot_start, tracer_failed;
  for (size_t step : build_tools::run_steps(steps, log, "witness generator " + s.name, &cannot_start)) {
    if (step == tracer_step && cannot_start.empty()) {  // the generator is still made without it
      tracer_failed = "compiling the tracer against " + s.dir.string() + " failed: " +
                      tail_of(read_file(steps[step].log), 1000);
      continue;
    }
    throw WitnessError("building the witness generator of " + s.dir.string() + ": " +
                       (cannot_start.empty() ? steps[step].argv[0] + " failed" : cannot_start) + ": " +
                       tail_of(read_file(logf), 1500));
  }
  if (!rt.hit()) {
    if (tracer_failed.empty()) tracer_failed = rename_runtime(d);
    for (const auto& [name, text] : kDriverSources) fs::remove(d / name);
    for (const char* f : {"tracer.log", "fr_symbols.txt", "fr_rename.txt"}) fs::remove(d / f);
    if (tracer_failed.empty()) rt.keep();
  }
  std::vector<std::string> link = {"g++", "-no-pie", "-o", (work / "generator").string(), (work / "circuit.o").string()};
  for (const char* o : kRuntimeObjects) link.push_back((rt.dir() / o).string());
  for (const char* a : {"-static-libstdc++", "-static-libgcc", "-Wl,-Bstatic", "-lgmp", "-Wl,-Bdynamic", "-pthread"})
    link.push_back(a);
  if (log) log("witness generator " + s.name + ": linking");
  if (wait_for(spawn(link, logf)) != 0)
    throw WitnessError("linking the witness generator of " + s.dir.string() + " failed: " +
                       tail_of(read_file(logf), 1500));
  link_tracer(s, work, rt.dir(), tracer_failed, log);
  fs::remove(work / "circuit.o");
}

// The runtime objects' cache under a generator cache.
fs::path runtime_cache_of(const std::string& cache_root) { return fs::path(cache_root) / "runtime"; }

// How one source becomes an artefact: its name, its key and the build into a fresh folder.
struct Recipe {
  std::string name, key;
  std::function<Manifest(const fs::path& work, const Log& log)> make;
};

Recipe recipe_of(const std::string& src, const std::string& cache_root) {
  if (auto w = wasm::find_wasm(src)) {
    const wasm::Tools tools = wasm::toolchain();
    return {w->name, wasm::key_of(*w, tools), [w = *w, tools, cache_root](const fs::path& work, const Log& log) {
              return wasm::build(w, work, runtime_cache_of(cache_root), tools, log);
            }};
  }
  Sources s = find_sources(src);
  const Tools tools = toolchain();
  return {s.name, key_of(s, tools), [s, tools, cache_root](const fs::path& work, const Log& log) {
            compile(s, work, runtime_cache_of(cache_root), tools, log);
            fs::copy_file(s.dir / (s.name + ".dat"), work / "circuit.dat");
            return build_tools::describe(s.dir.string(), work, (work / "circuit.dat").string(), s.name, s.sym, "");
          }};
}

Manifest build_into(const Recipe& r, const fs::path& out, const Log& log) {
  ScratchDir scratch(out.parent_path(), out.filename().string());
  const fs::path& work = scratch.path();
  Manifest m = r.make(work, log);
  m.key = r.key;
  write_manifest(work.string(), m);
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::rename(work, out);
  scratch.keep();
  return read_manifest(out.string());
}

}  // namespace

void sweep_cache(const std::string& cache_root) {
  sweep_scratch(cache_root);
  sweep_scratch(runtime_cache_of(cache_root));
}

Manifest build_generator(const std::string& src, const std::string& out, const std::string& cache_root,
                         const Log& log) {
  fs::path o = fs::absolute(out).lexically_normal();
  if (o.filename().empty()) o = o.parent_path();
  std::error_code ec;
  fs::create_directories(o.parent_path(), ec);
  sweep_scratch(o.parent_path());
  sweep_cache(cache_root);
  return build_into(recipe_of(src, cache_root), o, log);
}

Manifest open_generator(const std::string& path, const std::string& cache_root, const Log& log) {
  if (is_artefact(path)) {
    std::error_code ec;
    Manifest m = read_manifest(fs::canonical(path, ec).string());
    if (::access(m.generator_path().c_str(), X_OK) != 0) throw WitnessError(m.generator_path() + ": not executable");
    return m;
  }
  std::error_code ec;
  fs::create_directories(cache_root, ec);
  if (ec) throw WitnessError(cache_root + ": " + ec.message());
  sweep_cache(cache_root);
  const Recipe r = recipe_of(path, cache_root);
  const fs::path out = fs::path(cache_root) / (r.name + "-" + r.key.substr(0, 16));
  auto cached = [&]() -> std::optional<Manifest> {
    if (!is_artefact(out.string())) return std::nullopt;
    try {
      Manifest m = read_manifest(out.string());
      if (m.key == r.key && ::access(m.generator_path().c_str(), X_OK) == 0) return m;
    } catch (const WitnessError&) {
    }
    return std::nullopt;
  };
  if (auto m = cached()) return *m;
  FileLock lock((fs::path(cache_root) / ("." + out.filename().string() + ".lock")).string());
  if (auto m = cached()) return *m;  // another process built it while this one waited
  if (log) log("compiling the witness generator " + path + " into " + out.string());
  return build_into(r, out, log);
}

}  // namespace cuzk::witness
