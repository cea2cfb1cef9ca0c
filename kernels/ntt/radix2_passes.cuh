// The radix-2 tile passes of the plan (plan.cuh): a block loads its tile into shared memory, runs
// the pass's t stages there one at a time, with a barrier after each, and stores it back.
// NttEngine runs them for the 2-point transform, below the one radix-4 unit that the register
// passes (radix4_passes.cuh) need; the host emulation tests run them at every size.
#pragma once
#include "kernels/ntt/plan.cuh"

namespace cuzk {
namespace gpu {

constexpr int kNttThreads = 256;  // threads per block: one per butterfly of the tile, at most this many

// Shared-memory layout: row-major by r, so that consecutive threads touch consecutive groups.
template <class F>
CUZK_HD void ntt_tile_load(const NttPass& p, const F* data, F* smem, size_t block, u32 tid, u32 nthreads) {
  u32 total = ntt_tile_size(p), gmask = (1u << p.g_log) - 1;
  for (u32 f = tid; f < total; f += nthreads)
    smem[f] = load(data + ntt_index(p, (block << p.g_log) + (f & gmask), f >> p.g_log));
}
template <class F>
CUZK_HD void ntt_tile_store(const NttPass& p, F* data, const F* smem, size_t block, u32 tid, u32 nthreads) {
  u32 total = ntt_tile_size(p), gmask = (1u << p.g_log) - 1;
  for (u32 f = tid; f < total; f += nthreads)
    store(data + ntt_index(p, (block << p.g_log) + (f & gmask), f >> p.g_log), smem[f]);
}

// Stage st of the pass (0-based, in execution order) on the tile in shared memory.
template <class F>
CUZK_HD void ntt_tile_stage(const NttPass& p, F* smem, const F* tw, size_t block, int st, u32 tid,
                            u32 nthreads) {
  const u32 G = 1u << p.g_log;
  const int hb = p.dit ? st : p.t - 1 - st;  // the butterfly distance 2^hb, in rows
  const u32 h = 1u << hb;
  const int b = p.lo + hb;  // the global index bit this stage works on
  const size_t half_table = size_t(1) << (p.kt - 1);
  const u32 npairs = (G << p.t) >> 1;
  for (u32 q = tid; q < npairs; q += nthreads) {
    u32 g = q & (G - 1), pr = q >> p.g_log;
    u32 r0 = ((pr >> hb) << (hb + 1)) | (pr & (h - 1));
    size_t gid = (block << p.g_log) + g;
    size_t j = (size_t(r0 & (h - 1)) << p.lo) | (gid & ((size_t(1) << p.lo) - 1));
    F* pu = smem + r0 * G + g;
    F* pv = pu + h * G;
    F u = *pu, v = *pv;
    if (j == 0) {  // w^0 = 1 in both directions
      *pu = u + v;
      *pv = u - v;
      continue;
    }
    size_t e = j << (p.kt - 1 - b);
    F w = load(tw + (p.inverse ? half_table - e : e));  // inverse: w = -omega^-e
    if (!p.dit) {
      *pu = u + v;
      *pv = p.inverse ? (v - u) * w : (u - v) * w;
    } else {
      F t = v * w;
      *pu = p.inverse ? u - t : u + t;
      *pv = p.inverse ? u + t : u - t;
    }
  }
}

}  // namespace gpu
}  // namespace cuzk
