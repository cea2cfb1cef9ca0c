// Device-level engines shared by the .cu files: NTT and MSM on device-resident data, each bound to
// one stream and owning its scratch memory, so that two engines on two streams run concurrently.
#pragma once
#include <algorithm>
#include <map>
#include <vector>

#include "cuda_util.cuh"
#include "msm_core.cuh"
#include "ntt_core.cuh"

namespace cuzk {
namespace gpu {

class NttEngine {
 public:
  // min_passes: at least this many passes per transform (0: automatic, see ntt_passes_at_least).
  explicit NttEngine(cudaStream_t s, int min_passes = 0) : s_(s), min_passes_(min_passes) {}
  // Grows the twiddle table to cover transforms of 2^log_n (done lazily by every call too).
  void reserve(int log_n);
  // Natural order in and out, in place on device data.
  void forward(DFr* d, int log_n, bool coset);
  void inverse(DFr* d, int log_n, bool coset);
  // a, b, c (natural order) -> a = odd-coset values of a*b - c; b and c are clobbered.
  void h_stage(DFr* a, DFr* b, DFr* c, int log_n);
  // The two halves of h_stage, so that a caller can transform each vector as soon as it is on the
  // device: h_stage_vec takes one vector (natural order) to its odd-coset values; h_combine then
  // leaves a*b - c in a.
  void h_stage_vec(DFr* x, int log_n);
  void h_combine(DFr* a, const DFr* b, const DFr* c, int log_n);
  cudaStream_t stream() const { return s_; }
  // The passes forward / inverse run at 2^log_n (twiddle table of that size), for benchmarks; the
  // last one has perm_store when the bit reversal is fused into it.
  int natural_plan(int log_n, bool inverse, NttPass* ps) const;

 private:
  enum class Table { CosetFwd, CosetInv, HStage };
  void passes(DFr* d, int log_n, bool inverse, bool dit);
  void elementwise(DFr* d, int log_n, const NttScale& s);
  // DIF passes then the bit reversal with s's scale (forward / inverse), fused where possible.
  void permuting_passes(DFr* d, int log_n, bool inverse, const NttScale& s);
  bool fused_perm_passes(DFr* d, int log_n, bool inverse, const NttScale& s);
  int fused_perm_plan(int log_n, int kt, bool inverse, NttPass* ps) const;
  PowTable pow_table(int log_n, Table kind);
  DFr inv_n(int log_n) const;

  cudaStream_t s_;
  int min_passes_ = 0;
  DevBuf<DFr> tw_;
  DevBuf<DFr> scratch_;  // the fused bit reversal's out-of-place last pass (forward / inverse only)
  int kt_ = 0;
  std::map<std::pair<int, int>, DevBuf<DFr>> tables_;
};

// Pippenger over one scalar vector: plan() sorts the digits once, then run_g1/run_g2 may be called
// for several point sets that share those scalars (the prover's A, B1, B2 and C).
// Precomputed bases for MsmEngine's shared plans: table[w * n + i] = 2^(w c) points[i] (affine) for
// the msm_windows(c) windows, c >= 8; the table holds n * msm_windows(c) points.
void msm_precompute_g1(const DG1Affine* d_points, size_t n, int c, DG1Affine* d_table, cudaStream_t s);
void msm_precompute_g2(const DG2Affine* d_points, size_t n, int c, DG2Affine* d_table, cudaStream_t s);

// G2 buckets are summed by lane pairs, two threads per task, each holding one Fq component of every
// Fq2 value (msm_pair.cuh): level 0 for plain and for shared plans, and the bucket-side kernels
// (k_acc_level, k_chunks and k_group_sum of msm.cu; msm_pair_buckets.cu).
void msm_acc0_g2_pair_plain(const DG2Affine* points, u32 idx_offset, u32 n_scalars, u32 stride,
                            const u32* vals, const u32* start, const u32* end, const u32* toff, const u32* map,
                            u32 l0, u32 total, const u32* order, DG2xyzz* out, cudaStream_t s);
void msm_acc0_g2_pair_shared(const DG2Affine* points, u32 idx_offset, u32 n_scalars, u32 stride,
                             const u32* vals, const u32* start, const u32* end, const u32* toff, const u32* map,
                             u32 l0, u32 total, const u32* order, DG2xyzz* out, cudaStream_t s);
void msm_acc_level_g2_pair(const DG2xyzz* in, const u32* in_toff, const u32* in_ntask, const u32* toff,
                           const u32* map, u32 l1, u32 total, DG2xyzz* out, cudaStream_t s);
void msm_chunks_g2_pair(const DG2xyzz* buckets, u32 per_window, u32 K, u32 n, DG2xyzz* out, cudaStream_t s);
void msm_group_sum_g2_pair(const DG2xyzz* in, u32 gs, u32 n_out, DG2xyzz* out, cudaStream_t s);

class MsmEngine {
 public:
  explicit MsmEngine(cudaStream_t s) : s_(s) {}
  // Scalars: n device Fr in Montgomery form. window = 0 chooses automatically. shared: the runs get
  // precomputed bases (msm_precompute_* with this plan's window(), stride n - idx_offset) and all
  // windows share one set of buckets.
  void plan(const DFr* d_scalars, size_t n, int window = 0, bool shared = false);
  // Allocates now the scratch that plan() and run_*() would grow into for n scalars at this window
  // (0: automatic) and kind of plan, with bucket sums of xyzz_bytes each (the larger curve the
  // engine serves), so that a caller can size other long-lived allocations (precomputed tables) from
  // what is left. The data-dependent remainder (sort temp, upper reduction levels) stays lazy.
  void reserve(size_t n, int window, bool shared, size_t xyzz_bytes);
  // sum k_i P_(i - idx_offset) over planned i >= idx_offset; points are device-resident (for a shared
  // plan: the precomputed table of the n - idx_offset points).
  G1 run_g1(const DG1Affine* d_points, u32 idx_offset = 0);
  G2 run_g2(const DG2Affine* d_points, u32 idx_offset = 0);
  int window() const { return c_; }
  size_t entries() const { return m_; }
  u32 buckets() const { return nb_; }
  cudaStream_t stream() const { return s_; }

