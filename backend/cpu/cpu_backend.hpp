// The cpu backend: everything on the host's cores (groth16/), the reference the cuda backend is
// checked against.
#pragma once
#include <memory>

#include "backend/backend.hpp"

namespace cuzk {

std::unique_ptr<Backend> make_cpu_backend();
// The cpu prover: keeps the key and its compiled evaluator; every proof reuses them.
std::unique_ptr<ProverBackend> make_cpu_prover(std::shared_ptr<const ZKey> zk);

}  // namespace cuzk
