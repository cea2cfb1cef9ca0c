// Host-side field and curve arithmetic that the .cu files need, compiled by the host compiler.
// nvcc cannot instantiate math/'s __host__ __device__ templates for host use alone: it compiles
// their device side too, and that cannot read the constant arrays of math/bls12_381.hpp. So every
// host computation on Fr/Fq/G1/G2 that a .cu file needs goes through these functions.
#pragma once
#include <vector>

#include "math/bls12_381.hpp"

namespace cuzk {
namespace gpu {
namespace host {

// lo[i] = c * base^i for i < 2^lo_bits, then hi[j] = base^(j 2^lo_bits) for j < 2^hi_bits.
std::vector<bls12_381::Fr> pow_tables(const bls12_381::Fr& base, const bls12_381::Fr& c, int lo_bits, int hi_bits);
bls12_381::Fr root_of_unity(int k);
bls12_381::Fr one();
bls12_381::Fr inverse(const bls12_381::Fr& x);
bls12_381::Fr inverse_of_pow2(int k);  // 1 / 2^k

// Horner over MSM window sums given as XYZZ points (device byte layout): sum_w 2^(w c) W_w.
bls12_381::G1 g1_from_windows(const void* xyzz, int nw, int c);
bls12_381::G2 g2_from_windows(const void* xyzz, int nw, int c);
bls12_381::G1 g1_infinity();
bls12_381::G2 g2_infinity();

}  // namespace host
}  // namespace gpu
}  // namespace cuzk
