// The cuda backend: the one-shot primitives of kernels/gpu_api.hpp, and a prover over a resident
// gpu::GpuProver that computes the five raw MSMs on the device while the host assembles the proof
// (assemble_proof), as the cpu backend does.
#include "backend/cuda/cuda_backend.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

namespace cuzk {
namespace {

using groth16::ZKey;

// The generic key checks plus the CUDA backend's range of domain sizes.
template <class C>
void check_key(const ZKey<C>& zk) {
  groth16::check_proving_key(zk);
  if (zk.log_domain < 1 || zk.log_domain > 27)
    throw std::invalid_argument("zkey domainSize=" + std::to_string(zk.domain_size) +
                                " is not 2^k with 1 <= k <= 27 (the CUDA backend's range)");
}

// A copy of the image with its arrays page-locked for every device, so that a load copies them by
// DMA at the link's speed; unlocked by the driver calls alone, so that the image may outlive the
// backend that made it.
template <class C>
std::shared_ptr<const KeyImage<C>> pinned(const KeyImage<C>& from) {
  auto image = std::make_shared<KeyImage<C>>(from);
  // A key whose points are still being checked (and copied) on the host is locked once that ends;
  // one whose points the device checks (ZKey::points_unchecked) is locked as it is.
  if (image->zk->points_unchecked.empty()) groth16::wait_points_checked(*image->zk);
  pin_key_image<C>(
      *image, [](void* p, size_t n) { gpu::register_host(p, n); },
      [](void* p) {
        try {
          gpu::unregister_host(p);
        } catch (const gpu::GpuError&) {  // the device is gone: the process's exit unlocks it
        }
      });
  return image;
}

template <class C>
class CudaProver : public groth16::ProverBackend<C> {
 public:
  using Fr = typename C::Fr;
  using Proof = groth16::Proof<C>;
  using ProveOptions = groth16::ProveOptions<C>;
  using RawMsms = groth16::RawMsms<C>;
  using SynthesizedView = groth16::SynthesizedView<C>;
  using HostTimes = groth16::ProverHostTimes;
  CudaProver(const KeyImage<C>& image, int device, const gpu::GpuOptions& opt) : zk_(image.zk) {
    if (!zk_ || !image.ev) throw std::invalid_argument("CUDA backend needs a prepared proving key");
    check_key(*zk_);
    if (gpu::device_count() == 0) throw gpu::GpuError("CUDA backend: no CUDA device is available");
    // The points are uploaded next: checked on the host by now, or checked on the device after
    // their upload (ZKey::points_unchecked).
    if (zk_->points_unchecked.empty()) groth16::wait_points_checked(*zk_);
    // What the key takes is read off the device's free memory around its upload: the points, the
    // matrices, the MSM scratch and the tables, whatever their layouts (this process is the device's
    // only allocator while it loads a key).
    const size_t before = gpu::free_memory(device);
    gpu_ = std::make_unique<gpu::GpuProver<C>>(*zk_, *image.ev, device, opt);  // matrices and tables live on the device
    const size_t after = gpu::free_memory(device);
    device_bytes_ = before > after ? before - after : 0;
  }
  size_t device_bytes() const override { return device_bytes_; }
  groth16::KeyLoadTimes load_times() const override {
    std::lock_guard<std::mutex> lock(mu_);
    const gpu::PrecomputeInfo p = gpu_->precompute_info();
    return {p.upload_bytes, p.upload_ms, p.check_ms, p.build_ms, p.table_extra_bytes};
  }

  const char* name() const override { return "cuda"; }
  gpu::ProverTimings timings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->last_timings();
  }
  std::vector<StageSpan> last_spans() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->last_timings().spans;
  }
  std::optional<HostTimes> last_host_times() const override {
    gpu::ProverTimings t = timings();
    return HostTimes{t.upload_ms, t.h_stage_ms, t.witness_msms_ms + t.h_msm_ms};
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
    const ZKey<C>& zk = *zk_;
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
    RawMsms m = msms_synthesized(s);
    if (raw) *raw = m;
    return assemble_proof(*zk_, m, opt);
  }
  RawMsms msms_synthesized(const SynthesizedView& s) override {
    check_synthesized(*zk_, s);
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->run_synthesized(s);
  }
  std::vector<RawMsms> msms_synthesized_batch(const std::vector<SynthesizedView>& s) override {
    for (const SynthesizedView& v : s) check_synthesized(*zk_, v);
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->run_batch(s);
  }
  size_t batch_limit() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_->batch_limit();
  }

 private:
  std::shared_ptr<const ZKey<C>> zk_;
  std::unique_ptr<gpu::GpuProver<C>> gpu_;
  size_t device_bytes_ = 0;
  mutable std::mutex mu_;
};

