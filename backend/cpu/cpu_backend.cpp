// The cpu backend: the primitives of groth16/ and a prover that runs snarkjs's Groth16 prove, step
// for step (FORMATS.md), on all cores.
#include "backend/cpu/cpu_backend.hpp"

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "groth16/msm.hpp"

namespace cuzk {
namespace {

// The stages of one proof on the CPU, one after another, as spans from the proof's start.
class SpanClock {
 public:
  SpanClock() : t0_(std::chrono::steady_clock::now()) {}
  // Runs f() and records its span under `name`; returns what f() returns.
  template <class F>
  auto stage(const char* name, F&& f) {
    const double a = now_ms();
    if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
      f();
      spans_.push_back({name, a, now_ms()});
    } else {
      auto r = f();
      spans_.push_back({name, a, now_ms()});
      return r;
    }
  }
  std::vector<StageSpan> take() { return std::move(spans_); }

 private:
  double now_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  }
  std::chrono::steady_clock::time_point t0_;
  std::vector<StageSpan> spans_;
};

template <class C>
class CpuProver : public groth16::ProverBackend<C> {
 public:
  using Fr = typename C::Fr;
  using ZKey = groth16::ZKey<C>;
  using Proof = groth16::Proof<C>;
  using ProveOptions = groth16::ProveOptions<C>;
  using RawMsms = groth16::RawMsms<C>;
  using SynthesizedView = groth16::SynthesizedView<C>;
  // The image's key and matrices, shared with it (Backend::prepare has checked the key).
  explicit CpuProver(const KeyImage<C>& image) : zk_(image.zk), ev_(image.ev) {
    if (!zk_ || !ev_) throw std::invalid_argument("CPU backend needs a prepared proving key");
  }

  const char* name() const override { return "cpu"; }
  size_t device_bytes() const override {
    const ZKey& zk = *zk_;
    return key_resident_bytes(
        ZKeyHeader{zk.n_vars, zk.n_public, zk.domain_size, uint32_t(zk.coefs.size()), C::id});
  }

  Proof prove(const std::vector<Fr>& w, const ProveOptions& opt, RawMsms* raw) override {
    SpanClock clock;
    std::vector<Fr> a, b, c;
    clock.stage("eval", [&] { ev_->evaluate(w, a, b, c); });  // validates the witness length
    return assembled(msm_stage(clock, w.data(), w.size(), std::move(a), std::move(b), std::move(c)), opt, raw);
  }

  Proof prove_synthesized(const SynthesizedView& s, const ProveOptions& opt, RawMsms* raw) override {
    return assembled(msms_synthesized(s), opt, raw);
  }

  RawMsms msms_synthesized(const SynthesizedView& s) override {
    check_synthesized(*zk_, s);
    SpanClock clock;
    size_t n = s.domain_size;
    std::vector<Fr> a, b, c;
    if (!s.a) {
      // a, b, c from w here: the daemon's synthesis.abc = "gpu", where this backend is the device.
      a.resize(n), b.resize(n), c.resize(n);
      clock.stage("eval", [&] { ev_->evaluate_into(s.w, a.data(), b.data(), c.data()); });
    } else {
      clock.stage("copy", [&] {
        a.assign(s.a, s.a + n);
        b.assign(s.b, s.b + n);
        c.assign(s.c, s.c + n);
      });
    }
    return msm_stage(clock, s.w, s.n_vars, std::move(a), std::move(b), std::move(c));
  }

  std::vector<StageSpan> last_spans() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }

 private:
  Proof assembled(const RawMsms& m, const ProveOptions& opt, RawMsms* raw) const {
    if (raw) *raw = m;
    return assemble_proof(*zk_, m, opt);
  }

  // H from a, b, c, then the five MSMs.
  RawMsms msm_stage(SpanClock& clock, const Fr* w, size_t n_vars, std::vector<Fr> a, std::vector<Fr> b,
                    std::vector<Fr> c) {
    const ZKey& zk = *zk_;
    std::vector<Fr> h = clock.stage(
        "ntt", [&] { return compute_h_coset(std::move(a), std::move(b), std::move(c), zk.log_domain); });

    // The witness is converted once for the four MSMs over it; C skips the public wires.
    MsmScalars ws = clock.stage("msm", [&] { return MsmScalars::prepare(w, n_vars); });
    wait_points_checked(zk);  // a key read with ZKeyMemory::MapFileBackground is checked by now
    RawMsms m;
    clock.stage("msm", [&] {
      MsmScalars hs = MsmScalars::prepare(h.data(), h.size());
      // One pool of window tasks for all five. G2 first: its bucket buffers are the largest, and the
      // G1 MSMs then reuse them (msm.cpp's pool); the witness MSMs last, whose high windows are
      // small tasks that even out the threads' finish.
      MsmBatch batch;
      batch.add(zk.b2.data(), ws, 0, zk.n_vars, &m.b2);
      batch.add(zk.h.data(), hs, 0, zk.domain_size, &m.h);
      batch.add(zk.a.data(), ws, 0, zk.n_vars, &m.a);
      batch.add(zk.b1.data(), ws, 0, zk.n_vars, &m.b1);
      batch.add(zk.c.data(), ws, zk.n_public + 1, zk.n_vars - zk.n_public - 1, &m.c);
      batch.run();
    });
    {
      std::lock_guard<std::mutex> lock(mu_);
      spans_ = clock.take();
    }
    return m;
  }

  std::shared_ptr<const ZKey> zk_;
  std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev_;
  mutable std::mutex mu_;
  std::vector<StageSpan> spans_;  // of the last proof
};

template <class C>
class CpuBackend : public Backend<C> {
 public:
  using typename Backend<C>::Fr;
  using typename Backend<C>::G1;
  using typename Backend<C>::G2;
  using typename Backend<C>::G1Affine;
  using typename Backend<C>::G2Affine;
  const char* name() const override { return "cpu"; }
  G1 msm_g1(const G1Affine* points, const Fr* scalars, size_t n) override { return cuzk::msm(points, scalars, n); }
  G2 msm_g2(const G2Affine* points, const Fr* scalars, size_t n) override { return cuzk::msm(points, scalars, n); }
  void ntt(Fr* data, int log_n, bool inverse) override { cuzk::ntt(data, log_n, inverse); }
  std::vector<Fr> compute_h(std::vector<Fr> a, std::vector<Fr> b, std::vector<Fr> c, int log_n) override {
    return compute_h_coset(std::move(a), std::move(b), std::move(c), log_n);
  }
  std::unique_ptr<groth16::ProverBackend<C>> load(std::shared_ptr<const KeyImage<C>> image) override {
    if (!image) throw std::invalid_argument("CPU backend needs a prepared proving key");
    return std::make_unique<CpuProver<C>>(*image);
  }
};

}  // namespace

template <class C>
std::unique_ptr<Backend<C>> make_cpu_backend() {
  return std::make_unique<CpuBackend<C>>();
}

template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_cpu_prover(std::shared_ptr<const groth16::ZKey<C>> zk) {
  return make_cpu_backend<C>()->prover(std::move(zk));
}

#define CUZK_CPU_BACKEND(C)                                         \
  template std::unique_ptr<Backend<C>> make_cpu_backend<C>();       \
  template std::unique_ptr<groth16::ProverBackend<C>> make_cpu_prover<C>(std::shared_ptr<const groth16::ZKey<C>>);
CUZK_CPU_BACKEND(Bls12_381)
CUZK_CPU_BACKEND(Bn254)
#undef CUZK_CPU_BACKEND

}  // namespace cuzk
