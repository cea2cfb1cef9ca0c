// The `cuda` ProverBackend: the GPU computes the five raw MSMs (kernels/prover_gpu.cu), the host
// assembles the proof exactly as the CPU backend does, so both give the same proof for the same
// witness, r and s.
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernels/gpu_api.hpp"

namespace cuzk {
namespace {

// The generic key checks plus the CUDA backend's range of domain sizes.
void check_key(const ZKey& zk) {
  check_proving_key(zk);
  if (zk.log_domain < 1 || zk.log_domain > 27)
    throw std::invalid_argument("zkey domainSize=" + std::to_string(zk.domain_size) +
                                " is not 2^k with 1 <= k <= 27 (the CUDA backend's range)");
}

class CudaBackend : public ProverBackend {
 public:
  CudaBackend(std::shared_ptr<const ZKey> zk, int device, const gpu::PrecomputeOptions& pre) : zk_(std::move(zk)) {
    if (!zk_) throw std::invalid_argument("CUDA backend needs a proving key");
    check_key(*zk_);
    if (gpu::device_count() == 0) throw gpu::GpuError("CUDA backend: no CUDA device is available");
    ConstraintEvaluator ev = ConstraintEvaluator::compile(*zk_);
    wait_points_checked(*zk_);  // the points are uploaded next
    gpu_ = std::make_unique<gpu::GpuProver>(*zk_, ev, device, pre);  // matrices and tables live on the device
  }

  const char* name() const override { return "cuda"; }
  gpu::GpuProver::Timings timings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->last_timings();
  }
  std::vector<StageSpan> last_spans() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->last_timings().spans;
  }
  gpu::PrecomputeInfo precompute_info() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->precompute_info();
  }
  void use_precomputed(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    gpu_->use_precomputed(on);
  }

  Proof prove(const std::vector<Fr>& w, const ProveOptions& opt, RawMsms* raw) override {
    const ZKey& zk = *zk_;
    if (w.size() != zk.n_vars)
      throw std::invalid_argument("witness has " + std::to_string(w.size()) + " values, the zkey expects nVars=" +
                                  std::to_string(zk.n_vars));
    RawMsms m;
    {
      // One proof at a time per backend: the device engines and scratch are shared.
      std::lock_guard<std::mutex> lock(mu_);
      m = gpu_->run(w);
    }
    if (raw) *raw = m;
    return assemble_proof(zk, m, opt);
  }

  // The proving stage alone: w, a, b, c are read from the caller's memory (a shared-memory slot,
  // ideally registered with gpu::register_host) and the matrices are not evaluated again.
  Proof prove_synthesized(const SynthesizedView& s, const ProveOptions& opt, RawMsms* raw) override {
    check_synthesized(*zk_, s);
    RawMsms m;
    {
      std::lock_guard<std::mutex> lock(mu_);
      m = gpu_->run_synthesized(s);
    }
    if (raw) *raw = m;
    return assemble_proof(*zk_, m, opt);
  }

 private:
  std::shared_ptr<const ZKey> zk_;
  std::unique_ptr<gpu::GpuProver> gpu_;
  mutable std::mutex mu_;
};

}  // namespace

std::unique_ptr<ProverBackend> make_cuda_backend(std::shared_ptr<const ZKey> zk, int device) {
  return std::make_unique<CudaBackend>(std::move(zk), device, gpu::PrecomputeOptions::from_env());
}

std::unique_ptr<ProverBackend> make_cuda_backend(std::shared_ptr<const ZKey> zk, int device,
                                                 const gpu::PrecomputeOptions& pre) {
  return std::make_unique<CudaBackend>(std::move(zk), device, pre);
}

bool cuda_backend_precompute(const ProverBackend& backend, gpu::PrecomputeInfo& out) {
  auto* b = dynamic_cast<const CudaBackend*>(&backend);
  if (!b) return false;
  out = b->precompute_info();
  return true;
}

bool cuda_backend_use_precomputed(ProverBackend& backend, bool on) {
  auto* b = dynamic_cast<CudaBackend*>(&backend);
  if (!b) return false;
  b->use_precomputed(on);
  return true;
}

bool cuda_backend_timings(const ProverBackend& backend, gpu::GpuProver::Timings& out) {
  auto* b = dynamic_cast<const CudaBackend*>(&backend);
  if (!b) return false;
  out = b->timings();
  return true;
}

}  // namespace cuzk
