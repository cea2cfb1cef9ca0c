// The cpu backend: everything on the host's cores (groth16/), the reference the cuda backend is
// checked against.
#pragma once
#include <memory>

#include "backend/backend.hpp"

namespace cuzk {

template <class C>
std::unique_ptr<Backend<C>> make_cpu_backend();
// The cpu prover: keeps the key and its compiled evaluator; every proof reuses them.
template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cpu_prover(std::shared_ptr<const groth16::ZKey<C>> zk);

}  // namespace cuzk
