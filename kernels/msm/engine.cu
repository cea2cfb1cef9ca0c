// MSM kernels and the MsmEngine (see pippenger.cuh for the algorithm); the plain-API msm_g1/msm_g2.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "kernels/engines.cuh"
#include "kernels/host_math.hpp"

namespace cuzk {
namespace gpu {

namespace {

constexpr int kEmitThreads = 256;
constexpr int kAccThreads = 128;
constexpr int kMaxLevels = 12;

// One scalar per thread, entries written window by window so that the stores coalesce: a warp's
// nonzero digits of window w go to consecutive slots (ballot + popc), the block's slots are ordered
// (window, warp), and one atomic per block reserves them. (Writing each scalar's digits
// consecutively instead puts a warp's 32 stores ~13 words apart: 32 sectors per store, where
// this takes one or two.) The order of entries before the sort does not matter.
// Windows [w0, w0 + nw) of the scalars; entries carry the window relative to w0. The scalars are
// vectors of n_vec each over the same points: scalar i is point i % n_vec of vector i / n_vec,
// whose keys start at (i / n_vec) * vec_buckets.
template <class Fr>
__global__ void __launch_bounds__(kEmitThreads) k_emit(const Fr* scalars, size_t n, u32 n_vec, u32 vec_buckets,
                                                        int c, int w0, int nw, u32 shared_stride, u32* keys,
                                                        u32* vals, u32* counter) {
  constexpr int kWarps = kEmitThreads / 32;
  __shared__ u32 off[kMsmMaxWindows * kWarps];
  __shared__ u32 base;
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  size_t i = blockIdx.x * (size_t)kEmitThreads + threadIdx.x;
  u32 k[kMsmScalarWords] = {0, 0, 0, 0, 0, 0, 0, 0}, neg = 0;
  if (i < n) neg = msm_scalar_words(msm_prepare_scalar(load(scalars + i)), k);
  const int cells = nw * kWarps;
  for (int w = 0; w < nw; w++) {
    u32 m = __ballot_sync(~0u, msm_digit(k, w0 + w, c) != 0);
    if (lane == 0) off[w * kWarps + warp] = __popc(m);
  }
  __syncthreads();
  if (warp == 0) {  // exclusive scan of the (window, warp) counts, 32 at a time
    u32 run = 0;
    for (int j = 0; j < cells; j += 32) {
      u32 v = j + (int)lane < cells ? off[j + lane] : 0, incl = v;
      for (int d = 1; d < 32; d <<= 1) {
        u32 t = __shfl_up_sync(~0u, incl, d);
        if ((int)lane >= d) incl += t;
      }
      if (j + (int)lane < cells) off[j + lane] = run + incl - v;
      run += __shfl_sync(~0u, incl, 31);
    }
    if (lane == 0) base = run ? atomicAdd(counter, run) : 0;
  }
  __syncthreads();
  const u32 below = (1u << lane) - 1;
  for (int w = 0; w < nw; w++) {
    int d = msm_digit(k, w0 + w, c);
    u32 m = __ballot_sync(~0u, d != 0);
    if (d == 0) continue;
    u32 p = base + off[w * kWarps + warp] + __popc(m & below);
    const u32 v = (u32)(i / n_vec);
    u32 key, val;
    msm_entry(w, d, (u32)(i - (size_t)v * n_vec), neg, c, shared_stride, key, val);
    keys[p] = key + v * vec_buckets;
    vals[p] = val;
  }
}

// Bit lengths of the folded scalars: a block histogram in shared memory (one atomic per group of
// equal lengths in a warp: witness scalars are mostly 0 and 1), then one atomic per bin and block.
template <class Fr>
__global__ void k_bit_hist(const Fr* scalars, size_t n, unsigned long long* hist) {
  __shared__ u32 h[kMsmHistBins];
  for (int b = threadIdx.x; b < kMsmHistBins; b += blockDim.x) h[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    u32 k[kMsmScalarWords];
    msm_scalar_words(msm_prepare_scalar(load(scalars + i)), k);
    int b = msm_bit_length(k);
    u32 peers = __match_any_sync(__activemask(), b);
    if ((threadIdx.x & 31) == (u32)(__ffs(peers) - 1)) atomicAdd(&h[b], (u32)__popc(peers));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kMsmHistBins; b += blockDim.x)
    if (h[b]) atomicAdd(&hist[b], (unsigned long long)h[b]);
}

__global__ void k_bounds(const u32* keys, u32 m, u32* start, u32* end) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
    msm_bucket_bounds(keys, m, start, end, i);
}

__global__ void k_level0_tasks(const u32* start, const u32* end, u32 nb, u32 l0, u32* count, u32* ntask) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) {
    u32 c = end[b] - start[b];
    count[b] = c;
    ntask[b] = ceil_div(c, l0);
  }
}

