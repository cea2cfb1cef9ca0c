// Device-level engines shared by the .cu files: NTT and MSM on device-resident data, each bound to
// one stream and owning its scratch memory, so that two engines on two streams run concurrently.
#pragma once
#include <algorithm>
#include <map>
#include <vector>

#include "cuda_util.cuh"
#include "kernels/msm/pippenger.cuh"
#include "kernels/ntt/elementwise.cuh"
#include "kernels/ntt/plan.cuh"

namespace cuzk {
namespace gpu {

// F: the device scalar field (Dev<C>::Fr); instantiated for every curve in ntt/engine.cu.
template <class F>
class NttEngine {
 public:
  // min_passes: at least this many passes per transform (0: automatic, see ntt_passes_at_least).
  explicit NttEngine(cudaStream_t s, int min_passes = 0) : s_(s), min_passes_(min_passes) {}
  // Grows the twiddle table to cover transforms of 2^log_n (done lazily by every call too).
  void reserve(int log_n);
  // Natural order in and out, in place on device data.
  void forward(F* d, int log_n, bool coset);
  void inverse(F* d, int log_n, bool coset);
  // a, b, c (natural order) -> a = odd-coset values of a*b - c; b and c are clobbered.
  void h_stage(F* a, F* b, F* c, int log_n);
  // The two halves of h_stage, so that a caller can transform each vector as soon as it is on the
  // device: h_stage_vec takes one vector (natural order) to its odd-coset values; h_combine then
  // leaves a*b - c in a.
  void h_stage_vec(F* x, int log_n);
  void h_combine(F* a, const F* b, const F* c, int log_n);
  cudaStream_t stream() const { return s_; }
  // The passes forward / inverse run at 2^log_n (twiddle table of that size), for benchmarks; the
  // last one has perm_store when the bit reversal is fused into it.
  int natural_plan(int log_n, bool inverse, NttPass* ps) const;

 private:
  enum class Table { CosetFwd, CosetInv, HStage };
  void passes(F* d, int log_n, bool inverse, bool dit);
  void elementwise(F* d, int log_n, const NttScale<F>& s);
  // DIF passes then the bit reversal with s's scale (forward / inverse), fused where possible.
  void permuting_passes(F* d, int log_n, bool inverse, const NttScale<F>& s);
  bool fused_perm_passes(F* d, int log_n, bool inverse, const NttScale<F>& s);
  int fused_perm_plan(int log_n, int kt, bool inverse, NttPass* ps) const;
  PowTable<F> pow_table(int log_n, Table kind);
  F inv_n(int log_n) const;

