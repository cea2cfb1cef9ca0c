// NTT kernels and the NttEngine; the plain-API entry points ntt(), compute_h_coset(), bench_ntt().
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "bench_util.cuh"
#include "engines.cuh"
#include "host_math.hpp"
#include "ntt_v2_core.cuh"

namespace cuzk {
namespace gpu {

namespace {

__global__ void k_ntt_pass(DFr* data, const DFr* tw, NttPass p) {
  extern __shared__ uint4 smem_raw[];
  DFr* smem = reinterpret_cast<DFr*>(smem_raw);
  ntt_tile_load(p, data, smem, blockIdx.x, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int st = 0; st < p.t; st++) {
    ntt_tile_stage(p, smem, tw, blockIdx.x, st, threadIdx.x, blockDim.x);
    __syncthreads();
  }
  ntt_tile_store(p, data, smem, blockIdx.x, threadIdx.x, blockDim.x);
}

// The radix-8 pass: the pass's sub-rounds, a barrier between each two.
__global__ void __launch_bounds__(1u << (kNttR8TileBits - 3), 2) k_ntt_pass_r8(DFr* data, const DFr* tw, NttPass p) {
  extern __shared__ uint4 smem_raw[];
  DFr* smem = reinterpret_cast<DFr*>(smem_raw);
  const int nsr = ntt_subrounds(p.t);
  for (int sr = 0; sr < nsr; sr++) {
    if (sr > 0) __syncthreads();
    ntt_r8_round(p, sr, data, smem, tw, blockIdx.x, threadIdx.x);
  }
}

__global__ void __launch_bounds__(kPermThreads) k_ntt_permute_tiled(DFr* data, int k, NttScale s) {
  __shared__ DFr tA[kPermSide * kPermStride], tB[kPermSide * kPermStride];
  ntt_perm_tile(data, k, s, tA, tB, blockIdx.x, threadIdx.x, 0);
  __syncthreads();
  ntt_perm_tile(data, k, s, tA, tB, blockIdx.x, threadIdx.x, 1);
}

// Kernel choice, read per call so that one build can A/B each change on its own (docs/PERFORMANCE.md,
// GPU NTT): CUZK_NTT_R8=1 runs the radix-8 register passes of the first attempt (2^11 tiles, slower,
// takes precedence), CUZK_NTT_V2 picks the pass kernels, CUZK_NTT_TILED_PERM the bit reversal.
bool ntt_r8_passes() { return env_switch("CUZK_NTT_R8", false); }
// The tiled bit reversal is the default since the v2 passes (measured 0.48 ms faster at 2^24);
// CUZK_NTT_TILED_PERM=0 selects the element-wise swap.
bool ntt_tiled_perm() { return env_switch("CUZK_NTT_TILED_PERM", true); }
bool ntt_fuse_scale() { return env_switch("CUZK_NTT_FUSE_SCALE", true); }
// CUZK_NTT_FUSED_PERM (default on; 0 = the separate bit-reversal kernel): forward / inverse store the
// last DIF pass's output straight at the bit-reversed positions (ntt_v2_perm_plan), with the inverse's
// scale; needs the v2 passes, 2+ passes (2^11 and up) and an n-element scratch buffer.
bool ntt_fused_perm() { return env_switch("CUZK_NTT_FUSED_PERM", true); }
// CUZK_NTT_LAST_PASS_BITS (fused plans only; unset or 0 = the even split, 8+8+8 at 2^24, 9+9+9 at
// 2^27): stages of that last pass, G = 2^(10 - bits) groups per tile = the contiguous run of its
// bit-reversed store (7: 9+8+7 / 10+10+7, 256-byte runs, against 128 / 64 bytes for the even split).
int ntt_last_pass_bits() { return env_int("CUZK_NTT_LAST_PASS_BITS"); }
// CUZK_NTT_PASSES=n (v2 passes only; 0 = the fewest, 3 at 2^21..2^30; unset = 4 from 2^27, the
// fewest below): plans of at least n passes (ntt_plan's min_passes). At 2^27 4 passes (7+7+7+6) beat
// 9+9+9 by 1.2% (docs/PERFORMANCE.md, session 7); at 2^26 they lose 0.7%.
int ntt_min_passes(int log_n) { return env_int("CUZK_NTT_PASSES", log_n >= 27 ? 4 : 0); }
// CUZK_NTT_V2 (read per call): unset or auto = r4plain up to 2^24 and from 2^27, r4b4 at 2^25-2^26 (the
// fastest measured at each size, docs/PERFORMANCE.md session 7); r4 (radix-4 sub-rounds, r-shaped
// multiply), r4plain (same, DFr's generic reduction rows), r2 (radix-2 sub-rounds), r4b4 (r4 at 64
// registers), r4pf (r4, persistent grid with the next tile prefetched), r4i / r4b4i (r4 / r4b4 as
// before session 7, unfused reduction rows); 0 = the radix-2 passes.
int ntt_v2_variant(int log_n) {
  const char* e = std::getenv("CUZK_NTT_V2");
  if (!e || !*e || !std::strcmp(e, "auto")) return log_n == 25 || log_n == 26 ? kNttV2R4Occ4 : kNttV2R4Plain;
  if (!std::strcmp(e, "0")) return kNttV2Off;
  if (!std::strcmp(e, "r4") || !std::strcmp(e, "1")) return kNttV2R4;
  if (!std::strcmp(e, "r4plain")) return kNttV2R4Plain;
  if (!std::strcmp(e, "r2")) return kNttV2R2;
  if (!std::strcmp(e, "r4b4")) return kNttV2R4Occ4;
  if (!std::strcmp(e, "r4pf")) return kNttV2R4Pf;
  if (!std::strcmp(e, "r4i")) return kNttV2R4Neg;
  if (!std::strcmp(e, "r4b4i")) return kNttV2R4Occ4Neg;
  throw GpuError(std::string("CUZK_NTT_V2=") + e + ": expected auto, 0, r4, r4plain, r2, r4b4, r4pf, r4i or r4b4i");
}

// The v2 variant for passes with a fused store at this size, or kNttV2Off.
int fusable_v2(int log_n) {
  int v = ntt_v2_variant(log_n);
  return v != kNttV2Off && ntt_v2_fits(log_n, ntt_v2_radix_bits(v)) && !ntt_r8_passes() ? v : kNttV2Off;
}

__global__ void k_ntt_elementwise(DFr* data, int k, NttScale s) {
  size_t n = size_t(1) << k;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    ntt_scale_elem(data, k, s, i);
}

__global__ void k_h_combine(DFr* a, const DFr* b, const DFr* c, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    h_combine_elem(a, b, c, i);
}

// tw[e] = lo[e mod 2^lo_bits] * hi[e >> lo_bits]: the full twiddle table from two small ones.
__global__ void k_table_fill(DFr* out, size_t n, PowTable t) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    store(out + i, t.at(i));
}

__global__ void k_minus_one(DFr* out) { store(out, DFr::zero() - DFr::one()); }

unsigned elementwise_grid(size_t n) { return (unsigned)std::min<size_t>((n + 255) / 256, 132 * 16); }

DFr to_dev(const Fr& x) {
  DFr r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}

std::vector<DFr> to_dev(const std::vector<Fr>& v) {
  std::vector<DFr> d(v.size());
  std::memcpy(d.data(), v.data(), v.size() * sizeof(DFr));
  return d;
}

void check_log_n(int log_n) {
  if (log_n < 0 || log_n > kMaxNttLog)
    throw GpuError("GPU NTT size 2^" + std::to_string(log_n) + " is outside 2^0 .. 2^" + std::to_string(kMaxNttLog));
}

}  // namespace

void NttEngine::reserve(int log_n) {
  check_log_n(log_n);
  int kt = std::max(log_n, 1);
  if (kt <= kt_) return;
  // omega_{2^kt}^e for e < 2^(kt-1), from omega^i (i < 2^m) and omega^(j 2^m).
  int bits = kt - 1, m = (bits + 1) / 2;
  std::vector<DFr> small = to_dev(host::pow_tables(host::root_of_unity(kt), host::one(), m, bits - m));
  DevBuf<DFr> small_d(small.size());
  CUZK_CUDA_CHECK(cudaMemcpyAsync(small_d.get(), small.data(), small.size() * sizeof(DFr), cudaMemcpyHostToDevice, s_));
  tw_.release();  // cudaFree waits for queued work that may still read the old table
  tw_.resize((size_t(1) << bits) + 1);  // + omega^(2^bits) = -1, read by the v2 inverse passes at e = 0
  PowTable t{small_d.get(), small_d.get() + (size_t(1) << m), m};
  k_table_fill<<<elementwise_grid(size_t(1) << bits), 256, 0, s_>>>(tw_.get(), size_t(1) << bits, t);
  CUZK_CUDA_LAUNCHED("k_table_fill");
  k_minus_one<<<1, 1, 0, s_>>>(tw_.get() + (size_t(1) << bits));
  CUZK_CUDA_LAUNCHED("k_minus_one");
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s_));  // small_d goes out of scope
  kt_ = kt;
}

