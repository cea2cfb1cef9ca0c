// The NttEngine over every curve's Fr: twiddle and scale tables, the pass plan it picks per size
// (radix-4 register passes from 2^2, radix-2 tile passes for 2^1), the element-wise kernels around
// the passes, and the plain-API entry points ntt() and compute_h_coset().
#include <algorithm>
#include <cstring>

#include "kernels/engines.cuh"
#include "kernels/host_math.hpp"
#include "kernels/ntt/elementwise.cuh"
#include "kernels/ntt/radix2_passes.cuh"
#include "kernels/ntt/radix4_passes.cuh"

namespace cuzk {
namespace gpu {

namespace {

template <class F>
__global__ void k_ntt_pass_radix2(F* data, const F* tw, NttPass p) {
  extern __shared__ uint4 smem_raw[];
  F* smem = reinterpret_cast<F*>(smem_raw);
  ntt_tile_load(p, data, smem, blockIdx.x, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int st = 0; st < p.t; st++) {
    ntt_tile_stage(p, smem, tw, blockIdx.x, st, threadIdx.x, blockDim.x);
    __syncthreads();
  }
  ntt_tile_store(p, data, smem, blockIdx.x, threadIdx.x, blockDim.x);
}

template <class F>
__global__ void __launch_bounds__(kPermThreads) k_ntt_permute_tiled(F* data, int k, NttScale<F> s) {
  __shared__ F tA[kPermSide * kPermStride], tB[kPermSide * kPermStride];
  ntt_perm_tile(data, k, s, tA, tB, blockIdx.x, threadIdx.x, 0);
  __syncthreads();
  ntt_perm_tile(data, k, s, tA, tB, blockIdx.x, threadIdx.x, 1);
}

// Passes per transform: at least min_passes when set (> 0), else the fewest below 2^27 and 4 from
// 2^27, where 7+7+7+6 beat 9+9+9 by 1.2% (at 2^26 the extra pass loses 0.7%).
int ntt_passes_at_least(int log_n, int min_passes) { return min_passes > 0 ? min_passes : log_n >= 27 ? 4 : 0; }

template <class F>
__global__ void k_ntt_elementwise(F* data, int k, NttScale<F> s) {
  size_t n = size_t(1) << k;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    ntt_scale_elem(data, k, s, i);
}

template <class F>
__global__ void k_h_combine(F* a, const F* b, const F* c, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    h_combine_elem(a, b, c, i);
}

// tw[e] = lo[e mod 2^lo_bits] * hi[e >> lo_bits]: the full twiddle table from two small ones.
template <class F>
__global__ void k_table_fill(F* out, size_t n, PowTable<F> t) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    store(out + i, t.at(i));
}

template <class F>
__global__ void k_minus_one(F* out) {
  store(out, F::zero() - F::one());
}

unsigned elementwise_grid(size_t n) { return (unsigned)std::min<size_t>((n + 255) / 256, 132 * 16); }

// The host field of device field F (same bytes).
template <class F>
using HostOf = Fp<typename F::Params>;

template <class P>
DFp<P> to_dev(const Fp<P>& x) {
  DFp<P> r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}

template <class P>
std::vector<DFp<P>> to_dev(const std::vector<Fp<P>>& v) {
  std::vector<DFp<P>> d(v.size());
  std::memcpy(d.data(), v.data(), v.size() * sizeof(DFp<P>));
  return d;
}

// Transforms of 2^log_n over F's field (coset: with the shift omega_{2n}), ntt_max_log.
template <class F>
void check_log_n(int log_n, bool coset = false) {
  using P = typename F::Params;
  const int max = ntt_max_log<P>(coset);
  if (log_n < 0 || log_n > max)
    throw GpuError(std::string("GPU NTT") + (coset ? " on a coset" : "") + " over an Fr of two-adicity " +
                   std::to_string(P::TWO_ADICITY) + ": size 2^" + std::to_string(log_n) + " is outside 2^0 .. 2^" +
                   std::to_string(max));
}

}  // namespace

template <class F>
void NttEngine<F>::reserve(int log_n) {
  check_log_n<F>(log_n);
  using Fr = HostOf<F>;
  int kt = std::max(log_n, 1);
  if (kt <= kt_) return;
  // omega_{2^kt}^e for e < 2^(kt-1), from omega^i (i < 2^m) and omega^(j 2^m).
  int bits = kt - 1, m = (bits + 1) / 2;
  std::vector<F> small = to_dev(host::pow_tables(host::root_of_unity<Fr>(kt), host::one<Fr>(), m, bits - m));
  DevBuf<F> small_d(small.size());
  CUZK_CUDA_CHECK(cudaMemcpyAsync(small_d.get(), small.data(), small.size() * sizeof(F), cudaMemcpyHostToDevice, s_));
  tw_.release();  // cudaFree waits for queued work that may still read the old table
  tw_.resize((size_t(1) << bits) + 1);  // + omega^(2^bits) = -1, read by the radix-4 inverse passes at e = 0
  PowTable<F> t{small_d.get(), small_d.get() + (size_t(1) << m), m};
  k_table_fill<F><<<elementwise_grid(size_t(1) << bits), 256, 0, s_>>>(tw_.get(), size_t(1) << bits, t);
  CUZK_CUDA_LAUNCHED("k_table_fill");
  k_minus_one<F><<<1, 1, 0, s_>>>(tw_.get() + (size_t(1) << bits));
  CUZK_CUDA_LAUNCHED("k_minus_one");
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s_));  // small_d goes out of scope
  kt_ = kt;
}