  cudaStream_t s_;
  int min_passes_ = 0;
  DevBuf<F> tw_;
  DevBuf<F> scratch_;  // the fused bit reversal's out-of-place last pass (forward / inverse only)
  int kt_ = 0;
  std::map<std::pair<int, int>, DevBuf<F>> tables_;
};

// Precomputed bases for MsmEngine's shared plans: table[w * n + i] = 2^(w c) points[i] (affine) for
// the msm_windows(c) windows, c >= 8; the table holds n * msm_windows(c) points.
// C: a device curve (Dev<...>::G1 or ::G2).
template <class C>
void msm_precompute(const Affine<C>* d_points, size_t n, int c, Affine<C>* d_table, cudaStream_t s);

// G2 buckets are summed by lane pairs, two threads per task, each holding one Fq component of every
// Fq2 value (msm/g2_lane_pairs.cuh): level 0 for plain and for shared plans, and the bucket-side
// kernels (k_acc_level, k_chunks and k_group_sum of msm/engine.cu; msm/g2_lane_pairs_reduce.cu).
// C: a device G2 curve (Dev<...>::G2).
template <class C>
void msm_acc0_g2_pair_plain(const Affine<C>* points, u32 idx_offset, u32 n_scalars, u32 stride, const u32* vals,
                            const u32* start, const u32* end, const u32* toff, const u32* map, u32 l0, u32 total,
                            const u32* order, XYZZ<C>* out, cudaStream_t s);
template <class C>
void msm_acc0_g2_pair_shared(const Affine<C>* points, u32 idx_offset, u32 n_scalars, u32 stride, const u32* vals,
                             const u32* start, const u32* end, const u32* toff, const u32* map, u32 l0, u32 total,
                             const u32* order, XYZZ<C>* out, cudaStream_t s);
template <class C>
void msm_acc_level_g2_pair(const XYZZ<C>* in, const u32* in_toff, const u32* in_ntask, const u32* toff,
                           const u32* map, u32 l1, u32 total, XYZZ<C>* out, cudaStream_t s);
// tree: each block of kPairThreads also sums its kPairThreads / 2 chunks (of one window) and writes
// one sum (see k_chunks).
constexpr int kPairThreads = 128;
template <class C>
void msm_chunks_g2_pair(const XYZZ<C>* buckets, u32 per_window, u32 K, u32 n, bool tree, XYZZ<C>* out,
                        cudaStream_t s);
template <class C>
void msm_group_sum_g2_pair(const XYZZ<C>* in, u32 gs, u32 n_out, XYZZ<C>* out, cudaStream_t s);

// Pippenger over one scalar vector: plan() sorts the digits once, then run() may be called for
// several point sets that share those scalars (the prover's A, B1, B2 and C).
class MsmEngine {
 public:
  explicit MsmEngine(cudaStream_t s);
  // The scratch of one run: its partial and bucket sums on the device, the window sums brought back.
  // Runs of one plan on several streams (launch) each need their own.
  struct RunScratch {
    DevBuf<unsigned char> partial0, partials_hi, buckets, chunks[2];
    PinnedBuf<unsigned char> windows;
  };
  // Scalars: n device Fr (Dev<C>::Fr of any curve) in Montgomery form. window = 0 chooses
  // automatically. shared: the runs get precomputed bases (msm_precompute with this plan's window(),
  // stride n - idx_offset) and all windows share one set of buckets.
  //
  // Window batches: with an entry cap (set_entry_cap), a plain plan covers at most cap / n windows,
  // so that the digit entries and buckets of a 2^27 MSM fit beside a resident key; plan(..., batch)
  // for batch < batches() covers the next windows and run() returns that batch's share of the sum
  // (each_batch does the loop). A window of 0 chooses automatically: for a plain plan from the
  // scalars' bit lengths (msm_auto_window_hist), so sparse witness scalars get narrower windows.
  // hist: the scalars' histogram() when the caller has it (else a plain plan with window 0 makes
  // it); a plain plan whose entries it bounds within the cap (msm_entries_bound) is one batch.
  //
  // Vectors: several scalar vectors of n each, laid end to end (vector v at d_scalars + v n), over
  // the same points: several proofs of one key. Each vector gets buckets of its own, as if its
  // windows were more windows of one MSM, so one launch of each kernel serves them all and a run
  // gives one sum per vector (result(sc, v)). hist is then over all of them; the window is chosen
  // for one vector's share. A plan of several vectors is one window batch: it throws GpuError where
  // the entry cap would split it.
  template <class Fr>
  void plan(const Fr* d_scalars, size_t n, int window = 0, bool shared = false, int batch = 0,
            const u64* hist = nullptr, u32 vectors = 1);
  // plan() and body() for each window batch (one unless an entry cap splits the windows).
  template <class Fr, class Body>
  void each_batch(const Fr* d_scalars, size_t n, int window, bool shared, Body&& body) {
    // The histogram picks an automatic window and bounds the entries under a cap; an explicit
    // window without a cap needs neither.
    u64 hist[kMsmHistBins];
    const bool with_hist = !shared && n && (window == 0 || cap_ != 0);
    if (with_hist) histogram(d_scalars, n, hist);
    plan(d_scalars, n, window, shared, 0, with_hist ? hist : nullptr);
    body();
    for (int b = 1; b < nbatch_; b++) {
      plan(d_scalars, n, c_, shared, b, with_hist ? hist : nullptr);
      body();
    }
  }
  // hist[b] for b < kMsmHistBins: how many of the n scalars have a folded value of b bits (one pass
  // over the scalars, then a 1 KB copy back; waits for the stream).
  template <class Fr>
  void histogram(const Fr* d_scalars, size_t n, u64* hist);
  // At most this many digit entries per plain plan (0: no cap, every window in one plan).
  void set_entry_cap(size_t max_entries) { cap_ = max_entries; }
  int batches() const { return nbatch_; }
  // Device bytes a plain plan of n scalars needs per window of width c: the entries (keys and
  // values, double-buffered) and the buckets' sums and level-0 partial sums (xyzz_bytes each).
  static size_t bytes_per_window(size_t n, int c, size_t xyzz_bytes) {
    return n * 16 + (size_t(1) << (c - 1)) * (xyzz_bytes * 5 / 2 + 32);
  }
  // Allocates now the scratch that plan() and run_*() would grow into for n scalars at this window
  // (0: automatic) and kind of plan, with bucket sums of xyzz_bytes each (the larger curve the
  // engine serves), so that a caller can size other long-lived allocations (precomputed tables) from
  // what is left. The data-dependent remainder (sort temp, upper reduction levels) stays lazy.
  void reserve(size_t n, int window, bool shared, size_t xyzz_bytes);
  // sum k_i P_(i - idx_offset) over planned i >= idx_offset; points are device-resident (for a shared
  // plan: the precomputed table of the n - idx_offset points) on a device curve C (Dev<...>::G1 or
  // ::G2) whose scalar field is the plan's; the sum comes back as a point of the host group.
  template <class C>
  Jacobian<typename C::Host> run(const Affine<C>* d_points, u32 idx_offset = 0);
  // run() in two halves, so that runs of one plan over several point sets overlap on several
  // streams: launch queues the run on stream s (after planned(), which s must wait for when it is
  // not stream()) with scratch sc; result, once s has finished that work, is its sum. The plan must
  // not change in between.
  template <class C>
  void launch(const Affine<C>* d_points, u32 idx_offset, cudaStream_t s, RunScratch& sc);
  template <class C>
  Jacobian<typename C::Host> result(const RunScratch& sc, u32 vector = 0) const;
  // Whether this plan's runs leave most of the device idle (fewer level-0 tasks than a few times
  // what it runs at once): such runs are chains of dependent additions, and runs over several point
  // sets go faster side by side on streams of their own.
  bool latency_bound() const { return m_ != 0 && totals_[0] < 4ull * fill_; }
  // Recorded on stream() when plan() has queued its work.
  cudaEvent_t planned() const { return planned_.get(); }
  int window() const { return c_; }
  u32 vectors() const { return nv_; }
  size_t entries() const { return m_; }
  u32 buckets() const { return nb_; }
  cudaStream_t stream() const { return s_; }