// Buckets still holding more than one partial sum get ceil(n / L1) tasks at the next level.
__global__ void k_next_tasks(const u32* prev, u32 nb, u32 l1, u32* next) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) {
    u32 p = prev[b];
    next[b] = p > 1 ? ceil_div(p, l1) : 0;
  }
}

__global__ void k_task_map(const u32* ntask, const u32* off, u32 nb, u32* map) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) msm_task_map(ntask, off, map, b);
}

__global__ void k_total(const u32* toff, const u32* ntask, u32 nb, u32* out) { *out = toff[nb - 1] + ntask[nb - 1]; }

// Level-0 task t of bucket b sums min(l0, count - j l0) entries (j = t - toff[b]); key = l0 - length,
// so that an ascending sort puts the longest tasks first.
__global__ void k_task_len0(const u32* count, const u32* ntask, const u32* toff, u32 l0, u32 nb, u32* key, u32* id) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) {
    u32 nt = ntask[b], base = toff[b], c = count[b];
    for (u32 j = 0; j < nt; j++) {
      key[base + j] = l0 - min(l0, c - j * l0);
      id[base + j] = base + j;
    }
  }
}

// Shared: the points are a table of window copies (msm_shifted_copies) of `stride` points each, and
// the values name (window, index) as w * n_scalars + index.
template <class C, bool Shared>
__global__ void __launch_bounds__(kAccThreads) k_acc0(const Affine<C>* points, u32 idx_offset, u32 n_scalars,
                                                      u32 stride, const u32* vals, const u32* start,
                                                      const u32* end, const u32* toff, const u32* map, u32 l0,
                                                      u32 total, const u32* order, XYZZ<C>* out) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total) return;
  if (order) t = order[t];  // tasks of similar length side by side (MsmEngine::task_order)
  u32 b = map[t];
  u32 begin = start[b] + (t - toff[b]) * l0;
  u32 stop = min(begin + l0, end[b]);
  if constexpr (Shared)
    store(out + t, msm_acc_entries_shared<C>(points, idx_offset, n_scalars, stride, vals, begin, stop));
  else
    store(out + t, msm_acc_entries<C>(points, idx_offset, vals, begin, stop));
}

// One point per thread: its nw window copies 2^(wc) P into table[w * n + i].
template <class C>
__global__ void __launch_bounds__(128) k_shifted_copies(const Affine<C>* points, size_t n, int c, int nw,
                                                        Affine<C>* table) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  msm_shifted_copies(load(points + i), c, nw, table + i, n);
}

template <class C>
__global__ void __launch_bounds__(kAccThreads) k_acc_level(const XYZZ<C>* in, const u32* in_toff,
                                                           const u32* in_ntask, const u32* toff, const u32* map,
                                                           u32 l1, u32 total, XYZZ<C>* out) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total) return;
  u32 b = map[t];
  u32 base = in_toff[b], stop_all = base + in_ntask[b];
  u32 begin = base + (t - toff[b]) * l1;
  u32 stop = min(begin + l1, stop_all);
  store(out + t, msm_acc_partials(in, begin, stop));
}

struct Levels {
  const u32* ntask[kMaxLevels];
  const u32* toff[kMaxLevels];
  const void* out[kMaxLevels];
  int count;
};

// Dense bucket sums: the partial of the first level at which the bucket is down to one task.
template <class C>
__global__ void k_finalize(Levels lv, u32 nb, XYZZ<C>* buckets) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) {
    XYZZ<C> v = XYZZ<C>::infinity();
    for (int l = 0; l < lv.count; l++) {
      u32 nt = lv.ntask[l][b];
      if (nt == 0) break;
      if (nt == 1) {
        v = load(static_cast<const XYZZ<C>*>(lv.out[l]) + lv.toff[l][b]);
        break;
      }
    }
    store(buckets + b, v);
  }
}