template <class F>
F NttEngine<F>::inv_n(int log_n) const { return to_dev(host::inverse_of_pow2<HostOf<F>>(log_n)); }

template <class F>
PowTable<F> NttEngine<F>::pow_table(int log_n, Table kind) {
  auto key = std::make_pair(log_n, (int)kind);
  auto it = tables_.find(key);
  int m = (log_n + 1) / 2;
  if (it == tables_.end()) {
    using Fr = HostOf<F>;
    Fr g = host::root_of_unity<Fr>(log_n + 1);  // the odd coset's shift, omega_{2n}
    Fr base = kind == Table::CosetInv ? host::inverse(g) : g;
    Fr c = kind == Table::CosetFwd ? host::one<Fr>() : host::inverse_of_pow2<Fr>(log_n);
    std::vector<F> h = to_dev(host::pow_tables(base, c, m, log_n - m));
    DevBuf<F> d(h.size());
    CUZK_CUDA_CHECK(cudaMemcpy(d.get(), h.data(), h.size() * sizeof(F), cudaMemcpyHostToDevice));
    it = tables_.emplace(key, std::move(d)).first;
  }
  return PowTable<F>{it->second.get(), it->second.get() + (size_t(1) << m), m};
}

// The register-tiled passes wherever a tile holds a radix-4 unit (2^2 points and up); the plain
// radix-2 tile passes for a 2-point transform.
template <class F>
void NttEngine<F>::passes(F* d, int log_n, bool inverse, bool dit) {
  reserve(log_n);
  NttPass ps[kNttMaxPasses];
  if (ntt_radix4_fits(log_n, kNttRadixBits)) {
    int np = ntt_plan(log_n, kt_, inverse, dit, ps, kNttTileBits, ntt_passes_at_least(log_n, min_passes_));
    ntt_radix4_launch(d, tw_.get(), ps, np, s_);
    return;
  }
  int np = ntt_plan(log_n, kt_, inverse, dit, ps);
  for (int i = 0; i < np; i++) {
    const NttPass& p = ps[i];
    u32 tile = ntt_tile_size(p);
    unsigned threads = std::min<u32>(kNttThreads, std::max<u32>(tile / 2, 1));
    k_ntt_pass_radix2<F><<<(unsigned)ntt_blocks(p), threads, tile * sizeof(F), s_>>>(d, tw_.get(), p);
    CUZK_CUDA_LAUNCHED("k_ntt_pass_radix2");
  }
}

