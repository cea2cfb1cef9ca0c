// Groth16 proving on the CPU: the constraint evaluator, the prover interface every backend implements
// (backend/cpu, backend/cuda), the shared proof assembly, and the CPU's H stage, NTT and MSMs.
#pragma once
#include <memory>
#include <optional>
#include <span>
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

// The A and B matrices compiled once from zkey section 4 into CSR (row-major), so that a = A*w and
// b = B*w are one pass over contiguous memory per row. The arrays are read-only views into storage
// the evaluator shares with its copies: memory of its own (compile), or a cache file mapped
// MAP_SHARED (open_cached), so that every process that opens one cache uses one copy of it in the
// page cache.
struct ConstraintEvaluator {
  uint32_t n_rows = 0, n_vars = 0;
  std::span<const uint32_t> a_row_ptr, b_row_ptr;  // CSR of A and B: n_rows + 1 each
  std::span<const uint32_t> a_col, b_col;
  std::span<const Fr> a_val, b_val;
  std::shared_ptr<const void> storage;  // keeps the arrays alive

  static ConstraintEvaluator compile(const ZKey& zk);
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
struct RawMsms {
  G1 a, b1, c, h;
  G2 b2;
};

// Fixed randomness for reproducible proofs; empty means draw r, s from the OS CSPRNG.
struct ProveOptions {
  std::optional<Fr> r, s;
};

// A synthesized witness: w plus a = A*w, b = B*w, c = a o b, as a synthesis worker leaves them in a
// shared-memory slot. The backend reads them in place (the daemon's zero-copy hand-off).
struct SynthesizedView {
  const Fr* w = nullptr;
  size_t n_vars = 0;
  const Fr* a = nullptr;
  const Fr* b = nullptr;
  const Fr* c = nullptr;
  size_t domain_size = 0;
};

class ProverBackend {
 public:
  virtual ~ProverBackend() = default;
  virtual const char* name() const = 0;
  // Proves one witness against the key this backend was built with.
  // Throws FormatError/std::invalid_argument on a witness that does not fit the key.
  virtual Proof prove(const std::vector<Fr>& witness, const ProveOptions& opt, RawMsms* raw = nullptr) = 0;
  // The proving stage only (H, MSMs, assembly) from already synthesized vectors; same proof as
  // prove() for the same witness. Throws std::invalid_argument when the sizes do not fit the key.
  virtual Proof prove_synthesized(const SynthesizedView& s, const ProveOptions& opt, RawMsms* raw = nullptr) = 0;
  // The compute of the last proof, per stage, in ms from its start: where the backend's device
  // (the CPU, for the cpu backend) was executing it. Spans of concurrent stages may overlap; the
  // time the device was busy is their union (summarize_spans). Empty before the first proof.
  virtual std::vector<StageSpan> last_spans() const { return {}; }
  // Host wall times of the last proof's stages, for backends whose stages overlap on a device (the
  // spans above then give the device's view); nullopt where the spans say it all.
  struct HostTimes {
    double upload_ms = 0, h_ms = 0, msm_ms = 0;
  };
  virtual std::optional<HostTimes> last_host_times() const { return std::nullopt; }
};

// Throws std::invalid_argument unless the key's vectors have the lengths its header promises; a key
// built in memory (setup, tests) is held to the same standard as one read from a file.
void check_proving_key(const ZKey& zk);

// Throws std::invalid_argument unless s has the key's n_vars and domain_size and no null vector.
void check_synthesized(const ZKey& zk, const SynthesizedView& s);

// The last step of every backend: the proof from the five raw MSMs and the blinding r, s (drawn from
// the OS CSPRNG where opt leaves them unset), so that all backends give the same proof for one input.
Proof assemble_proof(const ZKey& zk, const RawMsms& m, const ProveOptions& opt);

// The H stage on the CPU: from a, b, c (domain_size each) to the odd-coset values P = A'B' - C'.
std::vector<Fr> compute_h_coset(std::vector<Fr> a, std::vector<Fr> b, std::vector<Fr> c, int log_n);

// Radix-2 NTT over Fr in natural order (snarkjs's roots), in place. inverse includes the 1/n factor.
void ntt(Fr* data, int log_n, bool inverse);

// Pippenger multi-scalar multiplication, threaded. Points at infinity and zero scalars allowed.
G1 msm_g1(const G1Affine* points, const Fr* scalars, size_t n);
G2 msm_g2(const G2Affine* points, const Fr* scalars, size_t n);

// The public signals w[1..n_public].
std::vector<Fr> public_signals(const std::vector<Fr>& witness, uint32_t n_public);

}  // namespace cuzk
