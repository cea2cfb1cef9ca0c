// Building a witness generator artefact from circom's .wasm (circom --wasm: <name>_js/<name>.wasm):
// wasm2c (Debian's wabt) translates the module to C, every call its generated code makes to circom's
// runtime (Fr_add, Fr_isTrue, ...) is routed through a hook, and the C is compiled with cuzk's wasm
// driver (witness/driver/wasm_driver.cpp) into the same kind of artefact as circom's C++ output: a
// `generator` that serves witnesses in forked children, and a `tracer` (the same executable) that
// records the runtime calls of one run, whose hooks are idle in the generator.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "witness/build.hpp"
#include "witness/manifest.hpp"

namespace cuzk::witness::wasm {

struct Source {
  std::filesystem::path wasm;  // circom's <name>.wasm
  std::string name;
  std::filesystem::path sym;  // circom's <name>.sym beside the wasm or beside its <name>_js folder, if any
};

// The .wasm that `path` names: the file itself, or the one .wasm in a folder (circom's <name>_js);
// nullopt for a folder without one (circom's C++ output). Throws WitnessError for anything else.
std::optional<Source> find_wasm(const std::string& path);

// The versions of the tools and the runtime sources a build uses, for the keys.
struct Tools {
  std::string wasm2c, gcc, gxx;
  std::filesystem::path runtime_dir;  // wasm2c's runtime (wasm-rt-impl.c) and its header (wasm-rt.h)
  std::filesystem::path header_dir;
};
Tools toolchain();

std::string key_of(const Source& s, const Tools& tools);

// Builds the artefact's files into work (a fresh folder): the generator, its tracer (or tracer.failed,
// with the reason the wasm cannot be traced), and returns their manifest. The objects every wasm
// shares (wasm2c's runtime, cuzk's driver) are compiled once into <runtime_cache>/<key>/.
Manifest build(const Source& s, const std::filesystem::path& work, const std::filesystem::path& runtime_cache,
               const Tools& tools, const Log& log);

// The translation of one module, made ready for the hooks: what the transform found, and its output.
struct Translation {
  std::string code;               // the C to compile: wasm2c's, its runtime calls routed to the hooks
  std::vector<std::string> missing;  // the exports and functions a generator needs that the module lacks
  std::string untraceable;        // why the tracer cannot trace it, or ""
};
// Routes the runtime calls in wasm2c's C (`c`, with its header `h`, translated with module name
// "circuit") through hooks: numbered from cuzk's operations, defined after the code.
Translation route_runtime_calls(const std::string& c, const std::string& h);

}  // namespace cuzk::witness::wasm