// tree: the block's chunk sums are also summed in the block (per_window is a multiple of the block,
// so a block holds chunks of one window), and out gets one sum per block: log2(kAccThreads) levels
// of the tree in one kernel, each an addition in shared memory, where a kernel per level costs about
// twice that in a small MSM (a lone addition's kernel took 50 us at 2^13 on an H100).
template <class C>
__global__ void __launch_bounds__(kAccThreads) k_chunks(const XYZZ<C>* buckets, u32 per_window, u32 K, u32 n,
                                                        bool tree, XYZZ<C>* out) {
  __shared__ __align__(16) unsigned char raw[kAccThreads / 2 * sizeof(XYZZ<C>)];
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (!tree) {
    if (t >= n) return;
    u32 w = t / per_window, j = t % per_window;
    store(out + t, msm_chunk_sum(buckets + (size_t)w * per_window * K, j, K));
    return;
  }
  XYZZ<C>* sm = reinterpret_cast<XYZZ<C>*>(raw);
  u32 w = t / per_window, j = t % per_window;
  XYZZ<C> v = msm_chunk_sum(buckets + (size_t)w * per_window * K, j, K);
  for (u32 h = blockDim.x >> 1; h > 0; h >>= 1) {
    if (threadIdx.x >= h && threadIdx.x < 2 * h) store(sm + (threadIdx.x - h), v);
    __syncthreads();
    if (threadIdx.x < h) v = xyzz_add(v, load(sm + threadIdx.x));
    __syncthreads();
  }
  if (threadIdx.x == 0) store(out + blockIdx.x, v);
}

template <class C>
__global__ void __launch_bounds__(kAccThreads) k_group_sum(const XYZZ<C>* in, u32 gs, u32 n_out, XYZZ<C>* out) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n_out) return;
  store(out + t, msm_acc_partials(in, t * gs, t * gs + gs));
}

template <class T>
void d2h(T* dst, const T* src, size_t n, cudaStream_t s) {
  CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
}

unsigned small_grid(size_t n) { return (unsigned)std::min<size_t>((n + 255) / 256, 132 * 32); }

}  // namespace

// The accumulation kernels hold about four blocks of kAccThreads per SM (their registers allow no
// more), so a plan with fewer tasks than this leaves SMs idle.
MsmEngine::MsmEngine(cudaStream_t s) : s_(s) {
  int dev = 0, sms = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&dev));
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  fill_ = (u32)std::max(1, sms) * 4 * kAccThreads;
}

// A bucket's entries are split into tasks of at most l0, one thread (G2: one lane pair) each, and a
// warp runs until its longest task ends. Bucket sizes scatter (Poisson around the mean for random
// scalars, far wider for witness scalars), so in bucket order a warp's 32 (16) tasks wait for their
// maximum. Sorted by length, the tasks of a warp are about equally long, and the longest go first.
const u32* MsmEngine::task_order() {
  if (order_ready_) return order_;
  u32 T = totals_[0];
  for (int i = 0; i < 2; i++) {
    task_key_[i].reserve(T);
    task_id_[i].reserve(T);
  }
  k_task_len0<<<small_grid(nb_), 256, 0, s_>>>(count_.get(), ntask_[0].get(), toff_[0].get(), l0_, nb_,
                                               task_key_[0].get(), task_id_[0].get());
  CUZK_CUDA_LAUNCHED("k_task_len0");
  int bits = 1;
  while ((u64(1) << bits) <= l0_) bits++;
  cub::DoubleBuffer<u32> dk(task_key_[0].get(), task_key_[1].get()), dv(task_id_[0].get(), task_id_[1].get());
  size_t bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, (int)T, 0, bits, s_));
  cub_tmp_.reserve(std::max<size_t>(bytes, 16));
  bytes = cub_tmp_.size();
  CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_tmp_.get(), bytes, dk, dv, (int)T, 0, bits, s_));
  order_ = dv.Current();
  order_ready_ = true;
  return order_;
}

template <class Fr>
void MsmEngine::histogram(const Fr* d_scalars, size_t n, u64* hist) {
  static_assert(sizeof(u64) == sizeof(unsigned long long), "histogram counters");
  hist_d_.reserve(kMsmHistBins);
  CUZK_CUDA_CHECK(cudaMemsetAsync(hist_d_.get(), 0, kMsmHistBins * sizeof(u64), s_));
  if (n) {
    k_bit_hist<<<small_grid(n), 256, 0, s_>>>(d_scalars, n, reinterpret_cast<unsigned long long*>(hist_d_.get()));
    CUZK_CUDA_LAUNCHED("k_bit_hist");
  }
  d2h(hist, hist_d_.get(), kMsmHistBins, s_);
}
template void MsmEngine::histogram(const Dev<Bls12_381>::Fr*, size_t, u64*);
template void MsmEngine::histogram(const Dev<Bn254>::Fr*, size_t, u64*);

