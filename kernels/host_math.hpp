// Host-side field and curve arithmetic that the .cu files need, compiled by the host compiler.
// nvcc cannot instantiate math/'s __host__ __device__ templates for host use alone: it compiles
// their device side too, and that cannot read the constant arrays of math/'s curve constants. So
// every host computation on Fr/Fq/G1/G2 that a .cu file needs goes through these functions,
// instantiated in host_math.cpp for every curve of math/curves.hpp.
#pragma once
#include <vector>

#include "math/curves.hpp"

namespace cuzk {
namespace gpu {
namespace host {

// Fr: a host scalar field (C::Fr).
// lo[i] = c * base^i for i < 2^lo_bits, then hi[j] = base^(j 2^lo_bits) for j < 2^hi_bits.
template <class Fr>
std::vector<Fr> pow_tables(const Fr& base, const Fr& c, int lo_bits, int hi_bits);
template <class Fr>
Fr root_of_unity(int k);
template <class Fr>
Fr one();
template <class Fr>
Fr inverse(const Fr& x);
template <class Fr>
Fr inverse_of_pow2(int k);  // 1 / 2^k

// HC: a host group (C::G1Curve or C::G2Curve).
// Horner over MSM window sums given as XYZZ points (device byte layout) of windows first..first+nw-1:
// sum_w 2^((first + w) c) W_w.
template <class HC>
Jacobian<HC> from_windows(const void* xyzz, int nw, int c, int first = 0);
template <class HC>
Jacobian<HC> infinity();
// a + b: host curve arithmetic stays in host_math.cpp, out of nvcc's reach.
template <class HC>
Jacobian<HC> add(const Jacobian<HC>& a, const Jacobian<HC>& b);
// The b of the group's equation y^2 = x^3 + b (for the device's point checks).
template <class HC>
typename HC::F curve_b();

}  // namespace host
}  // namespace gpu
}  // namespace cuzk
