// CPU references for the natural-order transforms of NttEngine::forward / inverse, plain and on the
// odd coset (shift g = omega_{2n}), shared by the host emulation and the device tests.
#pragma once
#include <vector>

#include "groth16/prover.hpp"

namespace cuzk {

// ref[inverse][coset] for x of 2^k entries: ntt(x), ntt(x_i g^i), intt(x), intt(x)_i g^-i.
struct NttRefs {
  std::vector<bls12_381::Fr> ref[2][2];
  NttRefs(const std::vector<bls12_381::Fr>& x, int k) {
    using bls12_381::Fr;
    Fr g = bls12_381::root_of_unity(k + 1), ginv = g.inv(), gi = Fr::one();
    ref[0][0] = ref[1][0] = ref[1][1] = ref[0][1] = x;
    for (auto& e : ref[0][1]) e = e * gi, gi = gi * g;
    for (int inverse = 0; inverse < 2; inverse++)
      for (int coset = 0; coset < 2; coset++) ntt(ref[inverse][coset].data(), k, inverse);
    gi = Fr::one();
    for (auto& e : ref[1][1]) e = e * gi, gi = gi * ginv;
  }
};

}  // namespace cuzk