template <class Fr>
void MsmEngine::plan(const Fr* d_scalars, size_t n, int window, bool shared, int batch, const u64* hist,
                     u32 vectors) {
  order_ready_ = false;
  if (vectors == 0) throw GpuError("GPU MSM: a plan of no scalar vectors");
  const size_t total = n * vectors;
  if (total >= (size_t(1) << 31))
    throw GpuError("GPU MSM of " + std::to_string(vectors) + " x " + std::to_string(n) + " scalars: at most 2^31 - 1");
  n_ = n;
  nv_ = vectors;
  shared_ = shared;
  u64 own[kMsmHistBins];
  if (!shared && !hist && window == 0 && n) {
    histogram(d_scalars, total, own);
    hist = own;
  }
  if (window) {
    c_ = window;
  } else if (shared) {
    c_ = msm_auto_window_shared(n);
  } else if (n) {
    u64 one[kMsmHistBins];  // one vector's share: each has buckets of its own
    for (int b = 0; b < kMsmHistBins; b++) one[b] = (hist[b] + vectors - 1) / vectors;
    c_ = msm_auto_window_hist(one);
  } else {
    c_ = msm_auto_window(n);
  }
  if (c_ < 4 || c_ > 24) throw GpuError("MSM window width " + std::to_string(c_) + " is outside 4..24");
  int all = msm_windows(c_);
  if (shared && (c_ < 8 || n * (size_t)all >= (size_t(1) << 31)))
    throw GpuError("GPU MSM over precomputed bases: window " + std::to_string(c_) + " must be >= 8 and n * windows < 2^31");
  // Entries of all windows at once: n * windows at most, fewer for scalars with few bits (a plain
  // plan with the scalars' histogram). With those within the cap, and the buckets of every window
  // within what reserve() took for them (or a small part of the cap: a G2 bucket's sums take the
  // bytes of ~64 entries), there is one batch.
  size_t bound = total * (size_t)all;
  if (!shared && hist && n) bound = std::min(bound, msm_entries_bound(hist, c_));
  const size_t bucket_room = std::max(nb_reserved_, cap_ / 64);
  bool one = shared || cap_ == 0 || n == 0 ||
             (bound <= cap_ && ((size_t)all * vectors << (c_ - 1)) <= bucket_room);
  if (!one && vectors > 1)
    throw GpuError("GPU MSM: a plan of " + std::to_string(vectors) + " scalar vectors does not fit the entry cap");
  int per = one ? all : (int)std::clamp<size_t>(cap_ / n, 1, (size_t)all);
  nbatch_ = (all + per - 1) / per;
  if (batch < 0 || batch >= nbatch_) throw GpuError("GPU MSM: window batch " + std::to_string(batch) + " of " + std::to_string(nbatch_));
  w0_ = batch * per;
  nw_ = std::min(per, all - w0_);
  if (((size_t)vectors * (shared ? 1 : nw_) << (c_ - 1)) >= (size_t(1) << 31))
    throw GpuError("GPU MSM: too many buckets for one plan");
  nb_ = vectors * (shared ? 1u << (c_ - 1) : (u32)nw_ << (c_ - 1));
  m_ = 0;
  levels_ = 0;
  if (n == 0) {
    planned_.record(s_);
    return;
  }

  size_t cap = nbatch_ == 1 ? bound : n * (size_t)nw_;
  if (cap >= (size_t(1) << 32)) throw GpuError("GPU MSM: too many digit entries for one plan");
  for (int i = 0; i < 2; i++) {
    keys_[i].reserve(cap);
    vals_[i].reserve(cap);
  }
  scalars_d_.reserve(2 + kMaxLevels);
  CUZK_CUDA_CHECK(cudaMemsetAsync(scalars_d_.get(), 0, sizeof(u32), s_));
  k_emit<<<grid_for(total, kEmitThreads), kEmitThreads, 0, s_>>>(
      d_scalars, total, (u32)n, nb_ / vectors, c_, w0_, nw_, shared ? (u32)n : 0u, keys_[0].get(), vals_[0].get(),
      scalars_d_.get());
  CUZK_CUDA_LAUNCHED("k_emit");
  plan_sorted(total);
}
template void MsmEngine::plan(const Dev<Bls12_381>::Fr*, size_t, int, bool, int, const u64*, u32);
template void MsmEngine::plan(const Dev<Bn254>::Fr*, size_t, int, bool, int, const u64*, u32);

