// Uniform field elements from the operating system's CSPRNG, for the prover's blinding r and s.
#pragma once
#include "math/bls12_381.hpp"

namespace cuzk {

// A uniform element of Fr drawn with getrandom(2). Throws std::system_error if the kernel fails.
bls12_381::Fr random_fr();

}  // namespace cuzk