 private:
  // The entries are sorted and the bucket tasks laid out: plan()'s work after the digits are emitted.
  void plan_sorted(size_t n);
  template <class C>
  void launch_acc0(const Affine<C>* d_points, u32 idx_offset, const u32* order, XYZZ<C>* out, cudaStream_t s);
  // Buckets per reduction chunk of this plan (see run).
  u32 chunk_width() const;
  // Windows summed apart: per vector, each window (a plain plan) or one (a shared plan).
  u32 sum_windows() const { return nv_ * (shared_ ? 1u : (u32)nw_); }

  // Level-0 tasks by decreasing length, built at the first run of a plan.
  const u32* task_order();

  cudaStream_t s_;
  size_t n_ = 0, m_ = 0, cap_ = 0;
  size_t nb_reserved_ = 0;  // buckets reserve() has made room for
  int c_ = 0, nw_ = 0, levels_ = 0;
  int w0_ = 0, nbatch_ = 1;  // the plan's first window, and the batches that cover all windows
  bool shared_ = false;
  u32 nv_ = 1;                    // scalar vectors of n_ each
  u32 nb_ = 0, l0_ = 0, l1_ = 0;  // buckets (of every vector); entries per level-0 task; partial sums per task above
  u32 fill_ = 0;  // threads that keep every SM of the device busy with the accumulation kernels
  static constexpr u32 kL1 = 16;   // partial sums per task above level 0, for plans that fill the device
  static constexpr u32 kChunk = 32;  // buckets per reduction chunk, likewise
  DevBuf<u32> keys_[2], vals_[2];
  int sorted_ = 0;  // which of keys_/vals_ holds the sorted entries
  DevBuf<unsigned char> cub_tmp_;
  DevBuf<u32> start_, end_, count_;
  std::vector<DevBuf<u32>> ntask_, toff_, map_;  // per level: tasks per bucket, their offsets, task -> bucket
  std::vector<u32> totals_;                // tasks per level
  DevBuf<u32> scalars_d_;                  // small device scalars (counters, maxima)
  DevBuf<u64> hist_d_;                     // histogram()'s bins
  RunScratch own_;                          // run()'s scratch
  DevBuf<u32> task_key_[2], task_id_[2];   // sort of the level-0 tasks by length
  const u32* order_ = nullptr;
  bool order_ready_ = false;
  Event planned_{cudaEventDisableTiming};
};

// One MSM's points and scalars uploaded to `device` on a stream of their own, with an engine on it
// (the plain API's one-shot MSMs and the benchmarks). HC: the host group, HFr: the host scalar field.
template <class HC, class HFr>
struct MsmUpload {
  using DC = DeviceCurve<HC>;
  using DA = Affine<DC>;
  using DFrT = DeviceFieldOf<HFr>;
  Stream st;
  MsmEngine eng{st.get()};
  DevBuf<DA> pts;
  DevBuf<DFrT> sc;
  MsmUpload(int device, const Affine<HC>* points, const HFr* scalars, size_t n) {
    static_assert(sizeof(DA) == sizeof(Affine<HC>), "point layouts differ");
    static_assert(sizeof(DFrT) == sizeof(HFr), "scalar layouts differ");
    set_device(device);
    pts.resize(std::max<size_t>(n, 1));
    sc.resize(std::max<size_t>(n, 1));
    if (n) {
      CUZK_CUDA_CHECK(cudaMemcpyAsync(pts.get(), points, n * sizeof(DA), cudaMemcpyHostToDevice, st.get()));
      CUZK_CUDA_CHECK(cudaMemcpyAsync(sc.get(), scalars, n * sizeof(DFrT), cudaMemcpyHostToDevice, st.get()));
    }
  }
};

}  // namespace gpu
}  // namespace cuzk
