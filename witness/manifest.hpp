// A compiled witness generator ("artefact"): a folder holding the `generator` executable (circom's
// --c output linked with cuzk's driver, with the circuit's `.dat`; or circom's --wasm output translated
// to C and linked with cuzk's wasm driver), its `tracer`, and `manifest.json`, which describes the
// circuit's main input signals so that inputs can be checked without running generated code.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cuzk::witness {

// A 256-bit field element in normal (not Montgomery) form, little-endian 64-bit limbs: the layout of
// a .wtns value and of circom's FrRawElement.
using Value = std::array<uint64_t, 4>;

// An artefact or a generator source folder that cannot be used; the message names the file.
struct WitnessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One main input signal (an array counts once, with size = its flattened length).
struct InputSignal {
  std::string name;     // as in the input JSON ("in", "path.elements"); "" when the names are unknown
  uint64_t hash = 0;    // circom's FNV-1a of the name: the key of the generator's input table
  uint32_t offset = 0;  // first position among the main inputs (signal id - input_start)
  uint32_t size = 0;    // number of values
};

struct Manifest {
  static constexpr uint32_t kVersion = 1;
  std::string dir;               // the artefact folder (absolute)
  std::string circuit;           // the generated circuit's name (<name>.cpp in circom's output)
  Value prime{};                 // the field's modulus (the generator's Fr_q)
  uint32_t n_witness = 0;        // values in a witness (the r1cs's nWires / the zkey's nVars)
  uint32_t n_signals = 0;        // signals the generator computes (witness + eliminated ones)
  uint32_t input_start = 0;      // signal id of the first main input
  uint32_t n_inputs = 0;         // total main input values
  bool names_known = false;      // the signal names came from circom's .sym file
  std::vector<InputSignal> inputs;  // sorted by offset
  std::string key;               // hash of the sources, the driver and the compilers
  std::string source = "cpp";    // what it was built from: "cpp" (circom --c) or "wasm" (circom --wasm)

  // "bls12381", "bn128", or "" for another prime.
  std::string curve() const;
  // The input signal whose name (or, when names are unknown, whose hash) matches; nullptr if none.
  const InputSignal* find(std::string_view name) const;
  std::string generator_path() const { return dir + "/generator"; }
  // The generator's argument: circom's .dat; "-" for a wasm, which carries its data.
  std::string dat_path() const { return source == "wasm" ? "-" : dir + "/circuit.dat"; }
};

// circom's hash of an input signal name (64-bit FNV-1a over its bytes).
uint64_t fnv1a(std::string_view s);

// Reads <dir>/manifest.json; throws WitnessError naming the file and field.
Manifest read_manifest(const std::string& dir);
void write_manifest(const std::string& dir, const Manifest& m);
// True when dir holds a manifest.json (a built artefact rather than circom's source folder).
bool is_artefact(const std::string& dir);

}  // namespace cuzk::witness