DFr NttEngine::inv_n(int log_n) const { return to_dev(host::inverse_of_pow2(log_n)); }

PowTable NttEngine::pow_table(int log_n, Table kind) {
  auto key = std::make_pair(log_n, (int)kind);
  auto it = tables_.find(key);
  int m = (log_n + 1) / 2;
  if (it == tables_.end()) {
    Fr g = host::root_of_unity(log_n + 1);  // the odd coset's shift, omega_{2n}
    Fr base = kind == Table::CosetInv ? host::inverse(g) : g;
    Fr c = kind == Table::CosetFwd ? host::one() : host::inverse_of_pow2(log_n);
    std::vector<DFr> h = to_dev(host::pow_tables(base, c, m, log_n - m));
    DevBuf<DFr> d(h.size());
    CUZK_CUDA_CHECK(cudaMemcpy(d.get(), h.data(), h.size() * sizeof(DFr), cudaMemcpyHostToDevice));
    it = tables_.emplace(key, std::move(d)).first;
  }
  return PowTable{it->second.get(), it->second.get() + (size_t(1) << m), m};
}

void NttEngine::passes(DFr* d, int log_n, bool inverse, bool dit) {
  reserve(log_n);
  NttPass ps[8];
  const bool r8 = log_n >= 3 && ntt_r8_passes();
  if (int v = ntt_v2_variant(log_n); !r8 && v != kNttV2Off && ntt_v2_fits(log_n, ntt_v2_radix_bits(v))) {
    int np = ntt_plan(log_n, kt_, inverse, dit, ps, kNttTileBits, 0, ntt_min_passes(log_n));
    ntt_v2_launch(v, d, tw_.get(), ps, np, s_);
    return;
  }
  if (r8) {
    int np = ntt_plan(log_n, kt_, inverse, dit, ps, kNttR8TileBits);
    for (int i = 0; i < np; i++) {
      const NttPass& p = ps[i];
      u32 bytes = ntt_tile_size(p) * (u32)sizeof(DFr);
      if (bytes > 48 * 1024)
        CUZK_CUDA_CHECK(cudaFuncSetAttribute(k_ntt_pass_r8, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
      k_ntt_pass_r8<<<(unsigned)ntt_blocks(p), ntt_r8_threads(p), bytes, s_>>>(d, tw_.get(), p);
      CUZK_CUDA_LAUNCHED("k_ntt_pass_r8");
    }
    return;
  }
  int np = ntt_plan(log_n, kt_, inverse, dit, ps);
  for (int i = 0; i < np; i++) {
    const NttPass& p = ps[i];
    u32 tile = ntt_tile_size(p);
    unsigned threads = std::min<u32>(kNttThreads, std::max<u32>(tile / 2, 1));
    k_ntt_pass<<<(unsigned)ntt_blocks(p), threads, tile * sizeof(DFr), s_>>>(d, tw_.get(), p);
    CUZK_CUDA_LAUNCHED("k_ntt_pass");
  }
}

void NttEngine::elementwise(DFr* d, int log_n, const NttScale& s) {
  if (s.permute && log_n >= 2 * kPermBits && ntt_tiled_perm()) {
    k_ntt_permute_tiled<<<(unsigned)ntt_perm_blocks(log_n), kPermThreads, 0, s_>>>(d, log_n, s);
    CUZK_CUDA_LAUNCHED("k_ntt_permute_tiled");
    return;
  }
  k_ntt_elementwise<<<elementwise_grid(size_t(1) << log_n), 256, 0, s_>>>(d, log_n, s);
  CUZK_CUDA_LAUNCHED("k_ntt_elementwise");
}

// The natural-order transform's DIF passes and bit reversal with s (permute) fused into the last
// pass's store; false where that does not apply (then nothing ran).
bool NttEngine::fused_perm_passes(DFr* d, int log_n, bool inverse, const NttScale& s) {
  int v = fusable_v2(log_n);
  if (v == kNttV2Off || !ntt_fused_perm()) return false;
  reserve(log_n);
  NttPass ps[8];
  int np = ntt_v2_perm_plan(log_n, kt_, inverse, ntt_last_pass_bits(), ps, ntt_min_passes(log_n));
  if (np == 0) return false;
  scratch_.reserve(size_t(1) << log_n);
  ntt_v2_launch(v, d, tw_.get(), ps, np, s_, s, scratch_.get());
  return true;
}

void NttEngine::permuting_passes(DFr* d, int log_n, bool inverse, const NttScale& s) {
  if (fused_perm_passes(d, log_n, inverse, s)) return;
  passes(d, log_n, inverse, false);
  elementwise(d, log_n, s);
}

void NttEngine::forward(DFr* d, int log_n, bool coset) {
  check_log_n(log_n);
  if (log_n == 0) return;  // a 1-point transform (and coset shift g^0) is the identity
  if (coset) {
    NttScale s;
    s.mode = NttScale::Table;
    s.table = pow_table(log_n, Table::CosetFwd);
    elementwise(d, log_n, s);
  }
  NttScale s;
  s.permute = true;
  permuting_passes(d, log_n, false, s);
}

void NttEngine::inverse(DFr* d, int log_n, bool coset) {
  check_log_n(log_n);
  if (log_n == 0) return;
  NttScale s;
  s.permute = true;
  if (coset) {
    s.mode = NttScale::Table;
    s.table = pow_table(log_n, Table::CosetInv);
  } else {
    s.mode = NttScale::Constant;
    s.constant = inv_n(log_n);
  }
  permuting_passes(d, log_n, true, s);
}

// Per vector: inverse DIF (natural -> bit-reversed, unscaled), scale position j by n^-1 g^rev(j),
// forward DIT (bit-reversed -> natural): no permutation pass at all. Then a*b - c.
// With the v2 passes (and CUZK_NTT_FUSE_SCALE not 0) the scale is done by the inverse passes' last
// store: one read and write of the vector less.
void NttEngine::h_stage_vec(DFr* x, int log_n) {
  check_log_n(log_n + 1);
  NttScale s;
  s.mode = NttScale::Table;
  s.rev_exponent = true;
  s.table = pow_table(log_n, Table::HStage);
  if (int v = fusable_v2(log_n); v != kNttV2Off && ntt_fuse_scale()) {
    reserve(log_n);
    NttPass ps[8];
    int np = ntt_plan(log_n, kt_, true, false, ps, kNttTileBits, 0, ntt_min_passes(log_n));
    ntt_v2_launch(v, x, tw_.get(), ps, np, s_, s);
  } else {
    passes(x, log_n, true, false);
    elementwise(x, log_n, s);
  }
  passes(x, log_n, false, true);
}

void NttEngine::h_combine(DFr* a, const DFr* b, const DFr* c, int log_n) {
  check_log_n(log_n + 1);
  size_t n = size_t(1) << log_n;
  k_h_combine<<<elementwise_grid(n), 256, 0, s_>>>(a, b, c, n);
  CUZK_CUDA_LAUNCHED("k_h_combine");
}

void NttEngine::h_stage(DFr* a, DFr* b, DFr* c, int log_n) {
  for (DFr* x : {a, b, c}) h_stage_vec(x, log_n);
  h_combine(a, b, c, log_n);
}

// ---- plain API ----

void ntt(int device, Fr* data, int log_n, bool inverse, bool coset) {
  check_log_n(log_n);
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine eng(st.get());
  DevBuf<DFr> d(n);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(d.get(), data, n * sizeof(DFr), cudaMemcpyHostToDevice, st.get()));
  if (inverse)
    eng.inverse(d.get(), log_n, coset);
  else
    eng.forward(d.get(), log_n, coset);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(data, d.get(), n * sizeof(DFr), cudaMemcpyDeviceToHost, st.get()));
  st.sync();
}

