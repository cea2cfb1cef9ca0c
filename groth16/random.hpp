// Uniform field elements from the operating system's CSPRNG, for the prover's blinding r and s.
#pragma once
#include <cstddef>

#include "math/curves.hpp"

namespace cuzk {

// Fills buf completely from getrandom(2). Throws std::system_error if the kernel fails.
void os_random(void* buf, size_t len);

// A uniform element of the prime field F: candidates of F::BITS random bits are drawn until one is
// below the modulus (the top bit of the modulus is set, so fewer than half are redrawn), and a value
// accepted that way is exactly uniform. The default field is BLS12-381's Fr, for the tests.
template <class F = bls12_381::Fr>
F random_fr() {
  for (;;) {
    typename F::Repr v;
    os_random(v.l, sizeof v.l);
    v.l[F::N - 1] &= ~u64(0) >> (64 * F::N - F::Params::BITS);
    if (F::is_canonical(v.l)) return F::from_plain(v);
  }
}

// The same from any 64-bit generator (tests and benchmarks: reproducible from a seed).
template <class F = bls12_381::Fr, class Rng>
F random_fr(Rng& rng) {
  for (;;) {
    u64 l[F::N];
    for (int i = 0; i < F::N; i++) l[i] = rng();
    l[F::N - 1] >>= 64 * F::N - F::Params::BITS;
    if (F::is_canonical(l)) return F::from_mont_limbs(l);
  }
}

}  // namespace cuzk
