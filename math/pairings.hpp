// The pairing-side operations of each curve under one name, Pairing<C>, for the curve-generic
// verifier and verification-key writer: the Fq6/Fq12 types, e(P, Q), the product test, and
// prime-order subgroup membership of points read from untrusted files.
#pragma once
#include <cstddef>

#include "bn254_pairing.hpp"
#include "curves.hpp"
#include "pairing.hpp"
#include "subgroup.hpp"

namespace cuzk {

template <class C>
struct Pairing;

template <>
struct Pairing<Bls12_381> {
  using Fq6 = bls12_381::Fq6;
  using Fq12 = bls12_381::Fq12;
  static Fq12 pairing(const bls12_381::G1Affine& p, const bls12_381::G2Affine& q) { return bls12_381::pairing(p, q); }
  static bool product_is_one(const bls12_381::G1Affine* ps, const bls12_381::G2Affine* qs, size_t n) {
    return bls12_381::pairing_product_is_one(ps, qs, n);
  }
  // prod f_(Q_i)(P_i) before the final exponentiation, and the final exponentiation: for products
  // compared with something other than 1.
  static Fq12 multi_miller_loop(const bls12_381::G1Affine* ps, const bls12_381::G2Affine* qs, size_t n) {
    return bls12_381::multi_miller_loop(ps, qs, n);
  }
  static Fq12 final_exponentiation(const Fq12& f) { return bls12_381::final_exponentiation(f); }
  static bool g1_in_subgroup(const bls12_381::G1Affine& p) { return bls12_381::g1_in_subgroup(p); }
  static bool g2_in_subgroup(const bls12_381::G2Affine& q) { return bls12_381::g2_in_subgroup(q); }
};

template <>
struct Pairing<Bn254> {
  using Fq6 = bn254::Fq6;
  using Fq12 = bn254::Fq12;
  static Fq12 pairing(const bn254::G1Affine& p, const bn254::G2Affine& q) { return bn254::pairing(p, q); }
  static bool product_is_one(const bn254::G1Affine* ps, const bn254::G2Affine* qs, size_t n) {
    return bn254::pairing_product_is_one(ps, qs, n);
  }
  // prod f_(Q_i)(P_i) before the final exponentiation, and the final exponentiation: for products
  // compared with something other than 1.
  static Fq12 multi_miller_loop(const bn254::G1Affine* ps, const bn254::G2Affine* qs, size_t n) {
    return bn254::multi_miller_loop(ps, qs, n);
  }
  static Fq12 final_exponentiation(const Fq12& f) { return bn254::final_exponentiation(f); }
  // BN254's G1 has prime order r: every point on the curve is in it.
  static bool g1_in_subgroup(const bn254::G1Affine&) { return true; }
  // The twist has a large cofactor: an endomorphism test (bn254_pairing.hpp), a quarter of [r]Q's cost.
  static bool g2_in_subgroup(const bn254::G2Affine& q) { return bn254::g2_in_subgroup(q); }
};

}  // namespace cuzk