template <class F>
void NttEngine<F>::elementwise(F* d, int log_n, const NttScale<F>& s) {
  if (s.permute && log_n >= 2 * kPermBits) {
    k_ntt_permute_tiled<F><<<(unsigned)ntt_perm_blocks(log_n), kPermThreads, 0, s_>>>(d, log_n, s);
    CUZK_CUDA_LAUNCHED("k_ntt_permute_tiled");
    return;
  }
  k_ntt_elementwise<F><<<elementwise_grid(size_t(1) << log_n), 256, 0, s_>>>(d, log_n, s);
  CUZK_CUDA_LAUNCHED("k_ntt_elementwise");
}

// The natural-order transform's DIF passes and bit reversal with s (permute) fused into the last
// pass's store; false where that does not apply (then nothing ran).
template <class F>
int NttEngine<F>::fused_perm_plan(int log_n, int kt, bool inverse, NttPass* ps) const {
  if (!ntt_radix4_fits(log_n, kNttRadixBits)) return 0;
  return ntt_radix4_perm_plan(log_n, kt, inverse, ps, ntt_passes_at_least(log_n, min_passes_));
}

template <class F>
int NttEngine<F>::natural_plan(int log_n, bool inverse, NttPass* ps) const {
  int np = fused_perm_plan(log_n, log_n, inverse, ps);
  if (np) return np;
  return ntt_radix4_fits(log_n, kNttRadixBits)
             ? ntt_plan(log_n, log_n, inverse, false, ps, kNttTileBits, ntt_passes_at_least(log_n, min_passes_))
             : ntt_plan(log_n, log_n, inverse, false, ps);
}

template <class F>
bool NttEngine<F>::fused_perm_passes(F* d, int log_n, bool inverse, const NttScale<F>& s) {
  reserve(log_n);
  NttPass ps[kNttMaxPasses];
  int np = fused_perm_plan(log_n, kt_, inverse, ps);
  if (np == 0) return false;
  scratch_.reserve(size_t(1) << log_n);
  ntt_radix4_launch(d, tw_.get(), ps, np, s_, s, scratch_.get());
  return true;
}

template <class F>
void NttEngine<F>::permuting_passes(F* d, int log_n, bool inverse, const NttScale<F>& s) {
  if (fused_perm_passes(d, log_n, inverse, s)) return;
  passes(d, log_n, inverse, false);
  elementwise(d, log_n, s);
}

template <class F>
void NttEngine<F>::forward(F* d, int log_n, bool coset) {
  check_log_n<F>(log_n, coset);
  if (log_n == 0) return;  // a 1-point transform (and coset shift g^0) is the identity
  if (coset) {
    NttScale<F> s;
    s.mode = NttScaleMode::Table;
    s.table = pow_table(log_n, Table::CosetFwd);
    elementwise(d, log_n, s);
  }
  NttScale<F> s;
  s.permute = true;
  permuting_passes(d, log_n, false, s);
}

template <class F>
void NttEngine<F>::inverse(F* d, int log_n, bool coset) {
  check_log_n<F>(log_n, coset);
  if (log_n == 0) return;
  NttScale<F> s;
  s.permute = true;
  if (coset) {
    s.mode = NttScaleMode::Table;
    s.table = pow_table(log_n, Table::CosetInv);
  } else {
    s.mode = NttScaleMode::Constant;
    s.constant = inv_n(log_n);
  }
  permuting_passes(d, log_n, true, s);
}

