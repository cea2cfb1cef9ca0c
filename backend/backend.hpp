// The backend interface: one name ("cpu", "cuda") chooses where the primitives and whole proofs run,
// and the curve (math/curves.hpp) is the template parameter.
// A backend gives the three primitives of Groth16 proving (MSM over G1 and G2, the NTT and the H
// stage) and a prover that keeps one key resident. Every backend computes exactly what the cpu
// backend computes, so that a device result can always be checked against it.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "groth16/prover.hpp"

namespace cuzk {

// The tunables of a backend, from the [gpu] config table or command-line flags. A backend ignores
// the fields that are not its own (the cpu backend reads none of them).
struct BackendOptions {
  int device = 0;                     // cuda: the CUDA device
  std::string precompute = "auto";    // cuda: precomputed bases, "auto", "off" or a list such as "h,a"
  size_t precompute_headroom_mb = 2048;  // cuda: device memory the tables must leave free
  int msm_window = 0;                 // cuda: window of the MSMs over precomputed bases, 8..22; 0 automatic
  int ntt_passes = 0;                 // cuda: at least this many NTT passes, 1..8; 0 automatic
  // Device memory a prover made by prover() may take, its tables included; 0: no limit beyond
  // precompute_headroom_mb. Tables stop at the limit; the key itself is never cut short.
  size_t key_memory_limit = 0;
};

// Page-locking of host memory that provers read in place (a shared-memory slot ring), which every
// backend offers whatever its curve.
class HostRegistrar {
 public:
  virtual ~HostRegistrar() = default;
  // Prepares host memory that provers will read in place for fast transfers: cuda page-locks it
  // (read-only mappings too); cpu has nothing to do. Throws std::runtime_error with the reason when
  // the range cannot be registered.
  virtual void register_host(void* p, size_t bytes) { (void)p, (void)bytes; }
  // Undoes register_host(p, ...).
  virtual void unregister_host(void* p) noexcept { (void)p; }
};

// A proving key as provers load it, prepared once in host memory: the parsed key and its compiled
// matrices, page-locked where a backend copies them to a device (cuda), so that loading the key
// again after it was given back is a copy at the host link's speed plus what the device must build
// itself (its precomputed tables). Loads share an image; the page-locks go with its last holder.
template <class C>
struct KeyImage {
  std::shared_ptr<const groth16::ZKey<C>> zk;
  std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev;
  std::shared_ptr<const void> pins;  // undoes the page-locks when destroyed
  size_t pinned_bytes = 0;           // host memory page-locked for the loads
  double evaluator_ms = 0, pin_ms = 0;  // what preparing the image took
};

// The image of zk with nothing locked, what Backend::prepare gives without pin: its matrices are ev
// (the evaluator cache's, ConstraintEvaluator::open_cached), or compiled from zk's coefficients
// when ev is null. Throws std::invalid_argument for a key whose vectors do not match its header
// or an evaluator of another shape.
template <class C>
std::shared_ptr<KeyImage<C>> compile_key_image(std::shared_ptr<const groth16::ZKey<C>> zk,
                                               std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev = nullptr);

// Page-locks the arrays of `image` that a load copies (the key's point sets and the matrices' CSR),
// through `lock`, and leaves in image.pins what unlocks them through `unlock`. Ranges are widened
// to whole pages and merged, so that two arrays sharing a page are locked once; arrays under 1 MiB
// are left to the staged copy. A range the driver refuses stays pageable (the load stages it).
template <class C>
void pin_key_image(KeyImage<C>& image, const std::function<void(void*, size_t)>& lock,
                   std::function<void(void*)> unlock);

template <class C>
class Backend : public HostRegistrar {
 public:
  using Fr = typename C::Fr;
  using G1 = typename C::G1;
  using G2 = typename C::G2;
  using G1Affine = typename C::G1Affine;
  using G2Affine = typename C::G2Affine;
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // sum scalars[i] * points[i]; points at infinity and any scalars allowed.
  virtual G1 msm_g1(const G1Affine* points, const Fr* scalars, size_t n) = 0;
  virtual G2 msm_g2(const G2Affine* points, const Fr* scalars, size_t n) = 0;
  // In place, natural order in and out, snarkjs's roots; inverse includes the 1/n factor.
  virtual void ntt(Fr* data, int log_n, bool inverse) = 0;
  // The H stage: a, b, c (2^log_n each) to the odd-coset values of A'B' - C'.
  virtual std::vector<Fr> compute_h(std::vector<Fr> a, std::vector<Fr> b, std::vector<Fr> c, int log_n) = 0;
  // The image of zk that load() takes: its matrices ev, or compiled when ev is null
  // (compile_key_image); with pin, the arrays a load copies page-locked (cuda; the cpu backend
  // copies nothing and locks nothing, as here). Throws std::invalid_argument for a key the backend
  // cannot hold.
  virtual std::shared_ptr<const KeyImage<C>> prepare(std::shared_ptr<const groth16::ZKey<C>> zk, bool pin,
                                                     std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev);
  // A prover with the image's key resident (on the device, for cuda), its stage timings in
  // last_spans() and what the load took in load_times(). Throws std::invalid_argument for a key the
  // backend cannot hold.
  virtual std::unique_ptr<groth16::ProverBackend<C>> load(std::shared_ptr<const KeyImage<C>> image) = 0;
  // load(prepare(zk, false, nullptr)): a prover for a key loaded once.
  std::unique_ptr<groth16::ProverBackend<C>> prover(std::shared_ptr<const groth16::ZKey<C>> zk) {
    return load(prepare(std::move(zk), false, nullptr));
  }
  // The memory its provers' keys share: the device's, for cuda; 0 where no bound is known (cpu).
  virtual size_t memory_bytes() const { return 0; }
};

// The backend called `name` for curve C; "auto" is cuda where this build has it and opt.device exists,
// else cpu. Throws std::invalid_argument for a name this build does not know (the message lists the
// known ones) and std::runtime_error when the backend cannot start here (no CUDA device, a build
// without CUDA, a curve the backend does not have).
template <class C>
std::unique_ptr<Backend<C>> make_backend(const std::string& name, const BackendOptions& opt = {});

// The backends this build has, e.g. {"cpu", "cuda"}.
std::vector<std::string> backend_names();

// Shorthand for make_backend<C>(name, opt)->prover(zk).
template <class C>
std::unique_ptr<groth16::ProverBackend<C>> make_prover(const std::string& name,
                                                       std::shared_ptr<const groth16::ZKey<C>> zk,
                                                       const BackendOptions& opt = {}) {
  return make_backend<C>(name, opt)->prover(std::move(zk));
}

}  // namespace cuzk

#define CUZK_BACKEND_NAMES(ns)                                                                    \
  namespace cuzk::ns {                                                                            \
  using Backend = cuzk::Backend<Curve>;                                                           \
  inline std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt = {}) { \
    return cuzk::make_backend<Curve>(name, opt);                                                  \
  }                                                                                               \
  using cuzk::make_prover;                                                                        \
  }
CUZK_BACKEND_NAMES(bls12_381)
CUZK_BACKEND_NAMES(bn254)
