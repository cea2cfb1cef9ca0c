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

// The texture of a generated circuit (see gencircuit.cpp):
//   circom: circom output's mix of range checks (0/1), small packed integers, products, Poseidon-like
//           S-boxes and dense mixing rows; about 40% of the witness is 0 or 1;
//   porep:  a Filecoin PoRep partition's: SHA-256 compression rounds over bits and Merkle path levels;
//           at least 90% of the witness is 0 or 1, the rest full-size values.
enum class GenProfile { circom, porep };
const char* to_string(GenProfile p);
GenProfile parse_gen_profile(const std::string& s);  // throws std::invalid_argument naming the choices

// A satisfiable benchmark circuit whose snarkjs domain is exactly 2^log_n (constraints + public
// inputs + 1), and its witness. Wire 0 = 1, wire 1 = the public output, wire 2 = the public input,
// wires 3 and 4 = private inputs.
template <class C>
void gen_circuit(int log_n, uint64_t seed, R1cs<C>& r1cs, std::vector<typename C::Fr>& witness,
                 GenProfile profile = GenProfile::circom);

// The same circuit as a proving key's A and B coefficients (row order, without the public rows
// snarkjs's setup appends) and its witness, without ever holding the whole R1CS: benchmark keys at
// 2^27 need the memory for their points.
struct GenShape {
  uint32_t n_wires, n_constraints, n_public;
};
template <class C>
GenShape gen_circuit_coefs(int log_n, uint64_t seed, GenProfile profile, HugeVec<ZKeyCoef<C>>& coefs,
                           std::vector<typename C::Fr>& witness);

}  // namespace cuzk::groth16

#define CUZK_GROTH16_SETUP_NAMES(ns)                                                                  \
  namespace cuzk::ns {                                                                                \
  using ToxicWaste = groth16::ToxicWaste<Curve>;                                                      \
  inline ToxicWaste toxic_from_seed(const std::optional<std::string>& s) {                            \
    return groth16::toxic_from_seed<Curve>(s);                                                        \
  }                                                                                                   \
  using groth16::setup_zkey;                                                                          \
  using groth16::gen_circuit;                                                                         \
  using groth16::gen_circuit_coefs;                                                                   \
  using groth16::GenProfile;                                                                          \
  using groth16::GenShape;                                                                            \
  using groth16::parse_gen_profile;                                                                   \
  }
CUZK_GROTH16_SETUP_NAMES(bls12_381)
CUZK_GROTH16_SETUP_NAMES(bn254)
