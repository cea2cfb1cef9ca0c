// Curve names: the spellings users and snarkjs files use.
#include "curves.hpp"

#include <stdexcept>

namespace cuzk {

CurveId parse_curve(const std::string& name) {
  if (name == "bn128" || name == "bn254" || name == "alt_bn128") return CurveId::bn254;
  if (name == "bls12381" || name == "bls12-381" || name == "bls12_381") return CurveId::bls12_381;
  throw std::invalid_argument("unknown curve \"" + name + "\" (known: bn128 alias bn254, bls12381)");
}

const char* curve_snarkjs_name(CurveId id) {
  return with_curve(id, []<class C>() { return C::snarkjs_name; });
}

const char* curve_display_name(CurveId id) {
  return with_curve(id, []<class C>() { return C::display_name; });
}

}  // namespace cuzk
