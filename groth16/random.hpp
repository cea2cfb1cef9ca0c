// Uniform field elements from the operating system's CSPRNG, for the prover's blinding r and s.
#pragma once
#include "math/bls12_381.hpp"

namespace cuzk {

// A uniform element of Fr drawn with getrandom(2). Throws std::system_error if the kernel fails.
bls12_381::Fr random_fr();

// A uniform element of Fr from any 64-bit generator (tests and benchmarks: reproducible from a
// seed). Rejection sampling on 255-bit candidates: r > 2^254, so fewer than half are redrawn.
template <class Rng>
bls12_381::Fr random_fr(Rng& rng) {
  for (;;) {
    u64 l[4] = {rng(), rng(), rng(), rng() >> 1};
    if (bls12_381::Fr::is_canonical(l)) return bls12_381::Fr::from_mont_limbs(l);
  }
}

}  // namespace cuzk