template <class C>
class CudaBackend : public Backend<C> {
 public:
  using typename Backend<C>::Fr;
  using typename Backend<C>::G1;
  using typename Backend<C>::G2;
  using typename Backend<C>::G1Affine;
  using typename Backend<C>::G2Affine;
  explicit CudaBackend(const BackendOptions& opt) : opt_(opt), gopt_(gpu_options(opt)) {
    gopt_.validate();
    if (gpu::device_count() == 0) throw gpu::GpuError("cuda backend: no CUDA device is available");
    if (opt.device < 0 || opt.device >= gpu::device_count())
      throw std::invalid_argument("cuda backend: device " + std::to_string(opt.device) + " does not exist (" +
                                  std::to_string(gpu::device_count()) + " CUDA devices)");
  }
  const char* name() const override { return "cuda"; }
  G1 msm_g1(const G1Affine* points, const Fr* scalars, size_t n) override {
    return gpu::msm_g1(opt_.device, points, scalars, n);
  }
  G2 msm_g2(const G2Affine* points, const Fr* scalars, size_t n) override {
    return gpu::msm_g2(opt_.device, points, scalars, n);
  }
  void ntt(Fr* data, int log_n, bool inverse) override { gpu::ntt(opt_.device, data, log_n, inverse); }
  std::vector<Fr> compute_h(std::vector<Fr> a, std::vector<Fr> b, std::vector<Fr> c, int log_n) override {
    return gpu::compute_h_coset(opt_.device, a, b, c, log_n);
  }
  std::shared_ptr<const KeyImage<C>> prepare(std::shared_ptr<const ZKey<C>> zk, bool pin,
                                             std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev) override {
    std::shared_ptr<KeyImage<C>> image = compile_key_image<C>(std::move(zk), std::move(ev));
    return pin ? pinned(*image) : image;
  }
  std::unique_ptr<groth16::ProverBackend<C>> load(std::shared_ptr<const KeyImage<C>> image) override {
    if (!image) throw std::invalid_argument("CUDA backend needs a prepared proving key");
    gpu::GpuOptions g = gopt_;
    if (opt_.key_memory_limit) {
      // The tables are built while free memory stays above their headroom: a headroom of what is
      // free beyond the limit keeps the key, its scratch and its tables within the limit.
      const size_t free = gpu::free_memory(opt_.device);
      if (free > opt_.key_memory_limit)
        g.precompute.headroom_bytes = std::max(g.precompute.headroom_bytes, free - opt_.key_memory_limit);
    }
    return std::make_unique<CudaProver<C>>(*image, opt_.device, g);
  }
  size_t memory_bytes() const override { return gpu::device_info(opt_.device).total_memory; }
  void register_host(void* p, size_t bytes) override { gpu::register_host(p, bytes); }
  void unregister_host(void* p) noexcept override {
    try {
      gpu::unregister_host(p);
    } catch (const gpu::GpuError&) {  // not registered: nothing to undo
    }
  }

 private:
  BackendOptions opt_;
  gpu::GpuOptions gopt_;
};

}  // namespace

bool cuda_backend_built() { return true; }
int cuda_device_count() noexcept { return gpu::device_count(); }

gpu::GpuOptions gpu_options(const BackendOptions& opt) {
  gpu::GpuOptions g;
  g.precompute = gpu::PrecomputeOptions::parse(opt.precompute, opt.precompute_headroom_mb << 20);
  g.msm_window = opt.msm_window;
  g.ntt_passes = opt.ntt_passes;
  return g;
}

template <class C>
std::unique_ptr<Backend<C>> make_cuda_backend(const BackendOptions& opt) {
  return std::make_unique<CudaBackend<C>>(opt);
}

template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const groth16::ZKey<C>> zk,
                                                            const BackendOptions& opt) {
  return make_cuda_backend<C>(opt)->prover(std::move(zk));
}

template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const KeyImage<C>> image, int device,
                                                            const gpu::GpuOptions& opt) {
  if (!image) throw std::invalid_argument("CUDA backend needs a prepared proving key");
  return std::make_unique<CudaProver<C>>(*image, device, opt);
}

template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover(std::shared_ptr<const groth16::ZKey<C>> zk, int device,
                                                            const gpu::GpuOptions& opt) {
  return make_cuda_prover<C>(cuda_key_image<C>(std::move(zk), false), device, opt);
}

template <class C>
std::shared_ptr<const KeyImage<C>> cuda_key_image(std::shared_ptr<const groth16::ZKey<C>> zk, bool pin) {
  std::shared_ptr<KeyImage<C>> image = compile_key_image<C>(std::move(zk));
  return pin ? pinned(*image) : image;
}

template <class C>
bool cuda_backend_precompute(const groth16::ProverBackend<C>& prover, gpu::PrecomputeInfo& out) {
  auto* b = dynamic_cast<const CudaProver<C>*>(&prover);
  if (!b) return false;
  out = b->precompute_info();
  return true;
}

template <class C>
bool cuda_backend_use_precomputed(groth16::ProverBackend<C>& prover, bool on) {
  auto* b = dynamic_cast<CudaProver<C>*>(&prover);
  if (!b) return false;
  b->use_precomputed(on);
  return true;
}

template <class C>
bool cuda_backend_timings(const groth16::ProverBackend<C>& prover, gpu::ProverTimings& out) {
  auto* b = dynamic_cast<const CudaProver<C>*>(&prover);
  if (!b) return false;
  out = b->timings();
  return true;
}

#define CUZK_CUDA_BACKEND(C)                                                                                  \
  template std::unique_ptr<Backend<C>> make_cuda_backend<C>(const BackendOptions&);                          \
  template std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover<C>(std::shared_ptr<const groth16::ZKey<C>>, \
                                                                          const BackendOptions&);            \
  template std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover<C>(std::shared_ptr<const KeyImage<C>>, int, \
                                                                          const gpu::GpuOptions&);           \
  template std::unique_ptr<groth16::ProverBackend<C>> make_cuda_prover<C>(std::shared_ptr<const groth16::ZKey<C>>, \
                                                                          int, const gpu::GpuOptions&);      \
  template std::shared_ptr<const KeyImage<C>> cuda_key_image<C>(std::shared_ptr<const groth16::ZKey<C>>, bool); \
  template bool cuda_backend_precompute<C>(const groth16::ProverBackend<C>&, gpu::PrecomputeInfo&);          \
  template bool cuda_backend_use_precomputed<C>(groth16::ProverBackend<C>&, bool);                           \
  template bool cuda_backend_timings<C>(const groth16::ProverBackend<C>&, gpu::ProverTimings&);
CUZK_CUDA_BACKEND(Bls12_381)
CUZK_CUDA_BACKEND(Bn254)
#undef CUZK_CUDA_BACKEND

}  // namespace cuzk
