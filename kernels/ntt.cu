// NTT kernels and the NttEngine; the plain-API entry points ntt() and compute_h_coset().
#include <algorithm>
#include <cstring>

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

__global__ void __launch_bounds__(kPermThreads) k_ntt_permute_tiled(DFr* data, int k, NttScale s) {
  __shared__ DFr tA[kPermSide * kPermStride], tB[kPermSide * kPermStride];
  ntt_perm_tile(data, k, s, tA, tB, blockIdx.x, threadIdx.x, 0);
  __syncthreads();
  ntt_perm_tile(data, k, s, tA, tB, blockIdx.x, threadIdx.x, 1);
}

// Passes per transform: at least min_passes when set (> 0), else the fewest below 2^27 and 4 from
// 2^27, where 7+7+7+6 beat 9+9+9 by 1.2% (at 2^26 the extra pass loses 0.7%).
int ntt_passes_at_least(int log_n, int min_passes) { return min_passes > 0 ? min_passes : log_n >= 27 ? 4 : 0; }

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

// The register-tiled passes wherever a tile holds a radix-4 unit (2^2 points and up); the plain
// radix-2 tile passes for a 2-point transform.
void NttEngine::passes(DFr* d, int log_n, bool inverse, bool dit) {
  reserve(log_n);
  NttPass ps[kNttMaxPasses];
  if (ntt_v2_fits(log_n, kNttV2Radix)) {
    int np = ntt_plan(log_n, kt_, inverse, dit, ps, kNttTileBits, ntt_passes_at_least(log_n, min_passes_));
    ntt_v2_launch(d, tw_.get(), ps, np, s_);
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
  if (s.permute && log_n >= 2 * kPermBits) {
    k_ntt_permute_tiled<<<(unsigned)ntt_perm_blocks(log_n), kPermThreads, 0, s_>>>(d, log_n, s);
    CUZK_CUDA_LAUNCHED("k_ntt_permute_tiled");
    return;
  }
  k_ntt_elementwise<<<elementwise_grid(size_t(1) << log_n), 256, 0, s_>>>(d, log_n, s);
  CUZK_CUDA_LAUNCHED("k_ntt_elementwise");
}

// The natural-order transform's DIF passes and bit reversal with s (permute) fused into the last
// pass's store; false where that does not apply (then nothing ran).
int NttEngine::fused_perm_plan(int log_n, int kt, bool inverse, NttPass* ps) const {
  if (!ntt_v2_fits(log_n, kNttV2Radix)) return 0;
  return ntt_v2_perm_plan(log_n, kt, inverse, ps, ntt_passes_at_least(log_n, min_passes_));
}

int NttEngine::natural_plan(int log_n, bool inverse, NttPass* ps) const {
  int np = fused_perm_plan(log_n, log_n, inverse, ps);
  if (np) return np;
  return ntt_v2_fits(log_n, kNttV2Radix)
             ? ntt_plan(log_n, log_n, inverse, false, ps, kNttTileBits, ntt_passes_at_least(log_n, min_passes_))
             : ntt_plan(log_n, log_n, inverse, false, ps);
}

bool NttEngine::fused_perm_passes(DFr* d, int log_n, bool inverse, const NttScale& s) {
  reserve(log_n);
  NttPass ps[kNttMaxPasses];
  int np = fused_perm_plan(log_n, kt_, inverse, ps);
  if (np == 0) return false;
  scratch_.reserve(size_t(1) << log_n);
  ntt_v2_launch(d, tw_.get(), ps, np, s_, s, scratch_.get());
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
// With the register-tiled passes the scale is done by the inverse passes' last store: one read and
// write of the vector less.
void NttEngine::h_stage_vec(DFr* x, int log_n) {
  check_log_n(log_n + 1);
  NttScale s;
  s.mode = NttScale::Table;
  s.rev_exponent = true;
  s.table = pow_table(log_n, Table::HStage);
  if (ntt_v2_fits(log_n, kNttV2Radix)) {
    reserve(log_n);
    NttPass ps[kNttMaxPasses];
    int np = ntt_plan(log_n, kt_, true, false, ps, kNttTileBits, ntt_passes_at_least(log_n, min_passes_));
    ntt_v2_launch(x, tw_.get(), ps, np, s_, s);
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

}  // namespace gpu
}  // namespace cuzk
