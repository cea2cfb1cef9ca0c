// The `cuda` ProverBackend: the GPU computes the five raw MSMs (kernels/prover_gpu.cu), the host
// assembles the proof exactly as the CPU backend does, so both give the same proof for the same
// witness, r and s.
#include <mutex>
#include <stdexcept>
#include <string>

#include "groth16/random.hpp"
#include "kernels/gpu_api.hpp"

namespace cuzk {
namespace {

// The key's vectors must have the lengths its header promises (a key built in memory included).
void check_key(const ZKey& zk) {
  auto need = [](size_t got, size_t want, const char* what) {
    if (got != want)
      throw std::invalid_argument(std::string("zkey ") + what + " has " + std::to_string(got) + " points, expected " +
                                  std::to_string(want));
  };
  if (zk.n_vars < zk.n_public + 1)
    throw std::invalid_argument("zkey nVars=" + std::to_string(zk.n_vars) + " is below nPublic+1=" +
                                std::to_string(zk.n_public + 1));
  if (zk.log_domain < 1 || zk.log_domain > 27 || zk.domain_size != (1u << zk.log_domain))
    throw std::invalid_argument("zkey domainSize=" + std::to_string(zk.domain_size) +
                                " is not 2^k with 1 <= k <= 27 (the CUDA backend's range)");
  need(zk.a.size(), zk.n_vars, "section 5 (A)");
  need(zk.b1.size(), zk.n_vars, "section 6 (B1)");
  need(zk.b2.size(), zk.n_vars, "section 7 (B2)");
  need(zk.c.size(), zk.n_vars - zk.n_public - 1, "section 8 (C)");
  need(zk.h.size(), zk.domain_size, "section 9 (H)");
}

G1 g1_mul(const G1Affine& p, const Fr& k) { return G1::from_affine(p).mul(k.to_plain()); }
G2 g2_mul(const G2Affine& p, const Fr& k) { return G2::from_affine(p).mul(k.to_plain()); }

class CudaBackend : public ProverBackend {
 public:
  CudaBackend(std::shared_ptr<const ZKey> zk, int device) : zk_(std::move(zk)) {
    if (!zk_) throw std::invalid_argument("CUDA backend needs a proving key");
    check_key(*zk_);
    if (gpu::device_count() == 0) throw gpu::GpuError("CUDA backend: no CUDA device is available");
    ConstraintEvaluator ev = ConstraintEvaluator::compile(*zk_);
    gpu_ = std::make_unique<gpu::GpuProver>(*zk_, ev, device);  // the compiled matrices live on the device
  }

  const char* name() const override { return "cuda"; }
  gpu::GpuProver::Timings timings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->last_timings();
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
    Fr r = opt.r ? *opt.r : random_fr();
    Fr s = opt.s ? *opt.s : random_fr();
    // pi_a = A + alpha1 + r delta1; pi_b = B2 + beta2 + s delta2; b1 = B1 + beta1 + s delta1;
    // pi_c = C + H + s pi_a + r b1 - r s delta1.
    G1 pi_a = m.a + G1::from_affine(zk.alpha1) + g1_mul(zk.delta1, r);
    G2 pi_b = m.b2 + G2::from_affine(zk.beta2) + g2_mul(zk.delta2, s);
    G1 b1 = m.b1 + G1::from_affine(zk.beta1) + g1_mul(zk.delta1, s);
    G1 pi_c = m.c + m.h + pi_a.mul(s.to_plain()) + b1.mul(r.to_plain()) - g1_mul(zk.delta1, r * s);
    return Proof{pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
  }

 private:
  std::shared_ptr<const ZKey> zk_;
  std::unique_ptr<gpu::GpuProver> gpu_;
  mutable std::mutex mu_;
};

}  // namespace

std::unique_ptr<ProverBackend> make_cuda_backend(std::shared_ptr<const ZKey> zk, int device) {
  return std::make_unique<CudaBackend>(std::move(zk), device);
}

bool cuda_backend_timings(const ProverBackend& backend, gpu::GpuProver::Timings& out) {
  auto* b = dynamic_cast<const CudaBackend*>(&backend);
  if (!b) return false;
  out = b->timings();
  return true;
}

}  // namespace cuzk
