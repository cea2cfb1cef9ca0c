// The cuda backend: the primitives on a CUDA device (kernels/) and a prover that keeps the key, its
// compiled matrices and its precomputed bases resident there. The host assembles each proof exactly
// as the cpu backend does, so both give the same proof for the same witness, r and s.
#pragma once
#include <memory>

#include "backend/backend.hpp"
#include "kernels/gpu_api.hpp"

namespace cuzk {

// Whether this build has the cuda backend (configured with -DCUZK_CUDA=ON).
bool cuda_backend_built();
// Usable CUDA devices; 0 without a driver, a device or CUDA in the build. Never throws.
int cuda_device_count() noexcept;
// Throws std::runtime_error in a build without CUDA or where no CUDA device is usable, and
// std::invalid_argument for options out of range.
template <class C>
std::unique_ptr<Backend<C>> make_cuda_backend(const BackendOptions& opt = {});
template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const groth16::ZKey<C>> zk,
                                                            const BackendOptions& opt = {});
// The same from the kernels' own options (benchmarks, device tests), from the key or its image.
template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const groth16::ZKey<C>> zk, int device,
                                                            const gpu::GpuOptions& opt);
template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const KeyImage<C>> image, int device,
                                                            const gpu::GpuOptions& opt);
// The image Backend::prepare gives on the cuda backend, without a backend object.
template <class C>
std::shared_ptr<const KeyImage<C>> cuda_key_image(std::shared_ptr<const groth16::ZKey<C>> zk, bool pin);
gpu::GpuOptions gpu_options(const BackendOptions& opt);

// What a cuda prover's key got: its precomputed tables; false for another backend's prover.
template <class C>
bool cuda_backend_precompute(const groth16::ProverBackend<C>& prover, gpu::PrecomputeInfo& out);
// Switches a cuda prover's use of its tables (gpu::GpuProver::use_precomputed); false for another.
template <class C>
bool cuda_backend_use_precomputed(groth16::ProverBackend<C>& prover, bool on);
// The device-side stage times of a cuda prover's last proof; false for another backend's prover.
template <class C>
bool cuda_backend_timings(const groth16::ProverBackend<C>& prover, gpu::ProverTimings& out);

}  // namespace cuzk
