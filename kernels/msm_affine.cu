// Batch-affine bucket accumulation on the device (msm_affine.cuh for the algorithm): the rounds'
// kernels and MsmEngine's side of them. A file of its own so that it compiles beside msm.cu.
#include <cub/cub.cuh>

#include <algorithm>

#include "engines.cuh"
#include "msm_affine.cuh"

namespace cuzk {
namespace gpu {

namespace {

constexpr int kAffThreads = 128;
// Lanes of Montgomery's trick per round: enough to fill the H200 (132 SMs x 2048 threads) about
// once; groups of kAffGroup lane products per level above. Entries per chunk: the rounds' scratch
// is ~100 bytes per entry of a chunk (6.7 GB at 2^26), whatever the plan's size.
constexpr u32 kAffLanes = 1u << 18, kAffGroup = 32;
constexpr u64 kAffChunkEntries = u64(1) << 26;

__global__ void k_aff_pairs(const u32* poff, const u32* npairs, u32 nb, u32* P) { *P = poff[nb - 1] + npairs[nb - 1]; }

__global__ void k_aff_counts(const u32* cnt, u32 nb, u32* npairs, u32* ncnt) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) aff_counts(cnt, npairs, ncnt, b);
}

template <class C, class Src>
__global__ void k_aff_carry(Src src, const u32* off, const u32* cnt, const u32* poff, const u32* noff, u32 nb,
                            u32* map, Affine<C>* out) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x)
    aff_carry<C>(src, off, cnt, poff, noff, map, out, b);
}

// The round's pair count P is read on the device (k_aff_pairs wrote it), so that no round waits for
// the host.
template <class C, class Src>
__global__ void __launch_bounds__(kAffThreads) k_aff_product(Src src, const u32* map, const u32* off, const u32* poff,
                                                             const u32* noff, const u32* P, u32 T,
                                                             typename C::F* pre, typename C::F* lane_prod) {
  u32 l = blockIdx.x * blockDim.x + threadIdx.x;
  if (l < T) aff_product<C>(src, map, off, poff, noff, *P, T, l, pre, lane_prod);
}

template <class C, class Src>
__global__ void __launch_bounds__(kAffThreads) k_aff_apply(Src src, const u32* map, const u32* off, const u32* poff,
                                                           const u32* noff, const u32* P, u32 T,
                                                           const typename C::F* pre, const typename C::F* lane_inv,
                                                           Affine<C>* out) {
  u32 l = blockIdx.x * blockDim.x + threadIdx.x;
  if (l < T) aff_apply<C>(src, map, off, poff, noff, *P, T, l, pre, lane_inv, out);
}

template <class F>
__global__ void __launch_bounds__(kAffThreads) k_aff_up(const F* v, u32 n, u32 G, F* pre, F* up, u32 groups) {
  u32 g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < groups) aff_level_up(v, n, G, pre, up, g);
}
template <class F>
__global__ void __launch_bounds__(kAffThreads) k_aff_down(F* v, u32 n, u32 G, const F* pre, const F* up, u32 groups) {
  u32 g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < groups) aff_level_down(v, n, G, pre, up, g);
}
template <class F>
__global__ void k_aff_top(F* v, u32 n, F* pre) {
  aff_level_top(v, n, pre);
}

__global__ void k_aff_clip(const u32* start, const u32* end, u32 nb, u32 e0, u32 e1, u32* cnt, u32* off) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x)
    aff_clip(start, end, e0, e1, cnt, off, b);
}

// prev: null for the first chunk, else the buckets themselves (each thread reads and writes its own).
template <class C, class Src>
__global__ void k_aff_buckets(Src src, const u32* off, const u32* cnt, u32 nb, const XYZZ<C>* prev, XYZZ<C>* buckets) {
  for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x)
    store(buckets + b, aff_bucket<C>(src, off, cnt, prev, b));
}

struct MaxU32 {
  __device__ __forceinline__ u32 operator()(u32 a, u32 b) const { return a > b ? a : b; }
};

}  // namespace

// Entries per chunk of a plan of m entries.
u64 MsmEngine::affine_chunk(u64 m) const {
  return std::min<u64>(m, cap_ ? std::min<u64>(cap_, kAffChunkEntries) : kAffChunkEntries);
}

