// Compiling circom's C++ witness generator (`circom --c` output: <name>_cpp/) into an artefact: the
// generated sources plus cuzk's driver, built with g++ and nasm and linked statically with GMP; or
// circom's .wasm (`circom --wasm`: <name>_js/<name>.wasm), through wasm2c (witness/wasm_build.hpp). A
// build killed midway leaves nothing running (witness/tool.hpp) and nothing that the next build or
// start does not remove (witness/scratch.hpp).
#pragma once
#include <functional>
#include <string>

#include "witness/manifest.hpp"

namespace cuzk::witness {

using Log = std::function<void(const std::string&)>;

// Builds the artefact of src (a <name>_cpp folder, a <name>_js folder or a .wasm) into out
// (replacing it). Throws WitnessError with the compiler's output tail when a step fails. The objects
// every circuit on the same prime shares (circom's runtime, cuzk's driver and tracer; for a .wasm,
// wasm2c's runtime and cuzk's wasm driver) are compiled once into <cache_root>/runtime/<key>/,
// keyed by those sources, the flags and the tools' versions, and linked from there by later builds.
Manifest build_generator(const std::string& src, const std::string& out, const std::string& cache_root,
                         const Log& log = {});

// The artefact for `path`: path itself when it is an artefact; otherwise the cached build of the
// source folder under cache_root (<cache_root>/<name>-<key>), built first when missing (its runtime
// objects from <cache_root>/runtime/ as build_generator's). Concurrent callers (several workers, the
// supervisor) build it once: the cache is locked while building.
Manifest open_generator(const std::string& path, const std::string& cache_root, const Log& log = {});

// Removes what builds killed midway left under cache_root: their scratch folders, once the process
// that filled each is gone (witness/scratch.hpp). Both functions above do it first (build_generator
// in out's folder too); a daemon does it at start, whether or not it has a generator to open.
void sweep_cache(const std::string& cache_root);

}  // namespace cuzk::witness