std::vector<Fr> compute_h_coset(int device, const std::vector<Fr>& a, const std::vector<Fr>& b,
                                const std::vector<Fr>& c, int log_n) {
  check_log_n(log_n + 1);
  size_t n = size_t(1) << log_n;
  if (a.size() != n || b.size() != n || c.size() != n)
    throw std::invalid_argument("gpu::compute_h_coset: a, b, c must have 2^" + std::to_string(log_n) + " entries");
  set_device(device);
  Stream st;
  NttEngine eng(st.get());
  DevBuf<DFr> d(3 * n);
  for (int i = 0; i < 3; i++) {
    const std::vector<Fr>& v = i == 0 ? a : i == 1 ? b : c;
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(d.get() + i * n, v.data(), n * sizeof(DFr), cudaMemcpyHostToDevice, st.get()));
  }
  eng.h_stage(d.get(), d.get() + n, d.get() + 2 * n, log_n);
  std::vector<Fr> h(n);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.get(), n * sizeof(DFr), cudaMemcpyDeviceToHost, st.get()));
  st.sync();
  return h;
}

BenchStats bench_ntt(int device, int log_n, bool inverse, int warmup, int runs) {
  check_log_n(log_n);
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine eng(st.get());
  eng.reserve(log_n);
  DevBuf<DFr> d(n);
  fill_random_fr(d.get(), n, 0x5eed0000 + log_n, st.get());
  BenchStats r = time_runs(st.get(), warmup, runs, [&] {
    if (inverse)
      eng.inverse(d.get(), log_n, false);
    else
      eng.forward(d.get(), log_n, false);
  });
  NttPass ps[8];
  int np = fusable_v2(log_n) != kNttV2Off && ntt_fused_perm()
               ? ntt_v2_perm_plan(log_n, log_n, inverse, ntt_last_pass_bits(), ps, ntt_min_passes(log_n)) : 0;
  if (np == 0) np = ntt_plan(log_n, log_n, inverse, false, ps);
  const bool fused = np > 0 && ps[np - 1].perm_store;
  double compute = ((double)n / 2 * log_n + (inverse ? n : 0)) * kFrMulImad / imad_per_ms();
  double memory = (2.0 * np + (fused ? 0 : 2)) * n * sizeof(DFr) / kBytesPerMs;
  r.bound_ms = std::max(compute, memory);
  r.detail = std::to_string(np) + " passes (";
  for (int i = 0; i < np; i++) {
    if (i) r.detail += '+';
    r.detail += std::to_string(ps[i].t);
  }
  r.detail += fused ? " stages), bit reversal in the last pass" : " stages), separate bit reversal";
  for (const char* name : {"CUZK_NTT_V2", "CUZK_NTT_TILED_PERM", "CUZK_NTT_FUSED_PERM", "CUZK_NTT_LAST_PASS_BITS",
                           "CUZK_NTT_PASSES"})
    if (const char* v = std::getenv(name)) r.detail += std::string(", ") + name + "=" + v;
  return r;
}

BenchStats bench_h_stage(int device, int log_n, int warmup, int runs) {
  check_log_n(log_n + 1);
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine eng(st.get());
  eng.reserve(log_n);
  DevBuf<DFr> d(3 * n);
  fill_random_fr(d.get(), 3 * n, 0xabc00000 + log_n, st.get());
  BenchStats r = time_runs(st.get(), warmup, runs, [&] { eng.h_stage(d.get(), d.get() + n, d.get() + 2 * n, log_n); });
  NttPass ps[8];
  int np = ntt_plan(log_n, log_n, false, false, ps);
  double compute = (6.0 * n / 2 * log_n + 4.0 * n) * kFrMulImad / imad_per_ms();
  double memory = (3 * (4.0 * np + 2) + 4) * n * sizeof(DFr) / kBytesPerMs;
  r.bound_ms = std::max(compute, memory);
  r.detail = "3 x (inverse DIF, coset scale, forward DIT) + a*b-c";
  return r;
}

}  // namespace gpu
}  // namespace cuzk
