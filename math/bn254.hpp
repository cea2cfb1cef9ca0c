// BN254 (snarkjs's and circom's "bn128", Ethereum's alt_bn128): every constant of the curve lives
// here; the templates in fp/fp2/curve are the same ones BLS12-381 uses.
#pragma once
#include "curve.hpp"
#include "fp2.hpp"

namespace cuzk {
namespace bn254 {

struct FqParams {
  static constexpr int N = 4;
  static constexpr u64 MOD[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL,
                                 0x30644e72e131a029ULL};
  static constexpr u64 ONE[4] = {0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL,
                                 0x0e0a77c19a07df2fULL};
  static constexpr u64 R2[4] = {0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL, 0x47ab1eff0a417ff6ULL,
                                0x06d89f71cab8351fULL};
  static constexpr u64 INV = 0x87d20782e4866389ULL;
  static constexpr int BITS = 254;
  static constexpr int BYTES = 32;
};

struct FrParams {
  static constexpr int N = 4;
  static constexpr u64 MOD[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL,
                                 0x30644e72e131a029ULL};
  static constexpr u64 ONE[4] = {0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL, 0x666ea36f7879462eULL,
                                 0x0e0a77c19a07df2fULL};
  static constexpr u64 R2[4] = {0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL, 0x8c49833d53bb8085ULL,
                                0x0216d0b17f4e44a5ULL};
  static constexpr u64 INV = 0xc2e1f593efffffffULL;
  static constexpr int BITS = 254;
  static constexpr int BYTES = 32;
  // r - 1 = 2^28 t: transforms of up to 2^28 points. snarkjs's root (its FFT takes the smallest
  // non-residue, 5, to the power t): w28 = 5^t, in Montgomery form.
  static constexpr int TWO_ADICITY = 28;
  static constexpr u64 ROOT_OF_UNITY[4] = {0x636e735580d13d9cULL, 0xa22bf3742445ffd6ULL, 0x56452ac01eb203d8ULL,
                                           0x1860ef942963f9e7ULL};
};

using Fq = Fp<FqParams>;
using Fr = Fp<FrParams>;
using Fq2 = Fp2<Fq, 9>;  // towers above it build on xi = 9 + u

// Primitive 2^k-th root of unity (k <= 28) in snarkjs's convention: w28^(2^(28-k)).
inline Fr root_of_unity(int k) { return two_adic_root<Fr>(k); }

// Curve E: y^2 = x^3 + 3 over Fq (prime order r: no cofactor), and its sextic D-type twist
// E': y^2 = x^3 + 3/(9 + u) over Fq2.
struct G1Curve {
  using F = Fq;
  CUZK_HD static F b() { return F::from_u64(3); }
  static const char* name() { return "G1"; }
};
struct G2Curve {
  using F = Fq2;
  // 3/(9 + u) = (27 - 3u)/82, as the Montgomery limbs of its two components: literals, so that
  // device code can use it too (tests/gpu/field_emu_test.cpp checks them against the division).
  CUZK_HD static F b() {
    F v;
    v.c0.l[0] = 0x3bf938e377b802a8ULL, v.c0.l[1] = 0x020b1b273633535dULL;
    v.c0.l[2] = 0x26b7edf049755260ULL, v.c0.l[3] = 0x2514c6324384a86dULL;
    v.c1.l[0] = 0x38e7ecccd1dcff67ULL, v.c1.l[1] = 0x65f0b37d93ce0d3eULL;
    v.c1.l[2] = 0xd749d0dd22ac00aaULL, v.c1.l[3] = 0x0141b9ce4a688d4dULL;
    return v;
  }
  static const char* name() { return "G2"; }
};

using G1Affine = Affine<G1Curve>;
using G1 = Jacobian<G1Curve>;
using G2Affine = Affine<G2Curve>;
using G2 = Jacobian<G2Curve>;
using Scalar = Fr::Repr;

// The generators snarkjs, circom's verifiers and Ethereum's precompiles use: G1 = (1, 2), and G2 of
// EIP-197.
G1Affine g1_generator();
G2Affine g2_generator();

}  // namespace bn254
}  // namespace cuzk
