// Fq6, Fq12 and the optimal ate pairing of BLS12-381 with final exponentiation.
// API (implementation owned by the math work):
//   struct Fq6 { Fq2 c0, c1, c2; ... };   Fq6 = Fq2[v]/(v^3 - (1+u))
//   struct Fq12 { Fq6 c0, c1; ... };      Fq12 = Fq6[w]/(w^2 - v)
//   Fq12 miller_loop(const G1Affine&, const G2Affine&);
//   Fq12 final_exponentiation(const Fq12&);
//   Fq12 pairing(const G1Affine& p, const G2Affine& q);        // e(p, q), reduced
//   bool pairing_product_is_one(const G1Affine* ps, const G2Affine* qs, size_t n);  // prod e(p_i,q_i) == 1
#pragma once
#include "bls12_381.hpp"