void MsmEngine::plan_sorted(size_t n) {
  u32 m = 0;
  d2h(&m, scalars_d_.get(), 1, s_);
  m_ = m;
  if (m == 0) {
    planned_.record(s_);
    return;
  }

  // Sort entries by (window, bucket).
  int end_bit = 1;
  while ((u64(1) << end_bit) < nb_) end_bit++;
  cub::DoubleBuffer<u32> dk(keys_[0].get(), keys_[1].get()), dv(vals_[0].get(), vals_[1].get());
  size_t bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, (int)m, 0, end_bit, s_));
  size_t scan_bytes = 0, max_bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, (u32*)nullptr, (u32*)nullptr, (int)nb_, s_));
  CUZK_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, max_bytes, (u32*)nullptr, (u32*)nullptr, (int)nb_, s_));
  cub_tmp_.reserve(std::max({bytes, scan_bytes, max_bytes, size_t(16)}));
  bytes = cub_tmp_.size();
  CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_tmp_.get(), bytes, dk, dv, (int)m, 0, end_bit, s_));
  sorted_ = dk.selector;
  if (dv.selector != dk.selector) throw GpuError("GPU MSM: key and value buffers of the sort diverged");

  // Bucket ranges and level-0 tasks: about two average buckets per task, at least 32 entries, for
  // plans that fill the device. A small plan is bound by the latency of its longest chain of
  // additions, about 20-40 us each for one thread (measured at 2^13 on an H100: 88 mixed additions
  // in a row took 3.1 ms, a 32-bucket running sum 1.9 ms), not by the device's rate: its tasks are
  // cut as short as fills the device (at least 4 entries) and summed 4 at a time above level 0.
  start_.reserve(nb_);
  end_.reserve(nb_);
  count_.reserve(nb_);
  CUZK_CUDA_CHECK(cudaMemsetAsync(start_.get(), 0, nb_ * sizeof(u32), s_));
  CUZK_CUDA_CHECK(cudaMemsetAsync(end_.get(), 0, nb_ * sizeof(u32), s_));
  k_bounds<<<small_grid(m), 256, 0, s_>>>(keys_[sorted_].get(), m, start_.get(), end_.get());
  CUZK_CUDA_LAUNCHED("k_bounds");
  u32 avg = (u32)std::max<u64>(1, m / nb_);
  l0_ = 32;
  while (l0_ < 2 * avg && l0_ < 4096) l0_ *= 2;
  u32 fit = 4;
  while ((u64)fit * fill_ < m && fit < l0_) fit *= 2;
  l0_ = std::min(l0_, fit);
  l1_ = l0_ < 32 ? 4 : kL1;
  if (ntask_.size() < (size_t)kMaxLevels) {
    ntask_.resize(kMaxLevels);
    toff_.resize(kMaxLevels);
  }
  ntask_[0].reserve(nb_);
  toff_[0].reserve(nb_);
  k_level0_tasks<<<small_grid(nb_), 256, 0, s_>>>(start_.get(), end_.get(), nb_, l0_, count_.get(), ntask_[0].get());
  CUZK_CUDA_LAUNCHED("k_level0_tasks");
  bytes = cub_tmp_.size();
  CUZK_CUDA_CHECK(cub::DeviceReduce::Max(cub_tmp_.get(), bytes, count_.get(), scalars_d_.get() + 1, (int)nb_, s_));
  bytes = cub_tmp_.size();
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_tmp_.get(), bytes, ntask_[0].get(), toff_[0].get(), (int)nb_, s_));
  u32 max_count = 0;
  d2h(&max_count, scalars_d_.get() + 1, 1, s_);

  // Levels until every bucket is one partial sum.
  levels_ = 1;
  for (u32 t = ceil_div(max_count, l0_); t > 1; t = ceil_div(t, l1_)) levels_++;
  if (levels_ > kMaxLevels) throw GpuError("GPU MSM: bucket reduction needs too many levels");
  for (int l = 1; l < levels_; l++) {
    ntask_[l].reserve(nb_);
    toff_[l].reserve(nb_);
    k_next_tasks<<<small_grid(nb_), 256, 0, s_>>>(ntask_[l - 1].get(), nb_, l1_, ntask_[l].get());
    CUZK_CUDA_LAUNCHED("k_next_tasks");
    bytes = cub_tmp_.size();
    CUZK_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(cub_tmp_.get(), bytes, ntask_[l].get(), toff_[l].get(), (int)nb_, s_));
  }
  for (int l = 0; l < levels_; l++) {
    k_total<<<1, 1, 0, s_>>>(toff_[l].get(), ntask_[l].get(), nb_, scalars_d_.get() + 2 + l);
    CUZK_CUDA_LAUNCHED("k_total");
  }
  totals_.assign(levels_, 0);
  d2h(totals_.data(), scalars_d_.get() + 2, levels_, s_);
  if (map_.size() < (size_t)kMaxLevels) map_.resize(kMaxLevels);
  for (int l = 0; l < levels_; l++) {
    map_[l].reserve(std::max<u32>(totals_[l], 1));
    k_task_map<<<small_grid(nb_), 256, 0, s_>>>(ntask_[l].get(), toff_[l].get(), nb_, map_[l].get());
    CUZK_CUDA_LAUNCHED("k_task_map");
  }
  task_order();
  planned_.record(s_);
}

