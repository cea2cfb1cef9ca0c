// The curves cuzk proves on, each as one struct of types and names that every curve-generic template
// (groth16/, backend/, kernels/) takes as its parameter C. Adding a curve means a namespace of
// constants like math/bn254.hpp and one struct here; no algorithm is written twice.
#pragma once
#include <string>

#include "bls12_381.hpp"
#include "bn254.hpp"

namespace cuzk {

enum class CurveId { bls12_381, bn254 };

namespace bls12_381 {
struct Curve {
  static constexpr CurveId id = CurveId::bls12_381;
  // The name snarkjs writes in proof.json, public key files and verification keys.
  static constexpr const char* snarkjs_name = "bls12381";
  static constexpr const char* display_name = "BLS12-381";
  using FqParams = bls12_381::FqParams;
  using FrParams = bls12_381::FrParams;
  using Fq = bls12_381::Fq;
  using Fr = bls12_381::Fr;
  using Fq2 = bls12_381::Fq2;
  using G1Curve = bls12_381::G1Curve;
  using G2Curve = bls12_381::G2Curve;
  using G1 = bls12_381::G1;
  using G1Affine = bls12_381::G1Affine;
  using G2 = bls12_381::G2;
  using G2Affine = bls12_381::G2Affine;
  static G1Affine g1_generator() { return bls12_381::g1_generator(); }
  static G2Affine g2_generator() { return bls12_381::g2_generator(); }
};
}  // namespace bls12_381

namespace bn254 {
struct Curve {
  static constexpr CurveId id = CurveId::bn254;
  static constexpr const char* snarkjs_name = "bn128";
  static constexpr const char* display_name = "BN254";
  using FqParams = bn254::FqParams;
  using FrParams = bn254::FrParams;
  using Fq = bn254::Fq;
  using Fr = bn254::Fr;
  using Fq2 = bn254::Fq2;
  using G1Curve = bn254::G1Curve;
  using G2Curve = bn254::G2Curve;
  using G1 = bn254::G1;
  using G1Affine = bn254::G1Affine;
  using G2 = bn254::G2;
  using G2Affine = bn254::G2Affine;
  static G1Affine g1_generator() { return bn254::g1_generator(); }
  static G2Affine g2_generator() { return bn254::g2_generator(); }
};
}  // namespace bn254

using Bls12_381 = bls12_381::Curve;
using Bn254 = bn254::Curve;

// "bls12381" / "bn128" (snarkjs's names; "bls12-381", "bls12_381", "bn254" and "alt_bn128" are
// accepted too). Throws std::invalid_argument naming the known curves.
CurveId parse_curve(const std::string& name);
const char* curve_snarkjs_name(CurveId id);
const char* curve_display_name(CurveId id);

// Runs f.template operator()<C>() with C the curve struct of id: the one switch from a run-time curve
// (read from a file's prime) to the templates.
template <class F>
decltype(auto) with_curve(CurveId id, F&& f) {
  switch (id) {
    case CurveId::bn254:
      return f.template operator()<Bn254>();
    case CurveId::bls12_381:
    default:
      return f.template operator()<Bls12_381>();
  }
}

}  // namespace cuzk