// Grows the rounds' buffers to what a chunk of `chunk` entries over nb buckets needs (bounds, see
// aff_next_points); a no-op once they are that large.
void MsmEngine::reserve_affine_scratch(u64 chunk, u32 nb, size_t f_bytes, size_t a_bytes) {
  const u64 pairs0 = std::max<u64>(chunk / 2, 1), pts1 = std::max<u64>(aff_next_points(chunk, nb), 1);
  aff_u32_.reserve(6 * (size_t)nb + 1);
  aff_map_.reserve(pairs0);
  aff_pre_.reserve(pairs0 * f_bytes);
  aff_pts_[0].reserve(pts1 * a_bytes);
  aff_pts_[1].reserve(std::max<u64>(aff_next_points(pts1, nb), 1) * a_bytes);
  u32 sizes[kAffMaxLevels];
  const int max_levels = aff_levels((u32)std::min<u64>(pairs0, kAffLanes), kAffGroup, sizes);
  size_t level_values = 0;
  for (int k = 0; k <= max_levels; k++) level_values += sizes[k];
  aff_levels_.reserve(2 * level_values * f_bytes);
  // Scratch of the scans: ExclusiveSum over nb and the map's max-scan.
  size_t scan_bytes = 0, sum_bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, scan_bytes, aff_map_.get(), MaxU32{}, pairs0, s_));
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, sum_bytes, (u32*)nullptr, (u32*)nullptr, (int)nb, s_));
  cub_tmp_.reserve(std::max({scan_bytes, sum_bytes, size_t(16)}));
}

