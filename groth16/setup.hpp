// Development-only Groth16 setup (`cuzk setup`) and the benchmark circuit generator (`cuzk gen-circuit`),
// for any curve.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "formats.hpp"

namespace cuzk::groth16 {

// The toxic waste. Known values make every key point a known multiple of the generator.
template <class C>
struct ToxicWaste {
  typename C::Fr tau, alpha, beta, gamma, delta;
};
// Derived deterministically from a seed string, or from the OS CSPRNG when none is given.
template <class C>
ToxicWaste<C> toxic_from_seed(const std::optional<std::string>& seed);

// Builds a zkey for the circuit that snarkjs accepts; coefficient section byte-identical to
// `snarkjs groth16 setup`. progress(done, total) is called from time to time.
template <class C>
ZKey<C> setup_zkey(const R1cs<C>& r1cs, const ToxicWaste<C>& tw,
                   const std::function<void(const char*, size_t, size_t)>& progress = {});

// A satisfiable benchmark circuit of 2^log_n constraints (approximately: rows are filled up to the
// domain minus the public rows) with a realistic mix, and its witness.
template <class C>
void gen_circuit(int log_n, uint64_t seed, R1cs<C>& r1cs, std::vector<typename C::Fr>& witness);

}  // namespace cuzk::groth16

#define CUZK_GROTH16_SETUP_NAMES(ns)                                                                  \
  namespace cuzk::ns {                                                                                \
  using ToxicWaste = groth16::ToxicWaste<Curve>;                                                      \
  inline ToxicWaste toxic_from_seed(const std::optional<std::string>& s) {                            \
    return groth16::toxic_from_seed<Curve>(s);                                                        \
  }                                                                                                   \
  using groth16::setup_zkey;                                                                          \
  using groth16::gen_circuit;                                                                         \
  }
CUZK_GROTH16_SETUP_NAMES(bls12_381)
CUZK_GROTH16_SETUP_NAMES(bn254)
