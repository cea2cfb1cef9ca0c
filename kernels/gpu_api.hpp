// The CUDA kernels' plain C++ interface: no CUDA types, so g++-compiled code (backend/cuda, tests,
// benchmarks) uses the GPU through this header alone. Everything throws GpuError
// on a CUDA failure or when no device is usable.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "groth16/prover.hpp"
#include "math/curves.hpp"

namespace cuzk {
namespace gpu {

struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Number of usable CUDA devices; 0 when there is no driver or no device. Never throws.
int device_count() noexcept;

struct DeviceInfo {
  std::string name;
  int sm_count = 0, cc_major = 0, cc_minor = 0, clock_mhz = 0;
  size_t total_memory = 0, free_memory = 0, l2_bytes = 0;
};
DeviceInfo device_info(int device);
// DeviceInfo::free_memory alone: one driver query, without the device properties that
// device_info reads (milliseconds each time), for what runs on every key load.
size_t free_memory(int device);

// Page-locks [p, p + bytes) for every device (cudaHostRegister, portable), so that copies out of it
// run at full bus speed and asynchronously: the daemon's GPU worker registers its mapped shared-memory
// slot ring once. A read-only mapping is registered read-only. Throws GpuError with the reason when
// there is no device, p is null, bytes is 0, the range is already registered or the driver refuses.
void register_host(void* p, size_t bytes);
// Undoes register_host(p, ...) (p as registered). Throws GpuError when p is not registered.
void unregister_host(void* p);
// Whether p lies in page-locked host memory (registered or allocated pinned). Never throws.
bool host_registered(const void* p) noexcept;
// The host-to-device link's bandwidth in bytes per second: the median of `runs` copies of `bytes`
// from pinned host memory into device memory, each timed by CUDA events. What a key's upload from
// a page-locked image is held against.
double h2d_bandwidth(int device, size_t bytes, int runs = 5);

// The primitives below are curve-generic: Fr is a curve's scalar field and HC one of its groups
// (math/curves.hpp: C::Fr, C::G1Curve, C::G2Curve), instantiated for Bls12_381 and Bn254.

// NTT over Fr of host data, natural order in and out (snarkjs's roots, FrParams::ROOT_OF_UNITY
// squared down to the size). coset: the transform on the coset
// g*<omega> with g = root_of_unity(log_n + 1), i.e. forward multiplies x_i by g^i first and inverse
// multiplies by g^-i last. log_n in 0..28 and at most Fr's two-adicity (coset: one less), so BN254
// (two-adicity 28) stops at 2^28 and at 2^27 on a coset; beyond that GpuError.
template <class Fr>
void ntt(int device, Fr* data, int log_n, bool inverse, bool coset = false);

// The H stage on the device: a, b, c (2^log_n each, natural order) -> the odd-coset values
// P = A'B' - C' (what groth16's compute_h_coset returns). log_n + 1 within ntt's range.
template <class Fr>
std::vector<Fr> compute_h_coset(int device, const std::vector<Fr>& a, const std::vector<Fr>& b,
                                const std::vector<Fr>& c, int log_n);

// One-shot MSMs of host data: sum scalars[i] * points[i], points of HC and scalars of the same
// curve's Fr (Fp<FrParams>). Points at infinity and any scalars are allowed. window = 0 picks the
// window width automatically (from the scalars' bit lengths). max_entries > 0 caps the digit entries
// of one plan, so that the windows run in batches (what the prover does when memory is short).
template <class HC, class FrParams>
Jacobian<HC> msm_g1(int device, const Affine<HC>* points, const Fp<FrParams>* scalars, size_t n, int window = 0,
                    size_t max_entries = 0);
template <class HC, class FrParams>
Jacobian<HC> msm_g2(int device, const Affine<HC>* points, const Fp<FrParams>* scalars, size_t n, int window = 0,
                    size_t max_entries = 0);
// The same over precomputed bases: the device first builds 2^(w c) P_i for every window w (a table
// of n * windows points, c >= 8), then all windows share one set of 2^(c-1) buckets.
template <class HC, class FrParams>
Jacobian<HC> msm_g1_precomputed(int device, const Affine<HC>* points, const Fp<FrParams>* scalars, size_t n,
                                int window = 0);
template <class HC, class FrParams>
Jacobian<HC> msm_g2_precomputed(int device, const Affine<HC>* points, const Fp<FrParams>* scalars, size_t n,
                                int window = 0);

// Precomputed bases for the resident key (msm_*_precomputed): at key upload the prover builds, for
// the point sets named here and in this order of priority, tables of the window copies 2^(wc) P_i,
// while device memory allows: a set gets its table only if, after the proving scratch (reserved
// first), the table, the table build's local memory and headroom_bytes still fit in free memory;
// the others keep the plain MSM. A table's first window is the points themselves, so the plain
// points are dropped once it exists (a table costs (windows - 1) x the set's size on top).
// At 2^24 constraints a G1 table is ~21 GB (13 windows), the G2 one ~42 GB.
struct PrecomputeOptions {
  bool enabled = true;
  std::string sets = "a,b1,c,h,b2";  // comma-separated subset of a, b1, b2, c, h; priority order
  size_t headroom_bytes = size_t(2) << 30;
  // From the config's spelling: "auto" -> the defaults, "off" -> disabled, otherwise a priority list
  // of sets such as "h,a". Throws std::invalid_argument on an unknown or repeated set name.
  static PrecomputeOptions parse(const std::string& spec, size_t headroom_bytes = size_t(2) << 30);
};

// The tunables of the GPU prover, in one place: filled from the [gpu] config table (the daemon) or
// the `cuzk bench` / `cuzk prove` flags. Nothing in the kernels reads the environment.
struct GpuOptions {
  PrecomputeOptions precompute;
  // Window width of the MSMs over precomputed bases, 8..22; 0: the cost model's choice
  // (msm_auto_window_shared), which is also the width the tables are built for.
  int msm_window = 0;
  // NTT passes per transform: at least this many, 1..8; 0: automatic (the fewest below 2^27, 4 from
  // 2^27).
  int ntt_passes = 0;
  // Device memory the plain MSM plans' digit entries and buckets may take, both engines together;
  // 0: what is free after the key beside a 1 GiB headroom. When the windows do not all fit, the
  // plans run in window batches (PrecomputeInfo::msm_batches_*).
  size_t msm_scratch_bytes = 0;
  // Proofs batch (GpuProver::run_batch) up to this many domain points per batch: 2^21 / 2^k proofs
  // of a 2^k key (at most 256). 0: 2^21. A benchmark's tunable.
  size_t batch_points = 0;
  // Throws std::invalid_argument naming the field that is out of range.
  void validate() const;
};

// What the prover built at key upload (see PrecomputeOptions).
struct PrecomputeInfo {
  std::string sets;             // sets with tables, in build order (e.g. "a,b1,c,h"); empty: none
  std::string skipped;          // sets asked for that did not fit in device memory
  size_t table_bytes = 0;       // device memory held by the tables (their first window included)
  size_t table_extra_bytes = 0;  // what the tables add beyond the points they replace
  double build_ms = 0;          // wall time of the table builds
  size_t upload_bytes = 0;      // the key's points and matrices copied to the device
  double upload_ms = 0;         // wall time of that copy (allocation included)
  double check_ms = 0;          // the points' checks on the device (ZKey::points_unchecked), else 0
  int window_w = 0, window_h = 0;  // shared-plan windows of the witness and H MSMs
  size_t free_bytes = 0;        // device memory free after the key, the tables and the MSM scratch
  // Window batches the plain witness and H plans may need: 1 unless the key leaves too little
  // memory for all windows at once (2^27 on the H200). A witness whose bit lengths bound its digit
  // entries within the scratch still runs in one (ProverTimings has what a proof used).
  int msm_batches_w = 1, msm_batches_h = 1;
};

// Per-stage wall times of a GpuProver's last run, in milliseconds, for benchmarks and logs.
struct ProverTimings {
  // upload_ms: host time until the last host-to-device copy was queued (from page-locked memory
  // that is almost nothing; through staging it is the transfer). h_stage_ms includes waiting for
  // a, b, c (run_synthesized) or evaluating them (run).
  double upload_ms = 0, witness_msms_ms = 0, h_stage_ms = 0, h_msm_ms = 0, total_ms = 0;
  // Window batches of the last proof's plain witness and H plans (0: that MSM ran over tables).
  int batches_w = 0, batches_h = 0;
  // When the device executed each stage (copy, eval, ntt, msm_plan, msm_a, msm_b1, msm_b2, msm_c,
  // msm_h), from CUDA events on the stage's stream, in ms from the proof's first operation. The
  // two lanes' spans overlap; their union is the device's busy time for the proof.
  std::vector<StageSpan> spans;
};

// The device half of the Groth16 prover: the key's points and compiled A/B matrices uploaded once
// and kept resident; run() evaluates a, b, c, runs the H stage and the five MSMs on the GPU, over
// precomputed bases for the sets that got tables (PrecomputeOptions).
template <class C>
class GpuProver {
 public:
  using Fr = typename C::Fr;
  using RawMsms = groth16::RawMsms<C>;
  using SynthesizedView = groth16::SynthesizedView<C>;
  GpuProver(const groth16::ZKey<C>& zk, const groth16::ConstraintEvaluator<C>& ev, int device,
            const GpuOptions& opt = GpuOptions());
  ~GpuProver();
  GpuProver(const GpuProver&) = delete;
  GpuProver& operator=(const GpuProver&) = delete;
  // w must have n_vars entries (checked by the caller).
  RawMsms run(const std::vector<Fr>& w);
  // The proving stage from synthesized host vectors (w, a = A w, b = B w, c = a o b): uploads them
  // (straight from page-locked memory, e.g. a registered shared-memory ring, else through pinned
  // staging) and runs the H stage and the five MSMs; the matrices are not evaluated. Each of a, b, c
  // is transformed as soon as it is on the device while the next one is still crossing the bus, and
  // the witness MSMs start once w is there. Throws std::invalid_argument when the sizes do not fit.
  RawMsms run_synthesized(const SynthesizedView& s);
  // Several proofs of this key in one pass, one RawMsms each, in order (each view as
  // run_synthesized takes it; all with a, b, c or all without). Their witness MSMs share one digit
  // plan and their H MSMs another, with buckets of their own per proof, so one launch of each
  // kernel serves the whole batch. At most batch_limit() views.
  std::vector<RawMsms> run_batch(const std::vector<SynthesizedView>& s);
  // The most proofs run_batch takes at once for this key on this device now: 1 where batching
  // gains nothing (keys whose proofs fill the device, or whose plans already run in window
  // batches), fewer where device memory is short.
  size_t batch_limit() const;
  using Timings = ProverTimings;
  Timings last_timings() const;
  int device() const;
  PrecomputeInfo precompute_info() const;
  // Whether the next proofs use the tables (default true); off runs the plain MSMs over the same
  // resident points, for same-process comparisons. The tables stay allocated either way.
  void use_precomputed(bool on);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpu

}  // namespace cuzk
