// The cuda backend of a build without CUDA: known by name, refused with the reason.
#include <stdexcept>
#include <utility>

#include "backend/cuda/cuda_backend.hpp"

namespace cuzk {

bool cuda_backend_built() { return false; }
int cuda_device_count() noexcept { return 0; }

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) {
  throw std::runtime_error("the cuda backend is not in this build (configure with -DCUZK_CUDA=ON)");
}

std::unique_ptr<ProverBackend> make_cuda_prover(std::shared_ptr<const ZKey> zk, const BackendOptions& opt) {
  return make_cuda_backend(opt)->prover(std::move(zk));  // make_cuda_backend refuses with the reason
}

}  // namespace cuzk
