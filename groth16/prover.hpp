// Groth16 proving on the CPU: the constraint evaluator, the prover interface every backend implements
// (backend/cpu, backend/cuda), the shared proof assembly, and the CPU's H stage, NTT and MSMs; all
// templates over the curve (math/curves.hpp), with each curve's names in its namespace at the end.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats.hpp"
#include "hugepages.hpp"
#include "stage_spans.hpp"

namespace cuzk {

// Where ConstraintEvaluator::open_cached found its matrices, for the caller's log.
struct EvaluatorCacheReport {
  enum class Outcome {
    Hit,       // a valid cache file for this zkey was mapped
    Built,     // compiled from the zkey and written to the cache (reason says why it was not usable)
    Uncached,  // compiled in memory because the cache directory could not be used (reason says why)
  };
  Outcome outcome = Outcome::Hit;
  std::string path;    // the cache file
  std::string reason;  // empty for a plain hit
  ZKeyHeader zkey{};   // the header of the zkey the matrices come from
  double ms = 0;       // wall time of open_cached
};

namespace groth16 {

// The A and B matrices compiled once from zkey section 4 into CSR (row-major), so that a = A*w and
// b = B*w are one pass over contiguous memory per row. The arrays are read-only views into storage
// the evaluator shares with its copies: memory of its own (compile), or a cache file mapped
// MAP_SHARED (open_cached), so that every process that opens one cache uses one copy of it in the
// page cache.
template <class C>
struct ConstraintEvaluator {
  using Fr = typename C::Fr;
  uint32_t n_rows = 0, n_vars = 0;
  std::span<const uint32_t> a_row_ptr, b_row_ptr;  // CSR of A and B: n_rows + 1 each
  std::span<const uint32_t> a_col, b_col;
  std::span<const Fr> a_val, b_val;
  std::shared_ptr<const void> storage;  // keeps the arrays alive