 private:
  template <class C, class HC>
  Jacobian<HC> run(const Affine<C>* d_points, u32 idx_offset);
  template <class C>
  void launch_acc0(const Affine<C>* d_points, u32 idx_offset, const u32* order, XYZZ<C>* out);

  // Level-0 tasks by decreasing length, built at the first run of a plan.
  const u32* task_order();

  cudaStream_t s_;
  size_t n_ = 0, m_ = 0;
  int c_ = 0, nw_ = 0, levels_ = 0;
  bool shared_ = false;
  u32 nb_ = 0, l0_ = 0;
  static constexpr u32 kL1 = 16;   // partial sums per task above level 0
  static constexpr u32 kChunk = 32;  // buckets per reduction chunk
  DevBuf<u32> keys_[2], vals_[2];
  int sorted_ = 0;  // which of keys_/vals_ holds the sorted entries
  DevBuf<unsigned char> cub_tmp_;
  DevBuf<u32> start_, end_, count_;
  std::vector<DevBuf<u32>> ntask_, toff_, map_;  // per level: tasks per bucket, their offsets, task -> bucket
  std::vector<u32> totals_;                // tasks per level
  DevBuf<u32> scalars_d_;                  // small device scalars (counters, maxima)
  DevBuf<unsigned char> partial0_, partials_hi_, buckets_, chunks_[2];
  DevBuf<u32> task_key_[2], task_id_[2];   // sort of the level-0 tasks by length
  const u32* order_ = nullptr;
  bool order_ready_ = false;
};

// One MSM's points and scalars uploaded to `device` on a stream of their own, with an engine on it
// (the plain API's one-shot MSMs and the benchmarks).
template <class DA, class HA>
struct MsmUpload {
  Stream st;
  MsmEngine eng{st.get()};
  DevBuf<DA> pts;
  DevBuf<DFr> sc;
  MsmUpload(int device, const HA* points, const Fr* scalars, size_t n) {
    static_assert(sizeof(DA) == sizeof(HA), "point layouts differ");
    set_device(device);
    pts.resize(std::max<size_t>(n, 1));
    sc.resize(std::max<size_t>(n, 1));
    if (n) {
      CUZK_CUDA_CHECK(cudaMemcpyAsync(pts.get(), points, n * sizeof(DA), cudaMemcpyHostToDevice, st.get()));
      CUZK_CUDA_CHECK(cudaMemcpyAsync(sc.get(), scalars, n * sizeof(DFr), cudaMemcpyHostToDevice, st.get()));
    }
  }
};

}  // namespace gpu
}  // namespace cuzk
