// Fq6, Fq12 and the optimal ate pairing of BLS12-381 with final exponentiation.
#pragma once
#include "bls12_381.hpp"
// (implementation in progress)
