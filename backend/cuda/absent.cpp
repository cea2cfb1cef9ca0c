// The cuda backend of a build without CUDA: known by name, refused with the reason.
#include <stdexcept>
#include <utility>

#include "backend/cuda/cuda_backend.hpp"

namespace cuzk {

bool cuda_backend_built() { return false; }
int cuda_device_count() noexcept { return 0; }

template <class C>
std::unique_ptr<Backend<C>> make_cuda_backend(const BackendOptions&) {
  throw std::runtime_error("the cuda backend is not in this build (configure with -DCUZK_CUDA=ON)");
}

template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const groth16::ZKey<C>> zk,
                                                            const BackendOptions& opt) {
  return make_cuda_backend<C>(opt)->prover(std::move(zk));  // make_cuda_backend refuses with the reason
}

#define CUZK_NO_CUDA(C)                                                                          \
  template std::unique_ptr<Backend<C>> make_cuda_backend<C>(const BackendOptions&);              \
  template std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover<C>(                       \
      std::shared_ptr<const groth16::ZKey<C>>, const BackendOptions&);
CUZK_NO_CUDA(Bls12_381)
CUZK_NO_CUDA(Bn254)
#undef CUZK_NO_CUDA

}  // namespace cuzk