void MsmEngine::reserve(size_t n, int window, bool shared, size_t xyzz_bytes) {
  order_ready_ = false;  // the task buffers may move
  if (n == 0) return;
  int c = window ? window : shared ? msm_auto_window_shared(n) : msm_auto_window(n);
  int nw = msm_windows(c);
  if (!shared && cap_) nw = (int)std::clamp<size_t>(cap_ / n, 1, (size_t)nw);  // one window batch
  size_t cap = n * (size_t)nw;
  size_t nb = shared ? size_t(1) << (c - 1) : (size_t)nw << (c - 1);
  for (int i = 0; i < 2; i++) {
    keys_[i].reserve(cap);
    vals_[i].reserve(cap);
  }
  start_.reserve(nb);
  end_.reserve(nb);
  count_.reserve(nb);
  nb_reserved_ = std::max(nb_reserved_, nb);
  // Level-0 tasks: sum over buckets of ceil(count / l0) <= nb + m / l0, and plan() picks l0 >= 2 m / nb
  // unless it stops at 4096, so at most 1.5 nb + cap / 4096.
  own_.partial0.reserve((nb + nb / 2 + cap / 4096 + 1) * xyzz_bytes);
  for (int i = 0; i < 2; i++) {
    task_key_[i].reserve(nb + nb / 2 + cap / 4096 + 1);
    task_id_[i].reserve(nb + nb / 2 + cap / 4096 + 1);
  }
  own_.buckets.reserve(nb * xyzz_bytes);
  size_t wins = shared ? 1 : (size_t)nw, per_window_buckets = nb / wins;
  size_t K = std::min<size_t>(kChunk, per_window_buckets), nchunks = per_window_buckets / K * wins;
  for (auto& ch : own_.chunks) ch.reserve(nchunks * xyzz_bytes);
}

template <class C>
void MsmEngine::launch_acc0(const Affine<C>* d_points, u32 idx_offset, const u32* order, XYZZ<C>* out,
                            cudaStream_t s) {
  auto kern = shared_ ? k_acc0<C, true> : k_acc0<C, false>;
  kern<<<grid_for(totals_[0], kAccThreads), kAccThreads, 0, s>>>(
      d_points, idx_offset, (u32)n_, (u32)(n_ - idx_offset), vals_[sorted_].get(), start_.get(), end_.get(),
      toff_[0].get(), map_[0].get(), l0_, totals_[0], order, out);
  CUZK_CUDA_LAUNCHED("k_acc0");
}

// A window's buckets are summed in chunks of K, one thread each (a running sum of 2K additions,
// then a multiply by the chunk's offset), then the chunks in a tree. With more buckets than the
// device runs threads at once, 32; with fewer, 2, since there every addition in a row costs the
// latency of one thread (a 32-bucket chunk took 1.9 ms at 2^13 on an H100, about 20 us an addition).
u32 MsmEngine::chunk_width() const {
  const u32 per_window_buckets = nb_ / sum_windows();
  return std::min(nb_ < fill_ ? 2u : kChunk, per_window_buckets);
}

template <class C>
Jacobian<typename C::Host> MsmEngine::run(const Affine<C>* d_points, u32 idx_offset) {
  if (nv_ != 1) throw GpuError("GPU MSM: run() gives one sum; a plan of several vectors needs launch and result");
  launch(d_points, idx_offset, s_, own_);
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s_));
  return result<C>(own_);
}