// Batch-affine rounds over the plan's sorted entries (msm_affine.cuh), in chunks of at most
// kAffChunkEntries entries (or the entry cap, when one is set), every round queued without a wait:
// buffer sizes come from bounds on the chunk's entries and the buckets nb, and each round's pair
// count stays on the device. Round r writes its points to aff_pts_[r & 1] and its (cnt, off) to set
// r & 1, reading the other (round 0: the entries through their values; its (cnt, off) are the
// plan's count_ and start_ when one chunk covers them all, else their clip to the chunk in set 1).
template <class C>
void MsmEngine::accumulate_affine(const Affine<C>* d_points, u32 idx_offset, XYZZ<C>* buckets) {
  using F = typename C::F;
  using A = Affine<C>;
  const u32 nb = nb_;
  const u64 chunk = affine_chunk(m_);
  reserve_affine_scratch(chunk, nb, sizeof(F), sizeof(A));
  u32* npairs = aff_u32_.get();
  u32* poff = npairs + nb;
  u32* cnts[2] = {npairs + 2 * (size_t)nb, npairs + 3 * (size_t)nb};
  u32* offs[2] = {npairs + 4 * (size_t)nb, npairs + 5 * (size_t)nb};
  u32* P = npairs + 6 * (size_t)nb;  // the round's pair count
  u32 sizes[kAffMaxLevels];

  const u32* cnt = nullptr;
  const u32* off = nullptr;
  const A* in = nullptr;
  u64 m_r = 0;
  auto round = [&](const auto& src, int r) {
    u32* ncnt = cnts[r & 1];
    u32* noff = offs[r & 1];
    A* out = reinterpret_cast<A*>(aff_pts_[r & 1].get());
    const u64 pairs = m_r / 2;
    k_aff_counts<<<small_grid(nb), 256, 0, s_>>>(cnt, nb, npairs, ncnt);
    CUZK_CUDA_LAUNCHED("k_aff_counts");
    size_t bytes = cub_tmp_.size();
    CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_tmp_.get(), bytes, npairs, poff, (int)nb, s_));
    bytes = cub_tmp_.size();
    CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_tmp_.get(), bytes, ncnt, noff, (int)nb, s_));
    k_aff_pairs<<<1, 1, 0, s_>>>(poff, npairs, nb, P);
    CUZK_CUDA_LAUNCHED("k_aff_pairs");
    CUZK_CUDA_CHECK(cudaMemsetAsync(aff_map_.get(), 0, pairs * sizeof(u32), s_));
    k_aff_carry<C><<<small_grid(nb), 256, 0, s_>>>(src, off, cnt, poff, noff, nb, aff_map_.get(), out);
    CUZK_CUDA_LAUNCHED("k_aff_carry");
    bytes = cub_tmp_.size();
    CUZK_CUDA_CHECK(cub::DeviceScan::InclusiveScan(cub_tmp_.get(), bytes, aff_map_.get(), MaxU32{}, pairs, s_));

    const u32 T = (u32)std::clamp<u64>(pairs, 1, kAffLanes);
    const int levels = aff_levels(T, kAffGroup, sizes);
    F* v[kAffMaxLevels];
    F* pre[kAffMaxLevels];
    F* base = reinterpret_cast<F*>(aff_levels_.get());
    for (int k = 0; k <= levels; k++) {
      v[k] = base;
      pre[k] = base + sizes[k];
      base += 2 * (size_t)sizes[k];
    }
    F* pair_pre = reinterpret_cast<F*>(aff_pre_.get());
    k_aff_product<C><<<grid_for(T, kAffThreads), kAffThreads, 0, s_>>>(src, aff_map_.get(), off, poff, noff, P, T,
                                                                      pair_pre, v[0]);
    CUZK_CUDA_LAUNCHED("k_aff_product");
    for (int k = 0; k < levels; k++) {
      k_aff_up<<<grid_for(sizes[k + 1], kAffThreads), kAffThreads, 0, s_>>>(v[k], sizes[k], kAffGroup, pre[k],
                                                                             v[k + 1], sizes[k + 1]);
      CUZK_CUDA_LAUNCHED("k_aff_up");
    }
    k_aff_top<<<1, 1, 0, s_>>>(v[levels], sizes[levels], pre[levels]);
    CUZK_CUDA_LAUNCHED("k_aff_top");
    for (int k = levels; k-- > 0;) {
      k_aff_down<<<grid_for(sizes[k + 1], kAffThreads), kAffThreads, 0, s_>>>(v[k], sizes[k], kAffGroup, pre[k],
                                                                               v[k + 1], sizes[k + 1]);
      CUZK_CUDA_LAUNCHED("k_aff_down");
    }
    k_aff_apply<C><<<grid_for(T, kAffThreads), kAffThreads, 0, s_>>>(src, aff_map_.get(), off, poff, noff, P, T,
                                                                    pair_pre, v[0], out);
    CUZK_CUDA_LAUNCHED("k_aff_apply");
    in = out;
    cnt = ncnt;
    off = noff;
    m_r = aff_next_points(m_r, nb);
  };
  auto finish = [&](const auto& src, bool first) {
    k_aff_buckets<C><<<small_grid(nb), 256, 0, s_>>>(src, off, cnt, nb, first ? nullptr : buckets, buckets);
    CUZK_CUDA_LAUNCHED("k_aff_buckets");
  };
  auto from_entries = [&](const auto& src0) {
    for (u64 e0 = 0; e0 < m_; e0 += chunk) {
      const u64 e1 = std::min<u64>(m_, e0 + chunk);
      if (chunk == m_) {
        cnt = count_.get();
        off = start_.get();
      } else {
        k_aff_clip<<<small_grid(nb), 256, 0, s_>>>(start_.get(), end_.get(), nb, (u32)e0, (u32)e1, cnts[1], offs[1]);
        CUZK_CUDA_LAUNCHED("k_aff_clip");
        cnt = cnts[1];
        off = offs[1];
      }
      m_r = e1 - e0;
      const int rounds = aff_rounds((u32)std::min<u64>(max_count_, m_r));
      if (rounds == 0) {
        finish(src0, e0 == 0);
        continue;
      }
      round(src0, 0);
      for (int r = 1; r < rounds; r++) round(AffinePoints<C>{in}, r);
      finish(AffinePoints<C>{in}, e0 == 0);
    }
  };
  const u32* vals = vals_[sorted_].get();
  if (shared_)
    from_entries(MsmSharedEntryPoints<C>{d_points, vals, idx_offset, (u32)n_, (u32)(n_ - idx_offset)});
  else
    from_entries(MsmEntryPoints<C>{d_points, vals, idx_offset});
}

#define CUZK_INSTANTIATE(C)                                                                                  \
  template void MsmEngine::accumulate_affine(const Dev<C>::G1Affine*, u32, Dev<C>::G1xyzz*);                \
  template void MsmEngine::accumulate_affine(const Dev<C>::G2Affine*, u32, Dev<C>::G2xyzz*);
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace gpu
}  // namespace cuzk
