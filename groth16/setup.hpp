// Development-only Groth16 setup (`cuzk setup`) and the benchmark circuit generator (`cuzk gen-circuit`).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "formats.hpp"

namespace cuzk {

// The toxic waste. Known values make every key point a known multiple of the generator.
struct ToxicWaste {
  Fr tau, alpha, beta, gamma, delta;
};
// Derived deterministically from a seed string, or from the OS CSPRNG when none is given.
ToxicWaste toxic_from_seed(const std::optional<std::string>& seed);

// Builds a zkey for the circuit that snarkjs accepts; coefficient section byte-identical to
// `snarkjs groth16 setup`. progress(done, total) is called from time to time.
ZKey setup_zkey(const R1cs& r1cs, const ToxicWaste& tw,
                const std::function<void(const char*, size_t, size_t)>& progress = {});

// A satisfiable benchmark circuit of 2^log_n constraints (approximately: rows are filled up to the
// domain minus the public rows) with a realistic mix, and its witness.
void gen_circuit(int log_n, uint64_t seed, R1cs& r1cs, std::vector<Fr>& witness);

}  // namespace cuzk