template <class C>
void MsmEngine::launch(const Affine<C>* d_points, u32 idx_offset, cudaStream_t s, RunScratch& sc) {
  using P = XYZZ<C>;
  constexpr bool g1 = kIsPrimeField<typename C::F>;
  if (m_ == 0) return;

  // Level 0 from the sorted entries, then the levels above from partial sums.
  sc.partial0.reserve((size_t)totals_[0] * sizeof(P));
  size_t hi_total = 0;
  for (int l = 1; l < levels_; l++) hi_total += totals_[l];
  sc.partials_hi.reserve(std::max<size_t>(hi_total, 1) * sizeof(P));
  Levels lv{};
  lv.count = levels_;
  P* outs[kMaxLevels];
  outs[0] = reinterpret_cast<P*>(sc.partial0.get());
  size_t off = 0;
  for (int l = 1; l < levels_; l++) {
    outs[l] = reinterpret_cast<P*>(sc.partials_hi.get()) + off;
    off += totals_[l];
  }
  for (int l = 0; l < levels_; l++) {
    lv.ntask[l] = ntask_[l].get();
    lv.toff[l] = toff_[l].get();
    lv.out[l] = outs[l];
  }
  if (s != s_) CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, planned_.get(), 0));
  // Level-0 tasks longest first (task_order, built with the plan): the long sums start at once and
  // the short ones fill the SMs at the end, instead of a few long ones running alone after the rest.
  const u32* order = order_ready_ ? order_ : nullptr;  // reserve() after the plan may have moved it
  if constexpr (g1) {
    launch_acc0<C>(d_points, idx_offset, order, outs[0], s);
  } else {
    auto launch_pair = shared_ ? msm_acc0_g2_pair_shared<C> : msm_acc0_g2_pair_plain<C>;
    launch_pair(d_points, idx_offset, (u32)n_, (u32)(n_ - idx_offset), vals_[sorted_].get(), start_.get(), end_.get(),
                toff_[0].get(), map_[0].get(), l0_, totals_[0], order, outs[0], s);
  }
  for (int l = 1; l < levels_; l++) {
    if (totals_[l] == 0) continue;
    if constexpr (g1) {
      k_acc_level<C><<<grid_for(totals_[l], kAccThreads), kAccThreads, 0, s>>>(
          outs[l - 1], toff_[l - 1].get(), ntask_[l - 1].get(), toff_[l].get(), map_[l].get(), l1_, totals_[l],
          outs[l]);
      CUZK_CUDA_LAUNCHED("k_acc_level");
    } else {
      msm_acc_level_g2_pair(outs[l - 1], toff_[l - 1].get(), ntask_[l - 1].get(), toff_[l].get(), map_[l].get(),
                            l1_, totals_[l], outs[l], s);
    }
  }
  sc.buckets.reserve((size_t)nb_ * sizeof(P));
  P* buckets = reinterpret_cast<P*>(sc.buckets.get());
  k_finalize<C><<<small_grid(nb_), 256, 0, s>>>(lv, nb_, buckets);
  CUZK_CUDA_LAUNCHED("k_finalize");

  // Window sums: chunks of K buckets, then pairs of chunks until one per window (a single window of
  // shared buckets over precomputed bases).
  const u32 nw = sum_windows();
  u32 per_window_buckets = nb_ / nw;
  u32 K = chunk_width();
  u32 per_window = per_window_buckets / K;
  u32 nchunks = per_window * nw;
  sc.chunks[0].reserve((size_t)nchunks * sizeof(P));
  sc.chunks[1].reserve((size_t)nchunks * sizeof(P));
  P* cur = reinterpret_cast<P*>(sc.chunks[0].get());
  P* nxt = reinterpret_cast<P*>(sc.chunks[1].get());
  // A small plan's first levels of the tree inside the chunks' kernel, where a block's chunks share
  // a window.
  const u32 block_chunks = g1 ? kAccThreads : kPairThreads / 2;
  const bool tree = nb_ < fill_ && per_window % block_chunks == 0;
  if constexpr (g1) {
    k_chunks<C><<<grid_for(nchunks, kAccThreads), kAccThreads, 0, s>>>(buckets, per_window, K, nchunks, tree, cur);
    CUZK_CUDA_LAUNCHED("k_chunks");
  } else {
    msm_chunks_g2_pair(buckets, per_window, K, nchunks, tree, cur, s);
  }
  if (tree) per_window /= block_chunks;
  while (per_window > 1) {
    // A tree of two-way sums is 14 additions deep over 2^14 chunks, against 3 x 32 for chains of 32:
    // these kernels run only a few hundred threads and are latency-bound, so depth is their cost.
    u32 gs = std::min<u32>(2, per_window);
    u32 n_out = (per_window / gs) * nw;
    if constexpr (g1) {
      k_group_sum<C><<<grid_for(n_out, kAccThreads), kAccThreads, 0, s>>>(cur, gs, n_out, nxt);
      CUZK_CUDA_LAUNCHED("k_group_sum");
    } else {
      msm_group_sum_g2_pair(cur, gs, n_out, nxt, s);
    }
    std::swap(cur, nxt);
    per_window /= gs;
  }
  sc.windows.reserve((size_t)nw * sizeof(P));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(sc.windows.get(), cur, (size_t)nw * sizeof(P), cudaMemcpyDeviceToHost, s));
}