  static ConstraintEvaluator compile(const ZKey<C>& zk);
  // The evaluator of the zkey at zkey_path from its cache file in cache_dir
  // (<cache_dir>/<zkey file stem>-<hash of the zkey's path>.csr), made there first when it is missing
  // or does not belong to the zkey as it is now, or fails its checks (magic, version, sizes, checksums,
  // indices in range). Concurrent callers, also in other processes, build it once: the builder holds
  // an flock on <file>.lock and renames a finished temporary file into place. Where the directory
  // cannot be used (permissions, a full disk), compiles in memory instead and says so in the report.
  // Throws FormatError for a malformed zkey.
  static ConstraintEvaluator open_cached(const std::string& zkey_path, const std::string& cache_dir,
                                         EvaluatorCacheReport* report = nullptr);
  // Fills a, b, c (each domain_size long; c = a o b). Threaded. Throws if w.size() != n_vars.
  void evaluate(const std::vector<Fr>& w, std::vector<Fr>& a, std::vector<Fr>& b, std::vector<Fr>& c) const;
  // The same into caller-owned memory (a shared-memory slot): w has n_vars entries, a/b/c n_rows each.
  void evaluate_into(const Fr* w, Fr* a, Fr* b, Fr* c) const;
};

// The five raw MSM results before assembly (snarkjs's intermediates), for tests and the GPU diff.
template <class C>
struct RawMsms {
  typename C::G1 a, b1, c, h;
  typename C::G2 b2;
};

// Fixed randomness for reproducible proofs; empty means draw r, s from the OS CSPRNG.
template <class C>
struct ProveOptions {
  std::optional<typename C::Fr> r, s;
};

// A synthesized witness: w plus a = A*w, b = B*w, c = a o b, as a synthesis worker leaves them in a
// shared-memory slot. The backend reads them in place (the daemon's zero-copy hand-off). With a, b
// and c all null the backend evaluates them from w itself (the GPU on the device, with the matrices
// resident beside the key).
template <class C>
struct SynthesizedView {
  using Fr = typename C::Fr;
  const Fr* w = nullptr;
  size_t n_vars = 0;
  const Fr* a = nullptr;
  const Fr* b = nullptr;
  const Fr* c = nullptr;
  size_t domain_size = 0;
};

// Host wall times of a proof's stages (ProverBackend::last_host_times).
struct ProverHostTimes {
  double upload_ms = 0, h_ms = 0, msm_ms = 0;
};

// What making a key resident took on a device (ProverBackend::load_times): the copy of its points
// and matrices, the points' checks there (a key read with ZKeyMemory::ForDevice), and the
// precomputed tables the device built from them.
struct KeyLoadTimes {
  size_t upload_bytes = 0;
  double upload_ms = 0, check_ms = 0, tables_ms = 0;
  size_t table_bytes = 0;  // what the tables take beyond the points they replace
};

template <class C>
class ProverBackend {
 public:
  using Fr = typename C::Fr;
  virtual ~ProverBackend() = default;
  virtual const char* name() const = 0;
  // Proves one witness against the key this backend was built with.
  // Throws FormatError/std::invalid_argument on a witness that does not fit the key.
  virtual Proof<C> prove(const std::vector<Fr>& witness, const ProveOptions<C>& opt, RawMsms<C>* raw = nullptr) = 0;
  // The proving stage only (H, MSMs, assembly) from already synthesized vectors; same proof as
  // prove() for the same witness. Throws std::invalid_argument when the sizes do not fit the key.
  virtual Proof<C> prove_synthesized(const SynthesizedView<C>& s, const ProveOptions<C>& opt,
                                     RawMsms<C>* raw = nullptr) = 0;
  // prove_synthesized's compute alone (H and the five MSMs, on the backend's device), without the
  // assembly: prove_synthesized is this, then assemble_proof. A caller that assembles on a thread
  // of its own can start the next witness on the device meanwhile; last_spans() and
  // last_host_times() describe this call until the next one starts.
  virtual RawMsms<C> msms_synthesized(const SynthesizedView<C>& s) = 0;
  // The compute of several proofs of this key at once, one RawMsms each, in order: at most
  // batch_limit() of them. A device backend runs them in one pass (their MSMs share the bases, and
  // each launch serves every proof); last_spans() and last_host_times() then describe the batch.
  // The default computes them one after another.
  virtual std::vector<RawMsms<C>> msms_synthesized_batch(const std::vector<SynthesizedView<C>>& s) {
    std::vector<RawMsms<C>> out;
    out.reserve(s.size());
    for (const SynthesizedView<C>& v : s) out.push_back(msms_synthesized(v));
    return out;
  }
  // How many proofs msms_synthesized_batch should take at once for this key: 1 where a batch is
  // no faster than its proofs one by one.
  virtual size_t batch_limit() const { return 1; }
  // The compute of the last proof, per stage, in ms from its start: where the backend's device
  // (the CPU, for the cpu backend) was executing it. Spans of concurrent stages may overlap; the
  // time the device was busy is their union (summarize_spans). Empty before the first proof.
  virtual std::vector<StageSpan> last_spans() const { return {}; }
  // Host wall times of the last proof's stages, for backends whose stages overlap on a device (the
  // spans above then give the device's view); nullopt where the spans say it all.
  using HostTimes = ProverHostTimes;
  virtual std::optional<HostTimes> last_host_times() const { return std::nullopt; }
  // The memory this prover holds for its key where it proves (host memory for the cpu backend,
  // device memory for a GPU): the points and matrices, and on a GPU its MSM scratch and precomputed
  // tables too. Given back when the prover is destroyed; what gpu.key_memory counts.
  virtual size_t device_bytes() const = 0;
  // What loading the key took where it proves; zeros where nothing was copied (cpu).
  virtual KeyLoadTimes load_times() const { return {}; }
};

// Throws std::invalid_argument unless the key's vectors have the lengths its header promises and
// its domain fits the curve's H stage; a key built in memory (setup, tests) is held to the same
// standard as one read from a file.
template <class C>
void check_proving_key(const ZKey<C>& zk);

// Throws std::invalid_argument unless s has the key's n_vars and domain_size and no null vector.
template <class C>
void check_synthesized(const ZKey<C>& zk, const SynthesizedView<C>& s);

// A proof's blinding r, s (drawn from the OS CSPRNG where opt leaves them unset) with the parts of
// its assembly that depend on r, s and the key alone, so that they can be computed before the MSMs
// are known (while the device computes them):
//   a = alpha1 + r delta1,  b2 = beta2 + s delta2,  c = s alpha1 + r beta1 + r s delta1.
template <class C>
struct Blinding {
  typename C::Fr r, s;
  typename C::G1 a, c;
  typename C::G2 b2;
};
template <class C>
Blinding<C> draw_blinding(const ZKey<C>& zk, const ProveOptions<C>& opt);

// The last step of every backend: the proof from the five raw MSMs and the blinding, so that all
// backends give the same proof for one input. Given the blinding, what is left is one G1
// combination of two terms (s A + r B1) and additions.
template <class C>
Proof<C> assemble_proof(const RawMsms<C>& m, const Blinding<C>& b);
template <class C>
Proof<C> assemble_proof(const ZKey<C>& zk, const RawMsms<C>& m, const ProveOptions<C>& opt) {
  return assemble_proof(m, draw_blinding(zk, opt));
}

// The public signals w[1..n_public].
template <class F>
std::vector<F> public_signals(const std::vector<F>& witness, uint32_t n_public) {
  if (witness.size() < (size_t)n_public + 1)
    throw std::invalid_argument("witness has " + std::to_string(witness.size()) + " values, fewer than nPublic+1=" +
                                std::to_string(n_public + 1));
  return std::vector<F>(witness.begin() + 1, witness.begin() + 1 + n_public);
}

}  // namespace groth16

// The H stage on the CPU: from a, b, c (domain_size each) to the odd-coset values P = A'B' - C'.
// Fr is any curve's scalar field.
template <class Fr>
std::vector<Fr> compute_h_coset(std::vector<Fr> a, std::vector<Fr> b, std::vector<Fr> c, int log_n);

// Radix-2 NTT over Fr in natural order (snarkjs's roots), in place. inverse includes the 1/n factor.
template <class Fr>
void ntt(Fr* data, int log_n, bool inverse);

// Pippenger multi-scalar multiplication over G1 or G2 of any curve, threaded. Points at infinity and
// zero scalars allowed.
template <class PC, class F>
Jacobian<PC> msm(const Affine<PC>* points, const F* scalars, size_t n);

}  // namespace cuzk

#define CUZK_GROTH16_PROVER_NAMES(ns)                         \
  namespace cuzk::ns {                                        \
  using ConstraintEvaluator = groth16::ConstraintEvaluator<Curve>; \
  using RawMsms = groth16::RawMsms<Curve>;                    \
  using ProveOptions = groth16::ProveOptions<Curve>;          \
  using Blinding = groth16::Blinding<Curve>;                  \
  using SynthesizedView = groth16::SynthesizedView<Curve>;    \
  using ProverBackend = groth16::ProverBackend<Curve>;        \
  using groth16::check_proving_key;                           \
  using groth16::check_synthesized;                           \
  using groth16::assemble_proof;                              \
  using groth16::draw_blinding;                               \
  using groth16::public_signals;                              \
  inline G1 msm_g1(const G1Affine* p, const Fr* s, size_t n) { return cuzk::msm(p, s, n); } \
  inline G2 msm_g2(const G2Affine* p, const Fr* s, size_t n) { return cuzk::msm(p, s, n); } \
  }
CUZK_GROTH16_PROVER_NAMES(bls12_381)
CUZK_GROTH16_PROVER_NAMES(bn254)