// Per vector: inverse DIF (natural -> bit-reversed, unscaled), scale position j by n^-1 g^rev(j),
// forward DIT (bit-reversed -> natural): no permutation pass at all. Then a*b - c.
// With the register-tiled passes the scale is done by the inverse passes' last store: one read and
// write of the vector less.
template <class F>
void NttEngine<F>::h_stage_vec(F* x, int log_n) {
  check_log_n<F>(log_n + 1);
  NttScale<F> s;
  s.mode = NttScaleMode::Table;
  s.rev_exponent = true;
  s.table = pow_table(log_n, Table::HStage);
  if (ntt_radix4_fits(log_n, kNttRadixBits)) {
    reserve(log_n);
    NttPass ps[kNttMaxPasses];
    int np = ntt_plan(log_n, kt_, true, false, ps, kNttTileBits, ntt_passes_at_least(log_n, min_passes_));
    ntt_radix4_launch(x, tw_.get(), ps, np, s_, s);
  } else {
    passes(x, log_n, true, false);
    elementwise(x, log_n, s);
  }
  passes(x, log_n, false, true);
}

template <class F>
void NttEngine<F>::h_combine(F* a, const F* b, const F* c, int log_n) {
  check_log_n<F>(log_n + 1);
  size_t n = size_t(1) << log_n;
  k_h_combine<F><<<elementwise_grid(n), 256, 0, s_>>>(a, b, c, n);
  CUZK_CUDA_LAUNCHED("k_h_combine");
}

template <class F>
void NttEngine<F>::h_stage(F* a, F* b, F* c, int log_n) {
  for (F* x : {a, b, c}) h_stage_vec(x, log_n);
  h_combine(a, b, c, log_n);
}

template class NttEngine<Dev<Bls12_381>::Fr>;
template class NttEngine<Dev<Bn254>::Fr>;

// ---- plain API ----

template <class Fr>
void ntt(int device, Fr* data, int log_n, bool inverse, bool coset) {
  using DF = DeviceFieldOf<Fr>;
  check_log_n<DF>(log_n, coset);
  set_device(device);
  size_t n = size_t(1) << log_n;
  Stream st;
  NttEngine<DF> eng(st.get());
  DevBuf<DF> d(n);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(d.get(), data, n * sizeof(DF), cudaMemcpyHostToDevice, st.get()));
  if (inverse)
    eng.inverse(d.get(), log_n, coset);
  else
    eng.forward(d.get(), log_n, coset);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(data, d.get(), n * sizeof(DF), cudaMemcpyDeviceToHost, st.get()));
  st.sync();
}

template <class Fr>
std::vector<Fr> compute_h_coset(int device, const std::vector<Fr>& a, const std::vector<Fr>& b,
                                const std::vector<Fr>& c, int log_n) {
  using DF = DeviceFieldOf<Fr>;
  check_log_n<DF>(log_n + 1);
  size_t n = size_t(1) << log_n;
  if (a.size() != n || b.size() != n || c.size() != n)
    throw std::invalid_argument("gpu::compute_h_coset: a, b, c must have 2^" + std::to_string(log_n) + " entries");
  set_device(device);
  Stream st;
  NttEngine<DF> eng(st.get());
  DevBuf<DF> d(3 * n);
  for (int i = 0; i < 3; i++) {
    const std::vector<Fr>& v = i == 0 ? a : i == 1 ? b : c;
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(d.get() + i * n, v.data(), n * sizeof(DF), cudaMemcpyHostToDevice, st.get()));
  }
  eng.h_stage(d.get(), d.get() + n, d.get() + 2 * n, log_n);
  std::vector<Fr> h(n);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.get(), n * sizeof(DF), cudaMemcpyDeviceToHost, st.get()));
  st.sync();
  return h;
}

#define CUZK_INSTANTIATE(C)                                                                               \
  template void ntt(int, C::Fr*, int, bool, bool);                                                        \
  template std::vector<C::Fr> compute_h_coset(int, const std::vector<C::Fr>&, const std::vector<C::Fr>&, \
                                              const std::vector<C::Fr>&, int);
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace gpu
}  // namespace cuzk