template <class C>
Jacobian<typename C::Host> MsmEngine::result(const RunScratch& sc, u32 vector) const {
  using HC = typename C::Host;
  using P = XYZZ<C>;
  static_assert(sizeof(P) == sizeof(XYZZ<HC>), "device and host XYZZ points must share bytes");
  if (vector >= nv_) throw GpuError("GPU MSM: no scalar vector " + std::to_string(vector) + " in this plan");
  if (m_ == 0) return host::infinity<HC>();
  const int nw = shared_ ? 1 : nw_;
  return host::from_windows<HC>(reinterpret_cast<const P*>(sc.windows.get()) + (size_t)vector * nw, nw, c_,
                                shared_ ? 0 : w0_);
}

template <class C>
void msm_precompute(const Affine<C>* d_points, size_t n, int c, Affine<C>* d_table, cudaStream_t s) {
  int nw = msm_windows(c);
  if (c < 8 || nw > kMsmMaxSharedWindows) throw GpuError("MSM precomputation needs a window of at least 8 bits");
  if (n == 0) return;
  k_shifted_copies<C><<<grid_for(n, 128), 128, 0, s>>>(d_points, n, c, nw, d_table);
  CUZK_CUDA_LAUNCHED("k_shifted_copies");
}

#define CUZK_INSTANTIATE(C)                                                                                 \
  template void msm_precompute(const Dev<C>::G1Affine*, size_t, int, Dev<C>::G1Affine*, cudaStream_t);     \
  template void msm_precompute(const Dev<C>::G2Affine*, size_t, int, Dev<C>::G2Affine*, cudaStream_t);     \
  template C::G1 MsmEngine::run(const Dev<C>::G1Affine*, u32);                                              \
  template C::G2 MsmEngine::run(const Dev<C>::G2Affine*, u32);                                              \
  template void MsmEngine::launch(const Dev<C>::G1Affine*, u32, cudaStream_t, RunScratch&);                 \
  template void MsmEngine::launch(const Dev<C>::G2Affine*, u32, cudaStream_t, RunScratch&);                 \
  template C::G1 MsmEngine::result<Dev<C>::G1>(const RunScratch&, u32) const;                               \
  template C::G2 MsmEngine::result<Dev<C>::G2>(const RunScratch&, u32) const;
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

// ---- plain API ----

// G1 and G2 run the same template; the two names say which group a call site means.
template <class HC, class FrP>
Jacobian<HC> msm_g1(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window,
                    size_t max_entries) {
  MsmUpload<HC, Fp<FrP>> o(device, points, scalars, n);
  o.eng.set_entry_cap(max_entries);
  Jacobian<HC> sum = host::infinity<HC>();
  o.eng.each_batch(o.sc.get(), n, window, false, [&] { sum = host::add(sum, o.eng.run(o.pts.get())); });
  return sum;
}
template <class HC, class FrP>
Jacobian<HC> msm_g2(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window,
                    size_t max_entries) {
  return msm_g1(device, points, scalars, n, window, max_entries);
}

// Precomputed bases: the same one-shot MSM with the window copies built on the device first.
template <class HC, class FrP>
Jacobian<HC> msm_g1_precomputed(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window) {
  MsmUpload<HC, Fp<FrP>> o(device, points, scalars, n);
  o.eng.plan(o.sc.get(), n, window, true);
  DevBuf<Affine<DeviceCurve<HC>>> table;
  table.resize(std::max<size_t>(n * msm_windows(o.eng.window()), 1));
  msm_precompute(o.pts.get(), n, o.eng.window(), table.get(), o.st.get());
  return o.eng.run(table.get());
}
template <class HC, class FrP>
Jacobian<HC> msm_g2_precomputed(int device, const Affine<HC>* points, const Fp<FrP>* scalars, size_t n, int window) {
  return msm_g1_precomputed(device, points, scalars, n, window);
}

#define CUZK_INSTANTIATE(C)                                                                          \
  template C::G1 msm_g1(int, const C::G1Affine*, const C::Fr*, size_t, int, size_t);                 \
  template C::G2 msm_g2(int, const C::G2Affine*, const C::Fr*, size_t, int, size_t);                 \
  template C::G1 msm_g1_precomputed(int, const C::G1Affine*, const C::Fr*, size_t, int);             \
  template C::G2 msm_g2_precomputed(int, const C::G2Affine*, const C::Fr*, size_t, int);
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace gpu
}  // namespace cuzk
