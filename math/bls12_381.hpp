// BLS12-381: every constant of the curve lives here; the templates in fp/fp2/curve stay curve-agnostic.
#pragma once
#include "curve.hpp"
#include "fp2.hpp"

namespace cuzk {
namespace bls12_381 {

struct FqParams {
  static constexpr int N = 6;
  static constexpr u64 MOD[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                 0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
  static constexpr u64 ONE[6] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                                 0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
  static constexpr u64 R2[6] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
                                0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
  static constexpr u64 INV = 0x89f3fffcfffcfffdULL;
  static constexpr int BITS = 381;
  static constexpr int BYTES = 48;
};

struct FrParams {
  static constexpr int N = 4;
  static constexpr u64 MOD[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                 0x73eda753299d7d48ULL};
  static constexpr u64 ONE[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                                 0x1824b159acc5056fULL};
  static constexpr u64 R2[4] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                                0x0748d9d99f59ff11ULL};
  static constexpr u64 INV = 0xfffffffeffffffffULL;
  static constexpr int BITS = 255;
  static constexpr int BYTES = 32;
  // snarkjs's 2^32-th root of unity, 5^((r-1)/2^32), in Montgomery form. Not arkworks' (generator 7).
  static constexpr int TWO_ADICITY = 32;
  static constexpr u64 ROOT_OF_UNITY[4] = {0x9cab6d5c0c17f47cULL, 0x1ce1e93dfd4b71e5ULL,
                                           0x0d6db230471dd505ULL, 0x3f0ee990743a3b6aULL};
};

using Fq = Fp<FqParams>;
using Fr = Fp<FrParams>;
using Fq2 = Fp2<Fq>;

// Primitive 2^k-th root of unity (k <= 32) in snarkjs's convention: w32^(2^(32-k)).
inline Fr root_of_unity(int k) { return two_adic_root<Fr>(k); }

// Curve E: y^2 = x^3 + 4 over Fq, and its sextic twist E': y^2 = x^3 + 4(1+u) over Fq2.
struct G1Curve {
  using F = Fq;
  CUZK_HD static F b() { return F::from_u64(4); }
  static const char* name() { return "G1"; }
};
struct G2Curve {
  using F = Fq2;
  CUZK_HD static F b() { return {Fq::from_u64(4), Fq::from_u64(4)}; }
  static const char* name() { return "G2"; }
};

using G1Affine = Affine<G1Curve>;
using G1 = Jacobian<G1Curve>;
using G2Affine = Affine<G2Curve>;
using G2 = Jacobian<G2Curve>;
using Scalar = Fr::Repr;  // plain 256-bit integer handed to scalar multiplication and MSMs

// Standard generators (the zcash / IETF choice, the same as snarkjs and @noble/curves).
G1Affine g1_generator();
G2Affine g2_generator();

}  // namespace bls12_381
}  // namespace cuzk
