// Circuit inputs: the JSON object a circom user passes to `snarkjs wtns calculate`, checked against a
// generator's manifest and turned into the main inputs' values, in signal order.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "witness/manifest.hpp"

namespace cuzk::witness {

// Bad input: a missing or unknown signal, a wrong array length, a value that is not an integer or not
// below the prime. The message names the signal (and the element, for arrays).
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Values accepted, as snarkjs accepts them: JSON integers, and strings in decimal or with a 0x, 0o or
// 0b prefix; a leading '-' means p - |v|. Arrays (nested for multi-dimensional signals) flatten in
// row-major order; objects nest bus fields as "a.b". Every value must be below p.
std::vector<Value> parse_inputs(const nlohmann::json& in, const Manifest& m);

// Reads a JSON file of at most max_bytes (refusing FIFOs, devices and directories), then parse_inputs.
// Errors name the file.
std::vector<Value> read_inputs_file(const std::string& path, const Manifest& m, uint64_t max_bytes);

}  // namespace cuzk::witness
