// The CPU prover backend: snarkjs's Groth16 prove, step for step (FORMATS.md), on all cores.
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "msm.hpp"
#include "prover.hpp"
#include "random.hpp"

namespace cuzk {
namespace {

G1 g1_mul(const G1Affine& p, const Fr& k) { return G1::from_affine(p).mul(k.to_plain()); }
G2 g2_mul(const G2Affine& p, const Fr& k) { return G2::from_affine(p).mul(k.to_plain()); }

}  // namespace

void check_proving_key(const ZKey& zk) {
  auto need = [](size_t got, size_t want, const char* what) {
    if (got != want)
      throw std::invalid_argument(std::string("zkey ") + what + " has " + std::to_string(got) + " points, expected " +
                                  std::to_string(want));
  };
  if (zk.n_vars < zk.n_public + 1)
    throw std::invalid_argument("zkey nVars=" + std::to_string(zk.n_vars) + " is below nPublic+1=" +
                                std::to_string(zk.n_public + 1));
  if (zk.log_domain < 0 || zk.log_domain > 30 || zk.domain_size != (1u << zk.log_domain))
    throw std::invalid_argument("zkey domainSize=" + std::to_string(zk.domain_size) + " is not 2^" +
                                std::to_string(zk.log_domain));
  need(zk.a.size(), zk.n_vars, "section 5 (A)");
  need(zk.b1.size(), zk.n_vars, "section 6 (B1)");
  need(zk.b2.size(), zk.n_vars, "section 7 (B2)");
  need(zk.c.size(), zk.n_vars - zk.n_public - 1, "section 8 (C)");
  need(zk.h.size(), zk.domain_size, "section 9 (H)");
}

void check_synthesized(const ZKey& zk, const SynthesizedView& s) {
  if (!s.w || !s.a || !s.b || !s.c) throw std::invalid_argument("synthesized vectors: a null vector");
  if (s.n_vars != zk.n_vars)
    throw std::invalid_argument("synthesized witness has " + std::to_string(s.n_vars) +
                                " values, the zkey expects nVars=" + std::to_string(zk.n_vars));
  if (s.domain_size != zk.domain_size)
    throw std::invalid_argument("synthesized a/b/c have " + std::to_string(s.domain_size) +
                                " entries, the zkey's domainSize is " + std::to_string(zk.domain_size));
}

Proof assemble_proof(const ZKey& zk, const RawMsms& m, const ProveOptions& opt) {
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

class CpuBackend : public ProverBackend {
 public:
  explicit CpuBackend(std::shared_ptr<const ZKey> zk) : zk_(std::move(zk)) {
    if (!zk_) throw std::invalid_argument("CPU backend needs a proving key");
    check_proving_key(*zk_);
    ev_ = ConstraintEvaluator::compile(*zk_);
  }

  const char* name() const override { return "cpu"; }

  Proof prove(const std::vector<Fr>& w, const ProveOptions& opt, RawMsms* raw) override {
    SpanClock clock;
    std::vector<Fr> a, b, c;
    clock.stage("eval", [&] { ev_.evaluate(w, a, b, c); });  // validates the witness length
    return prove_stage(clock, w.data(), w.size(), std::move(a), std::move(b), std::move(c), opt, raw);
  }

  Proof prove_synthesized(const SynthesizedView& s, const ProveOptions& opt, RawMsms* raw) override {
    check_synthesized(*zk_, s);
    SpanClock clock;
    size_t n = s.domain_size;
    std::vector<Fr> a, b, c;
    clock.stage("copy", [&] {
      a.assign(s.a, s.a + n);
      b.assign(s.b, s.b + n);
      c.assign(s.c, s.c + n);
    });
    return prove_stage(clock, s.w, s.n_vars, std::move(a), std::move(b), std::move(c), opt, raw);
  }

  std::vector<StageSpan> last_spans() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }

 private:
  // H from a, b, c, then the five MSMs and the assembly.
  Proof prove_stage(SpanClock& clock, const Fr* w, size_t n_vars, std::vector<Fr> a, std::vector<Fr> b,
                    std::vector<Fr> c, const ProveOptions& opt, RawMsms* raw) {
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
    if (raw) *raw = m;
    return assemble_proof(zk, m, opt);
  }

  std::shared_ptr<const ZKey> zk_;
  ConstraintEvaluator ev_;
  mutable std::mutex mu_;
  std::vector<StageSpan> spans_;  // of the last proof
};

}  // namespace

std::unique_ptr<ProverBackend> make_cpu_backend(std::shared_ptr<const ZKey> zk) {
  return std::make_unique<CpuBackend>(std::move(zk));
}

std::vector<Fr> public_signals(const std::vector<Fr>& witness, uint32_t n_public) {
  if (witness.size() < (size_t)n_public + 1)
    throw std::invalid_argument("witness has " + std::to_string(witness.size()) + " values, fewer than nPublic+1=" +
                                std::to_string(n_public + 1));
  return std::vector<Fr>(witness.begin() + 1, witness.begin() + 1 + n_public);
}

}  // namespace cuzk
