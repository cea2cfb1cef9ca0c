// Host emulation of the CUDA kernel bodies (kernels/ntt/, kernels/msm/): the same
// functions the kernels call, driven block by block and thread by thread on the CPU, against the CPU
// reference (groth16's ntt, compute_h_coset and Pippenger). Needs no GPU; catches indexing errors
// before a device run.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>

#include "groth16/msm.hpp"
#include "groth16/prover.hpp"
#include "kernels/msm/pippenger.cuh"
#include "kernels/msm/g2_lane_pairs.cuh"
#include "kernels/ntt/elementwise.cuh"
#include "kernels/ntt/plan.cuh"
#include "kernels/ntt/radix2_passes.cuh"
#include "kernels/ntt/radix4_passes.cuh"
#include "tests/gpu/curve_refs.hpp"
#include "tests/gpu/ntt_refs.hpp"
#include "tests/test_seed.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
using namespace cuzk::gpu;

namespace {


template <class D, class H>
std::vector<D> to_dev(const std::vector<H>& v) {
  static_assert(sizeof(D) == sizeof(H));
  std::vector<D> d(v.size());
  std::memcpy(d.data(), v.data(), v.size() * sizeof(H));
  return d;
}

Fr random_fr(std::mt19937_64& rng) {
  for (;;) {
    u64 l[4] = {rng(), rng(), rng(), rng() >> 1};
    if (Fr::is_canonical(l)) return Fr::from_mont_limbs(l);
  }
}
std::vector<Fr> random_frs(std::mt19937_64& rng, size_t n) {
  std::vector<Fr> v(n);
  for (auto& e : v) e = random_fr(rng);
  return v;
}

// ---- NTT ----

// omega_{2^kt}^e for e <= 2^(kt-1), as NttEngine::reserve fills it (the last entry, -1, is read by
// the radix-4 inverse passes only).
template <class HF = Fr>
std::vector<DeviceFieldOf<HF>> twiddle_table(int kt) {
  std::vector<HF> t((size_t(1) << (kt - 1)) + 1);
  HF w = two_adic_root<HF>(kt), x = HF::one();
  for (auto& e : t) {
    e = x;
    x = x * w;
  }
  return to_dev<DeviceFieldOf<HF>>(t);
}

// Which path the emulation follows: NttEngine's (the register-tiled passes from 2^2, the bit reversal
// in the last pass's store where the plan has 2+ passes, the tiled bit reversal from 2^8), or with
// g_plain the radix-2 tile passes and the element-wise permutation, which NttEngine runs at 2^1 and
// below 2^8 respectively, here checked at every size.
bool g_plain = false;
// The Fr multiply of the register-tiled passes: -1 as NttEngine picks it by size (ntt_radix4_kernel), or
// kFrMulGeneric / kFrMulFast, so that both are checked at sizes an emulation can afford.
int g_mul = -1;
NttScale<DFr> g_fuse;       // the scale the passes fuse into their last store (H stage)
int g_min_passes = 0;  // GpuOptions::ntt_passes
int g_fused_runs = 0;  // transforms whose bit reversal ran in the last pass's store

// The scale fused into the passes' last store: g_fuse for BLS12-381's Fr, none for other fields.
template <class F>
const NttScale<F>& fused_scale() {
  if constexpr (std::is_same_v<F, DFr>) {
    return g_fuse;
  } else {
    static const NttScale<F> none{};
    return none;
  }
}

template <int R, int Mul, class F>
void emulate_radix4(std::vector<F>& d, const NttPass* ps, int np, const std::vector<F>& tw, const NttScale<F>& fz) {
  // The out-of-place last pass's source, poisoned: a read of an element the pass before did not write shows.
  std::vector<F> scratch(ps[np - 1].perm_store ? d.size() : 0, F::one());
  for (int pi = 0; pi < np; pi++) {
    const NttPass& p = ps[pi];
    const F* src;
    F* dst;
    ntt_radix4_pass_io(ps, np, pi, d.data(), scratch.data(), src, dst);
    std::vector<u32> sm(8 * ntt_tile_size(p));
    u32 threads = ntt_radix4_threads(p, R);
    EXPECT_GE(threads, 1u);
    for (size_t b = 0; b < ntt_blocks(p); b++) {
      std::fill(sm.begin(), sm.end(), 0x5a5a5a5au);  // poison: a read of an unwritten slot shows
      for (int sr = 0; sr < ntt_radix4_subrounds(p.t, R); sr++)
        for (u32 t = 0; t < threads; t++)
          if (p.dit)
            ntt_radix4_round<R, true, Mul>(p, sr, src, dst, sm.data(), tw.data(), (u32)b, t, fz);
          else
            ntt_radix4_round<R, false, Mul>(p, sr, src, dst, sm.data(), tw.data(), (u32)b, t, fz);
    }
  }
}

// The plan through the register-tiled passes, as ntt_radix4_launch runs it; false where NttEngine does
// not run them (2^k below one radix-4 unit: ntt_radix4_fits) or g_plain asks for the radix-2 passes.
// g_mul = kFrMulFast applies to fields of the r shape (kFrRShaped) only; the others always take
// the generic rows, as ntt_radix4_launch does.
template <class F>
bool emulate_radix4_plan(std::vector<F>& d, int k, const NttPass* ps, int np, const std::vector<F>& tw,
                     const NttScale<F>& fz) {
  if (g_plain || !ntt_radix4_fits(k, kNttRadixBits)) return false;
  int mul = g_mul >= 0 ? g_mul : ntt_radix4_kernel<F>(k) == NttRadix4Kernel::Fast4 ? kFrMulFast : kFrMulGeneric;
  if constexpr (kFrRShaped<typename F::Params>) {
    if (mul == kFrMulFast) {
      emulate_radix4<kNttRadixBits, kFrMulFast>(d, ps, np, tw, fz);
      return true;
    }
  }
  emulate_radix4<kNttRadixBits, kFrMulGeneric>(d, ps, np, tw, fz);
  return true;
}

// Runs every pass as the kernel would: all threads of a block through each phase, then a barrier.
template <class F>
void emulate_passes(std::vector<F>& d, int k, int kt, const std::vector<F>& tw, bool inverse, bool dit) {
  NttPass ps[kNttMaxPasses];
  if (!g_plain) {
    int np = ntt_plan(k, kt, inverse, dit, ps, kNttTileBits, g_min_passes);
    if (emulate_radix4_plan(d, k, ps, np, tw, fused_scale<F>())) return;
  }
  int np = ntt_plan(k, kt, inverse, dit, ps);
  for (int pi = 0; pi < np; pi++) {
    const NttPass& p = ps[pi];
    std::vector<F> smem(ntt_tile_size(p));
    u32 threads = std::min<u32>(kNttThreads, std::max<u32>(ntt_tile_size(p) / 2, 1));
    for (size_t b = 0; b < ntt_blocks(p); b++) {
      for (u32 t = 0; t < threads; t++) ntt_tile_load(p, d.data(), smem.data(), b, t, threads);
      for (int st = 0; st < p.t; st++)
        for (u32 t = 0; t < threads; t++) ntt_tile_stage(p, smem.data(), tw.data(), b, st, t, threads);
      for (u32 t = 0; t < threads; t++) ntt_tile_store(p, d.data(), smem.data(), b, t, threads);
    }
  }
}

template <class F>
void emulate_elementwise(std::vector<F>& d, int k, const NttScale<F>& s) {
  if (s.permute && !g_plain && k >= 2 * kPermBits) {
    std::vector<F> tA(kPermSide * kPermStride), tB(kPermSide * kPermStride);
    for (size_t b = 0; b < ntt_perm_blocks(k); b++)
      for (int phase = 0; phase < 2; phase++)
        for (u32 t = 0; t < kPermThreads; t++) ntt_perm_tile(d.data(), k, s, tA.data(), tB.data(), b, t, phase);
    return;
  }
  for (size_t i = 0; i < d.size(); i++) ntt_scale_elem(d.data(), k, s, i);
}

// A whole natural-order NTT through the emulated kernels, as NttEngine::forward / inverse run it: the
// coset pre-scale (forward, coset: table of g^i), the DIF passes, and the bit reversal with the
// inverse's scale (n^-1, or coset: the table of n^-1 g^-i) in the last pass's store (where the plan
// has 2+ passes) or in the element-wise kernel.
template <class F>
void emulate_ntt(std::vector<F>& d, int k, int kt, const std::vector<F>& tw, bool inverse,
                 const PowTable<F>* coset = nullptr) {
  using HF = Fp<typename F::Params>;
  NttScale<F> s;
  if (coset) {
    s.mode = NttScaleMode::Table;
    s.table = *coset;
  }
  if (!inverse) {
    if (coset) emulate_elementwise(d, k, s);
    s.mode = NttScaleMode::None;
  } else if (!coset) {
    s.mode = NttScaleMode::Constant;
    s.constant = to_dev<F>(std::vector<HF>{HF::from_u64(d.size()).inv()})[0];
  }
  s.permute = true;
  NttPass ps[kNttMaxPasses];
  int np = g_plain ? 0 : ntt_radix4_perm_plan(k, kt, inverse, ps, g_min_passes);
  if (np && emulate_radix4_plan(d, k, ps, np, tw, s)) {
    g_fused_runs++;
    return;
  }
  emulate_passes(d, k, kt, tw, inverse, false);
  emulate_elementwise(d, k, s);
}

template <class HF = Fr>
struct HostPowT {
  using F = DeviceFieldOf<HF>;
  std::vector<F> buf;
  PowTable<F> table;
  HostPowT(const HF& base, const HF& c, int k) {
    int m = (k + 1) / 2;
    std::vector<HF> v;
    HF x = c;
    for (size_t i = 0; i < (size_t(1) << m); i++, x = x * base) v.push_back(x);
    HF step = base;
    for (int i = 0; i < m; i++) step = step.sqr();
    HF y = HF::one();
    for (size_t j = 0; j < (size_t(1) << (k - m)); j++, y = y * step) v.push_back(y);
    buf = to_dev<F>(v);
    table = PowTable<F>{buf.data(), buf.data() + (size_t(1) << m), m};
  }
};
using HostPow = HostPowT<>;

// A random input of 2^k points, the CPU's four transforms of it (NttRefs) and the coset tables that
// NttEngine's forward / inverse would use (not copyable: the tables point into their buffers).
struct NttCase {
  size_t n;
  std::vector<Fr> x;
  NttRefs r;
  HostPow cf, ci;
  NttCase(std::mt19937_64& rng, int k)
      : n(size_t(1) << k), x(random_frs(rng, n)), r(x, k), cf(root_of_unity(k + 1), Fr::one(), k),
        ci(root_of_unity(k + 1).inv(), Fr::from_u64(n).inv(), k) {}
  NttCase(const NttCase&) = delete;
  const PowTable<DFr>* coset_table(int inverse, int coset) const {
    return coset ? (inverse ? &ci.table : &cf.table) : nullptr;
  }
};

// The H stage as NttEngine::h_stage runs it, per vector: inverse DIF, scale position i by
// n^-1 g^rev(i), forward DIT; then a*b - c.
template <class HF>
std::vector<DeviceFieldOf<HF>> emulate_h_stage(const std::vector<HF>& a, const std::vector<HF>& b,
                                               const std::vector<HF>& c, int k, int kt,
                                               const std::vector<DeviceFieldOf<HF>>& tw) {
  using F = DeviceFieldOf<HF>;
  HostPowT<HF> hp(two_adic_root<HF>(k + 1), HF::from_u64(a.size()).inv(), k);
  std::vector<std::vector<F>> v = {to_dev<F>(a), to_dev<F>(b), to_dev<F>(c)};
  NttScale<F> s;
  s.mode = NttScaleMode::Table;
  s.rev_exponent = true;
  s.table = hp.table;
  for (auto& x : v) {
    emulate_passes(x, k, kt, tw, true, false);
    emulate_elementwise(x, k, s);
    emulate_passes(x, k, kt, tw, false, true);
  }
  for (size_t i = 0; i < a.size(); i++) h_combine_elem(v[0].data(), v[1].data(), v[2].data(), i);
  return v[0];
}

}  // namespace

// NttEngine's path at every size 2^1..2^14 with each of the two multiplies, and the radix-2 passes
// with the element-wise permutation.
TEST(GpuKernelEmulation, NttAllSmallSizesBothDirections) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 15;
  auto tw = twiddle_table(kt);
  for (int path = 0; path < 3; path++)
  for (int k = 1; k <= 14; k++) {
    g_plain = path == 2;
    g_mul = path == 0 ? kFrMulGeneric : kFrMulFast;
    size_t n = size_t(1) << k;
    std::vector<Fr> x(n);
    for (auto& e : x) e = random_fr(rng);
    for (int inverse = 0; inverse < 2; inverse++) {
      std::vector<Fr> ref = x;
      ntt(ref.data(), k, inverse);
      std::vector<DFr> d = to_dev<DFr>(x);
      emulate_ntt(d, k, kt, tw, inverse);
      ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(Fr)))
          << "k=" << k << " inverse=" << inverse << " path=" << path;
    }
  }
  g_plain = false;
  g_mul = -1;
}

// The plans of the larger sizes: 2 and 3 passes of 8, 9 and 10 stages (radix-4 sub-rounds 2+2+2+2,
// 2+2+2+2+1, 2+2+2+2+2), DIF and DIT, and the tiled permutation at even and odd middle widths.
TEST(GpuKernelEmulation, NttMultiPassPlansBothOrders) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 22;
  auto tw = twiddle_table(kt);
  for (int k : {16, 17, 21}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> x(n);
    for (auto& e : x) e = random_fr(rng);
    std::vector<Fr> ref = x;
    ntt(ref.data(), k, false);
    // DIF then permute.
    std::vector<DFr> d = to_dev<DFr>(x);
    emulate_passes(d, k, kt, tw, false, false);
    NttScale<DFr> perm;
    perm.permute = true;
    emulate_elementwise(d, k, perm);
    ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(Fr))) << "DIF k=" << k;
    // Permute then DIT.
    d = to_dev<DFr>(x);
    emulate_elementwise(d, k, perm);
    emulate_passes(d, k, kt, tw, false, true);
    ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(Fr))) << "DIT k=" << k;
    // Inverse (DIF, permute with n^-1) back to x.
    emulate_passes(d, k, kt, tw, true, false);
    NttScale<DFr> inv;
    inv.permute = true;
    inv.mode = NttScaleMode::Constant;
    inv.constant = to_dev<DFr>(std::vector<Fr>{Fr::from_u64(n).inv()})[0];
    emulate_elementwise(d, k, inv);
    ASSERT_EQ(0, std::memcmp(d.data(), x.data(), n * sizeof(Fr))) << "inverse k=" << k;
  }
}

TEST(GpuKernelEmulation, CosetNttMatchesShiftedCpu) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 13;
  auto tw = twiddle_table(kt);
  for (int k : {1, 2, 5, 11, 12}) {
    size_t n = size_t(1) << k;
    Fr g = root_of_unity(k + 1);
    std::vector<Fr> x(n);
    for (auto& e : x) e = random_fr(rng);
    // Reference: x_i g^i, then the CPU forward transform.
    std::vector<Fr> ref = x;
    Fr gi = Fr::one();
    for (auto& e : ref) {
      e = e * gi;
      gi = gi * g;
    }
    ntt(ref.data(), k, false);
    HostPow fwd(g, Fr::one(), k);
    std::vector<DFr> d = to_dev<DFr>(x);
    NttScale<DFr> pre;
    pre.mode = NttScaleMode::Table;
    pre.table = fwd.table;
    emulate_elementwise(d, k, pre);
    emulate_passes(d, k, kt, tw, false, false);
    NttScale<DFr> perm;
    perm.permute = true;
    emulate_elementwise(d, k, perm);
    ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(Fr))) << "coset forward k=" << k;
    // And back: inverse DIF, then permute with n^-1 g^-i.
    HostPow inv(g.inv(), Fr::from_u64(n).inv(), k);
    emulate_passes(d, k, kt, tw, true, false);
    NttScale<DFr> post;
    post.permute = true;
    post.mode = NttScaleMode::Table;
    post.table = inv.table;
    emulate_elementwise(d, k, post);
    ASSERT_EQ(0, std::memcmp(d.data(), x.data(), n * sizeof(Fr))) << "coset round trip k=" << k;
  }
}

TEST(GpuKernelEmulation, HStageMatchesCpu) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 13;
  auto tw = twiddle_table(kt);
  for (int k : {1, 3, 10, 11, 12}) {
    size_t n = size_t(1) << k;
    std::vector<Fr> a(n), b(n), c(n);
    for (size_t i = 0; i < n; i++) {
      a[i] = random_fr(rng);
      b[i] = random_fr(rng);
      c[i] = a[i] * b[i];
    }
    std::vector<Fr> ref = compute_h_coset(a, b, c, k);
    ASSERT_EQ(0, std::memcmp(emulate_h_stage(a, b, c, k, kt, tw).data(), ref.data(), n * sizeof(Fr))) << "k=" << k;
  }
}

// The radix-4 passes' arithmetic: the r-shaped reduction rows and the lazy product / sum /
// difference on inputs anywhere in [0, 2p) (p - 1, p, 2p - 1, 0, x + p), twiddle-side operands
// canonical, against the host field.
TEST(GpuKernelEmulation, NttLazyArithmeticMatchesHostField) {
  std::mt19937_64 rng = test::test_rng();
  auto raw = [](const Fr& x) { return to_dev<DFr>(std::vector<Fr>{x})[0]; };
  auto plus_p = [](DFr x) {  // x + p (x < p), a valid lazy representative of x
    Carry c;
    x.w[0] = add_cc(x.w[0], Words<FrParams>::mod(0), c);
    for (int j = 1; j < 8; j++) x.w[j] = addc_cc(x.w[j], Words<FrParams>::mod(j), c);
    return x;
  };
  auto canon = [](const DFr& x) {  // [0, 2p) -> [0, p), checking the range on the way
    DFr r = DFr::reduce_once(x);
    EXPECT_TRUE(r == DFr::reduce_once(r)) << "value was not below 2p";
    return r;
  };
  std::vector<Fr> vals = {Fr::zero(), Fr::one(), -Fr::one(), -Fr::from_u64(2), Fr::from_u64(1ull << 32)};
  for (int i = 0; i < 300; i++) vals.push_back(random_fr(rng));
  for (size_t i = 0; i < vals.size(); i++)
    for (size_t jj = 0; jj < 12; jj++) {
      const Fr& a = vals[i];
      const Fr& b = vals[jj < 5 ? jj : rng() % vals.size()];
      Fr prod = a * b, sum = a + b, diff = a - b;
      for (int va = 0; va < 2; va++)
        for (int vb = 0; vb < 2; vb++) {
          DFr da = va ? plus_p(raw(a)) : raw(a), db = vb ? plus_p(raw(b)) : raw(b);
          EXPECT_TRUE(canon(fr_mul_lazy<true>(da, raw(b))) == raw(prod)) << i << " " << jj;
          EXPECT_TRUE(canon(fr_mul_lazy<false>(da, raw(b))) == raw(prod)) << i << " " << jj;
          EXPECT_TRUE(canon(fr_add_lazy(da, db)) == raw(sum)) << i << " " << jj;
          EXPECT_TRUE(canon(fr_sub_lazy(da, db)) == raw(diff)) << i << " " << jj;
        }
    }
}

// Both multiplies of the register-tiled passes: all sizes 2^1..2^14 both directions, the multi-pass
// plans (2 and 3 passes, DIF and DIT, radix-4 sub-rounds of 2+2+..+1 stages), the H stage. At 2^21
// (generic rows) only the inverse: the forward transform is NttFusedPermutationMatchesCpu's plain
// forward at 2^21, and the permutation + DIT passes NttMultiPassPlansBothOrders' at 2^21 (which
// NttEngine runs on the generic rows), the same calls with the same plans.
TEST(GpuKernelEmulation, NttRadix4PassesMatchCpu) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 22;
  auto tw = twiddle_table(kt);
  for (int v : {kFrMulGeneric, kFrMulFast}) {
    g_mul = v;
    for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 21}) {
      if (v != kFrMulGeneric && k > 12 && k != 17) continue;  // 2^13..2^21 (3-pass plans): the generic rows
      size_t n = size_t(1) << k;
      std::vector<Fr> x(n);
      for (auto& e : x) e = random_fr(rng);
      for (int inverse = k == 21 ? 1 : 0; inverse < 2; inverse++) {
        std::vector<Fr> ref = x;
        ntt(ref.data(), k, inverse);
        std::vector<DFr> d = to_dev<DFr>(x);
        emulate_ntt(d, k, kt, tw, inverse);
        ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(Fr))) << "k=" << k << " inverse=" << inverse << " mul=" << v;
      }
      if (k > 17) continue;
      // Permute, then the DIT passes (the H stage's forward half).
      std::vector<Fr> ref = x;
      ntt(ref.data(), k, false);
      std::vector<DFr> d = to_dev<DFr>(x);
      NttScale<DFr> perm;
      perm.permute = true;
      emulate_elementwise(d, k, perm);
      emulate_passes(d, k, kt, tw, false, true);
      ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(Fr))) << "DIT k=" << k << " mul=" << v;
      // Inverse DIT (permute, inverse DIT passes, n^-1).
      emulate_elementwise(d, k, perm);
      emulate_passes(d, k, kt, tw, true, true);
      NttScale<DFr> sc;
      sc.mode = NttScaleMode::Constant;
      sc.constant = to_dev<DFr>(std::vector<Fr>{Fr::from_u64(n).inv()})[0];
      emulate_elementwise(d, k, sc);
      ASSERT_EQ(0, std::memcmp(d.data(), x.data(), n * sizeof(Fr))) << "inverse DIT k=" << k << " mul=" << v;
    }
    for (int k : {3, 11}) {
      size_t n = size_t(1) << k;
      std::vector<Fr> a(n), b(n), c(n);
      for (size_t i = 0; i < n; i++) {
        a[i] = random_fr(rng);
        b[i] = random_fr(rng);
        c[i] = i % 3 ? a[i] * b[i] : random_fr(rng);
      }
      std::vector<Fr> ref = compute_h_coset(a, b, c, k);
      HostPow hp(root_of_unity(k + 1), Fr::from_u64(n).inv(), k);
      NttScale<DFr> s;
      s.mode = NttScaleMode::Table;
      s.rev_exponent = true;
      s.table = hp.table;
      for (int fused = 0; fused < 2; fused++) {
        std::vector<std::vector<DFr>> vv = {to_dev<DFr>(a), to_dev<DFr>(b), to_dev<DFr>(c)};
        for (auto& x : vv) {
          if (fused) {  // NttEngine::h_stage_vec with the scale in the inverse passes' last store
            g_fuse = s;
            emulate_passes(x, k, kt, tw, true, false);
            g_fuse = NttScale<DFr>();
          } else {
            emulate_passes(x, k, kt, tw, true, false);
            emulate_elementwise(x, k, s);
          }
          emulate_passes(x, k, kt, tw, false, true);
        }
        for (size_t i = 0; i < n; i++) h_combine_elem(vv[0].data(), vv[1].data(), vv[2].data(), i);
        ASSERT_EQ(0, std::memcmp(vv[0].data(), ref.data(), n * sizeof(Fr)))
            << "H stage k=" << k << " mul=" << v << " fused=" << fused;
      }
    }
  }
  g_mul = -1;
}

// NttEngine::forward / inverse with the bit reversal (and n^-1 or the inverse coset scale) in the last
// DIF pass's store: both multiplies, every size 2^1..2^14 and 2^16, 2^17, 2^21 (the r-shaped rows
// only at 2^17 above 2^14), plain and coset, both directions, bit for bit against the CPU; the fused
// path must have run exactly where the plan has 2+ passes.
TEST(GpuKernelEmulation, NttFusedPermutationMatchesCpu) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 22;
  auto tw = twiddle_table(kt);
  for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 21}) {
    NttCase c(rng, k);
    for (int v : {kFrMulGeneric, kFrMulFast}) {
        // The 3-pass plan of 2^21 (7+7+7) with the generic rows, forward and coset inverse (6 s each).
        if (k > 14 && v == kFrMulFast && k != 17) continue;
        g_mul = v;
        for (int inverse = 0; inverse < 2; inverse++)
          for (int coset = 0; coset < 2; coset++) {
            if (k == 21 && inverse != coset) continue;
            std::vector<DFr> d = to_dev<DFr>(c.x);
            int runs = g_fused_runs;
            emulate_ntt(d, k, kt, tw, inverse, c.coset_table(inverse, coset));
            ASSERT_EQ(g_fused_runs - runs, k > kNttMaxPassBits ? 1 : 0) << "k=" << k << " mul=" << v;
            ASSERT_EQ(0, std::memcmp(d.data(), c.r.ref[inverse][coset].data(), c.n * sizeof(Fr)))
                << "k=" << k << " mul=" << v << " inverse=" << inverse << " coset=" << coset;
          }
    }
  }
  // Plans of more passes than the fewest (GpuOptions::ntt_passes): 4 and 8 passes, with the bit
  // reversal in the last pass and through the H stage's DIF + DIT, every direction and coset.
  g_mul = -1;
  for (int k : {6, 12, 14}) {
    NttCase c(rng, k);
    for (int passes : {4, 8}) {
      g_min_passes = passes;
      NttPass ps[8];
      ASSERT_EQ(ntt_radix4_perm_plan(k, kt, false, ps, passes), std::min(passes, k));
      for (int inverse = 0; inverse < 2; inverse++)
        for (int coset = 0; coset < 2; coset++) {
          std::vector<DFr> d = to_dev<DFr>(c.x);
          emulate_ntt(d, k, kt, tw, inverse, c.coset_table(inverse, coset));
          ASSERT_EQ(0, std::memcmp(d.data(), c.r.ref[inverse][coset].data(), c.n * sizeof(Fr)))
              << "k=" << k << " passes=" << passes << " inverse=" << inverse << " coset=" << coset;
        }
      // DIF then DIT (the H stage's shape, no permutation): the identity up to the factor n.
      std::vector<DFr> d = to_dev<DFr>(c.x);
      emulate_passes(d, k, kt, tw, false, false);
      emulate_passes(d, k, kt, tw, true, true);
      Fr nn = Fr::from_u64(c.n);
      for (size_t i = 0; i < c.n; i++) ASSERT_TRUE(to_dev<Fr>(std::vector<DFr>{d[i]})[0] == c.x[i] * nn) << i;
    }
  }
  g_min_passes = 0;
}

// The fused plans: the even stage split, the last pass at lo = 0 with the bit-reversed store.
TEST(GpuKernelEmulation, NttPermPlans) {
  auto split = [](int k, int min_passes) {
    NttPass ps[kNttMaxPasses];
    int np = ntt_radix4_perm_plan(k, k, false, ps, min_passes);
    std::string r;
    for (int i = 0; i < np; i++) r += (i ? "+" : "") + std::to_string(ps[i].t);
    if (np) {
      EXPECT_EQ(ps[np - 1].lo, 0);
      EXPECT_TRUE(ps[np - 1].perm_store && ps[np - 1].last && !ps[np - 2].perm_store);
    }
    return r;
  };
  EXPECT_EQ(split(10, 0), "");  // one pass: not fused
  EXPECT_EQ(split(11, 0), "6+5");
  EXPECT_EQ(split(24, 0), "8+8+8");
  EXPECT_EQ(split(24, 4), "6+6+6+6");
  EXPECT_EQ(split(27, 0), "9+9+9");
  EXPECT_EQ(split(27, 4), "7+7+7+6");
  // The coalesced store: in the perm_store pass, row `row` of local group j (lane j mod G) of any tile
  // goes to base + j, base a multiple of G.
  for (int min_passes : {0, 4}) {
    NttPass ps[kNttMaxPasses];
    int np = ntt_radix4_perm_plan(24, 24, false, ps, min_passes);
    const NttPass& p = ps[np - 1];
    const u32 G = 1u << p.g_log;
    for (u32 block : {0u, 1u, 12345u, (u32)ntt_blocks(p) - 1})
      for (u32 row : {0u, 1u, 77u, (1u << p.t) - 1}) {
        size_t base = bit_reverse(ntt_radix4_index(p, ntt_radix4_gid(p, block, 0), row), p.k);
        ASSERT_EQ(base % G, 0u);
        for (u32 j = 1; j < G; j++)
          ASSERT_EQ(bit_reverse(ntt_radix4_index(p, ntt_radix4_gid(p, block, j), row), p.k), base + j) << min_passes;
      }
  }
}

// ---- MSM ----

namespace {

TEST(GpuKernelEmulationDigits, SignedDigitsRecomposeEveryScalar) {
  std::mt19937_64 rng = test::test_rng();
  Fr r_minus_1 = -Fr::one();
  for (int it = 0; it < 3000; it++) {
    Fr s = it == 0 ? Fr::zero() : it == 1 ? Fr::one() : it == 2 ? r_minus_1 : random_fr(rng);
    if (it % 5 == 3) s = Fr::from_u64(rng() % 1000);
    if (it % 5 == 4) s = -Fr::from_u64(rng() % 1000);
    DFr prep = msm_prepare_scalar(to_dev<DFr>(std::vector<Fr>{s})[0]);
    for (int c : {4, 5, 7, 11, 13, 16, 20, 22, 24}) {
      // sum_w d_w 2^(wc), negated when the fold flag is set, must give back s.
      Fr acc = Fr::zero(), two_c = Fr::from_u64(1ull << c);
      msm_emit(prep, 0, c, [&](u32 key, u32 val) {
        u32 w = key >> (c - 1), mag = (key & ((1u << (c - 1)) - 1)) + 1;
        Fr p = Fr::one();
        for (u32 i = 0; i < w; i++) p = p * two_c;
        Fr d = Fr::from_u64(mag) * p;
        acc = (val & kMsmNegBit) ? acc - d : acc + d;
      });
      ASSERT_EQ(acc, s) << "c=" << c << " iteration " << it;
    }
  }
}

// The whole MSM pipeline of msm/engine.cu, with std::sort in place of the device radix sort and scans.
// shared: over precomputed bases (msm_shifted_copies), all windows in one set of buckets.
template <class C, class HC, class HF = Fr>
Jacobian<HC> emulate_msm(const std::vector<Affine<HC>>& pts_h, const std::vector<HF>& sc_h, int c, u32 l0, u32 l1,
                         u32 K, u32 idx_offset = 0, bool shared = false) {
  using P = XYZZ<C>;
  auto pts = to_dev<Affine<C>>(pts_h);
  auto sc = to_dev<DeviceFieldOf<HF>>(sc_h);
  int nw = msm_windows(c);
  if (shared) {
    std::vector<Affine<C>> table(pts.size() * nw);
    for (size_t i = 0; i < pts.size(); i++) msm_shifted_copies(pts[i], c, nw, table.data() + i, pts.size());
    pts.swap(table);
  }
  u32 stride = (u32)(sc.size() - idx_offset);
  u32 nb = shared ? 1u << (c - 1) : (u32)nw << (c - 1);
  std::vector<std::pair<u32, u32>> entries;
  for (size_t i = 0; i < sc.size(); i++)
    msm_emit(msm_prepare_scalar(sc[i]), (u32)i, c, [&](u32 k, u32 v) { entries.push_back({k, v}); },
             shared ? (u32)sc.size() : 0u);
  std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.first < b.first; });
  u32 m = (u32)entries.size();
  std::vector<u32> keys(m), vals(m);
  for (u32 i = 0; i < m; i++) keys[i] = entries[i].first, vals[i] = entries[i].second;
  std::vector<u32> start(nb, 0), end(nb, 0);
  for (u32 i = 0; i < m; i++) msm_bucket_bounds(keys.data(), m, start.data(), end.data(), i);
  std::vector<std::vector<u32>> ntask(1, std::vector<u32>(nb)), toff(1, std::vector<u32>(nb));
  u32 maxc = 0;
  for (u32 b = 0; b < nb; b++) {
    ntask[0][b] = ceil_div(end[b] - start[b], l0);
    maxc = std::max(maxc, end[b] - start[b]);
  }
  int levels = 1;
  for (u32 t = ceil_div(maxc, l0); t > 1; t = ceil_div(t, l1)) levels++;
  for (int l = 1; l < levels; l++) {
    ntask.emplace_back(nb);
    for (u32 b = 0; b < nb; b++) ntask[l][b] = ntask[l - 1][b] > 1 ? ceil_div(ntask[l - 1][b], l1) : 0;
  }
  std::vector<u32> totals;
  for (int l = 0; l < levels; l++) {
    if (l) toff.emplace_back(nb);
    std::exclusive_scan(ntask[l].begin(), ntask[l].end(), toff[l].begin(), 0u);
    totals.push_back(toff[l][nb - 1] + ntask[l][nb - 1]);
  }
  std::vector<std::vector<u32>> map(levels);
  for (int l = 0; l < levels; l++) {
    map[l].assign(totals[l], ~0u);
    for (u32 b = 0; b < nb; b++) msm_task_map(ntask[l].data(), toff[l].data(), map[l].data(), b);
    for (u32 t = 0; t < totals[l]; t++) {
      EXPECT_EQ(map[l][t], msm_find_bucket(toff[l].data(), nb, t));  // the map agrees with a search
      EXPECT_NE(map[l][t], ~0u);
    }
  }
  std::vector<std::vector<P>> outs(levels);
  outs[0].resize(totals[0]);
  for (u32 t = 0; t < totals[0]; t++) {
    u32 b = map[0][t];
    u32 begin = start[b] + (t - toff[0][b]) * l0, stop = std::min(begin + l0, end[b]);
    outs[0][t] = shared ? msm_acc_entries_shared<C>(pts.data(), idx_offset, (u32)sc.size(), stride,
                                                          vals.data(), begin, stop)
                        : msm_acc_entries<C>(pts.data(), idx_offset, vals.data(), begin, stop);
  }
  for (int l = 1; l < levels; l++) {
    outs[l].resize(totals[l]);
    for (u32 t = 0; t < totals[l]; t++) {
      u32 b = map[l][t];
      u32 base = toff[l - 1][b], begin = base + (t - toff[l][b]) * l1;
      u32 stop = std::min(begin + l1, base + ntask[l - 1][b]);
      outs[l][t] = msm_acc_partials(outs[l - 1].data(), begin, stop);
    }
  }
  std::vector<P> buckets(nb);
  for (u32 b = 0; b < nb; b++) {
    P v = P::infinity();
    for (int l = 0; l < levels; l++) {
      if (ntask[l][b] == 0) break;
      if (ntask[l][b] == 1) {
        v = outs[l][toff[l][b]];
        break;
      }
    }
    buckets[b] = v;
  }
  if (shared) nw = 1;
  u32 per_window = (nb / nw) / K;
  std::vector<P> cur(per_window * nw);
  for (u32 t = 0; t < cur.size(); t++)
    cur[t] = msm_chunk_sum(buckets.data() + (size_t)(t / per_window) * per_window * K, t % per_window, K);
  while (per_window > 1) {
    u32 gs = std::min<u32>(32, per_window), n_out = per_window / gs * nw;
    std::vector<P> nxt(n_out);
    for (u32 t = 0; t < n_out; t++) nxt[t] = msm_acc_partials(cur.data(), t * gs, t * gs + gs);
    cur.swap(nxt);
    per_window /= gs;
  }
  std::vector<XYZZ<HC>> win(nw);
  std::memcpy(win.data(), cur.data(), nw * sizeof(P));
  Jacobian<HC> acc = Jacobian<HC>::infinity();
  for (int w = nw - 1; w >= 0; w--) {
    for (int i = 0; i < c; i++) acc = acc.dbl();
    acc = acc + win[w].to_jacobian();
  }
  return acc;
}

template <class HC>
std::vector<Affine<HC>> random_points(std::mt19937_64& rng, size_t n, const Affine<HC>& gen) {
  return test::random_points_of<Fr>(rng, n, gen);
}

std::vector<Fr> tricky_scalars(std::mt19937_64& rng, size_t n) {
  std::vector<Fr> s(n);
  for (size_t i = 0; i < n; i++) {
    switch (rng() % 8) {
      case 0: s[i] = Fr::zero(); break;
      case 1: s[i] = Fr::one(); break;
      case 2: s[i] = -Fr::one(); break;
      case 3: s[i] = Fr::from_u64(rng() % 70000); break;
      case 4: s[i] = -Fr::from_u64(rng() % 70000); break;
      default: s[i] = random_fr(rng);
    }
  }
  return s;
}

}  // namespace

TEST(GpuKernelEmulation, MsmG1MatchesCpuAcrossWindowsAndLevels) {
  std::mt19937_64 rng = test::test_rng();
  for (size_t n : {1, 2, 3, 100, 777}) {
    auto pts = random_points<G1Curve>(rng, n, g1_generator());
    auto sc = tricky_scalars(rng, n);
    G1 ref = msm_g1(pts.data(), sc.data(), n);
    // Small L0/L1 force several reduction levels; K = 4 keeps several chunks per window.
    for (int c : {4, 5, 9}) {
      G1 got = emulate_msm<DG1, G1Curve>(pts, sc, c, 2, 2, std::min(4u, 1u << (c - 1)));
      ASSERT_EQ(got.to_affine(), ref.to_affine()) << "n=" << n << " c=" << c;
    }
  }
}

// g1_add_affine_sum2 gives XYZZ::add_affine's exact words (both canonical) along random chains that
// pass through infinity, doublings (P + P) and cancellations (P + -P).
TEST(GpuKernelEmulation, MsmG1Sum2AdditionMatchesAddAffine) {
  std::mt19937_64 rng = test::test_rng();
  auto pts = to_dev<DG1Affine>(random_points<G1Curve>(rng, 400, g1_generator()));
  DG1xyzz a = DG1xyzz::infinity();
  int doublings = 0, cancels = 0;
  for (size_t i = 0; i < 4000; i++) {
    DG1Affine q = pts[rng() % pts.size()];
    if (i % 97 == 3 && !a.is_inf()) {  // q = the accumulator's own point, or its negation
      G1 j = to_dev<XYZZ<G1Curve>>(std::vector<DG1xyzz>{a})[0].to_jacobian();  // same bytes on the host
      auto aff = to_dev<DG1Affine>(std::vector<G1Affine>{j.to_affine()})[0];
      q = (i / 97) % 2 ? aff : -aff;
      (i / 97) % 2 ? doublings++ : cancels++;
    }
    DG1xyzz want = a.add_affine(q), got = g1_add_affine_sum2(a, q);
    ASSERT_EQ(0, std::memcmp(&want, &got, sizeof want)) << "step " << i;
    a = got;
  }
  EXPECT_GT(doublings, 5);
  EXPECT_GT(cancels, 5);
}

TEST(GpuKernelEmulation, MsmSkewedBucketsAndOffset) {
  std::mt19937_64 rng = test::test_rng();
  size_t n = 600;
  auto pts = random_points<G1Curve>(rng, n, g1_generator());
  std::vector<Fr> ones(n, Fr::one());
  for (size_t i = 0; i < n; i += 3) ones[i] = Fr::zero();
  G1 ref = msm_g1(pts.data(), ones.data(), n);
  EXPECT_EQ((emulate_msm<DG1, G1Curve>(pts, ones, 6, 4, 3, 8).to_affine()), ref.to_affine());
  // idx_offset: entries below it are skipped, the rest use points[i - offset] (the C MSM).
  auto sc = tricky_scalars(rng, n);
  std::vector<G1Affine> tail(pts.begin(), pts.end() - 7);
  std::vector<Fr> sc_tail(sc.begin() + 7, sc.end());
  G1 ref_off = msm_g1(tail.data(), sc_tail.data(), tail.size());
  EXPECT_EQ((emulate_msm<DG1, G1Curve>(tail, sc, 7, 8, 4, 4, 7).to_affine()), ref_off.to_affine());
}

TEST(GpuKernelEmulation, MsmG2MatchesCpu) {
  std::mt19937_64 rng = test::test_rng();
  size_t n = 150;
  auto pts = random_points<G2Curve>(rng, n, g2_generator());
  auto sc = tricky_scalars(rng, n);
  G2 ref = msm_g2(pts.data(), sc.data(), n);
  EXPECT_EQ((emulate_msm<DG2, G2Curve>(pts, sc, 5, 3, 2, 4).to_affine()), ref.to_affine());
}

// Precomputed bases: each window copy is 2^(wc) P (infinity stays infinity), and the shared-bucket
// pipeline gives the CPU's MSM, also with idx_offset and several reduction levels.
TEST(GpuKernelEmulation, MsmSharedBucketsOverPrecomputedBases) {
  std::mt19937_64 rng = test::test_rng();
  {
    auto pts = random_points<G1Curve>(rng, 40, g1_generator());
    auto d = to_dev<DG1Affine>(pts);
    int c = 9, nw = msm_windows(c);
    std::vector<DG1Affine> table(pts.size() * nw);
    for (size_t i = 0; i < pts.size(); i++) msm_shifted_copies(d[i], c, nw, table.data() + i, pts.size());
    for (size_t i = 0; i < pts.size(); i++) {
      G1 x = G1::from_affine(pts[i]);
      for (int w = 0; w < nw; w++) {
        G1Affine got;
        std::memcpy(&got, &table[w * pts.size() + i], sizeof got);
        ASSERT_EQ(got, x.to_affine()) << "point " << i << " window " << w;
        for (int b = 0; b < c; b++) x = x.dbl();
      }
    }
  }
  for (size_t n : {1, 2, 3, 100, 555}) {
    auto pts = random_points<G1Curve>(rng, n, g1_generator());
    auto sc = tricky_scalars(rng, n);
    G1 ref = msm_g1(pts.data(), sc.data(), n);
    for (int c : {8, 10, 13}) {
      G1 got = emulate_msm<DG1, G1Curve>(pts, sc, c, 2, 2, std::min(8u, 1u << (c - 1)), 0, true);
      ASSERT_EQ(got.to_affine(), ref.to_affine()) << "n=" << n << " c=" << c;
    }
  }
  size_t n = 300;
  auto pts = random_points<G1Curve>(rng, n, g1_generator());
  auto sc = tricky_scalars(rng, n);
  std::vector<G1Affine> tail(pts.begin(), pts.end() - 9);
  std::vector<Fr> sc_tail(sc.begin() + 9, sc.end());
  EXPECT_EQ((emulate_msm<DG1, G1Curve>(tail, sc, 8, 4, 3, 4, 9, true).to_affine()),
            msm_g1(tail.data(), sc_tail.data(), tail.size()).to_affine());
  auto p2 = random_points<G2Curve>(rng, 60, g2_generator());
  auto s2 = tricky_scalars(rng, 60);
  EXPECT_EQ((emulate_msm<DG2, G2Curve>(p2, s2, 8, 3, 2, 4, 0, true).to_affine()),
            msm_g2(p2.data(), s2.data(), 60).to_affine());
}

// ---- G2 over lane pairs (msm/g2_lane_pairs.cuh) ----

namespace {

// Two host threads stand in for the two lanes of a pair; swap() is the shuffle, with a barrier on
// each side of the exchange.
struct HostPairChannel {
  std::barrier<> bar{2};
  u32 slot[2] = {0, 0};
};
struct HostPairEx {
  u32 lane;
  HostPairChannel* ch;
  u32 swap(u32 v) {
    ch->slot[lane] = v;
    ch->bar.arrive_and_wait();
    u32 r = ch->slot[lane ^ 1];
    ch->bar.arrive_and_wait();
    return r;
  }
};

template <bool Shared, class DC>
XYZZ<DC> pair_task(const std::vector<Affine<DC>>& pts, u32 idx_offset, u32 n_scalars, u32 stride,
                   const std::vector<u32>& vals) {
  XYZZ<DC> out;
  std::memset(&out, 0xa5, sizeof out);
  HostPairChannel ch;
  auto lane = [&](u32 l) {
    HostPairEx ex{l, &ch};
    pair_acc_entries<Shared>(ex, pts.data(), idx_offset, n_scalars, stride, vals.data(), 0, (u32)vals.size(), &out);
  };
  std::thread other(lane, 1u);
  lane(0);
  other.join();
  return out;
}

template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Runs f(ex) on both lanes (two host threads).
template <class F>
void on_pair(F&& f) {
  HostPairChannel ch;
  auto lane = [&](u32 l) {
    HostPairEx ex{l, &ch};
    f(ex);
  };
  std::thread other(lane, 1u);
  lane(0);
  other.join();
}

}  // namespace

// The pair's partial bucket sum must equal the one-thread sum byte for byte (the same formulas on
// canonical values): random entries with repeats (doublings), negations (cancellation to infinity and
// restart), points at infinity, skipped indices below idx_offset, both Y3 forms, plain and shared.
namespace {
template <class C>
void check_pair_lanes() {
  using DA = typename Dev<C>::G2Affine;
  using DX = typename Dev<C>::G2xyzz;
  std::mt19937_64 rng = test::test_rng();
  size_t n = 40;
  auto pts = to_dev<DA>(test::random_points_of<typename C::Fr>(rng, n, C::g2_generator()));
  std::vector<std::vector<u32>> lists;
  lists.push_back({});
  lists.push_back({3});
  lists.push_back({3, 3});                              // doubling
  lists.push_back({3, 3 | kMsmNegBit, 4});              // cancellation, then a restart
  lists.push_back({6, 6, 6 | kMsmNegBit, 6, 6});        // doublings in the middle
  lists.push_back({22, 5, 2});                          // an infinity point (i % 17 == 5)
  for (int it = 0; it < 6; it++) {
    std::vector<u32> v;
    for (int j = 0; j < 12; j++) {
      u32 i = (u32)(rng() % n);
      if (j > 0 && rng() % 5 == 0) i = v.back() & ~kMsmNegBit;
      v.push_back(i | (rng() % 2 ? kMsmNegBit : 0));
    }
    lists.push_back(v);
  }
  for (size_t li = 0; li < lists.size(); li++) {
    const auto& v = lists[li];
    for (u32 off : {0u, 2u}) {
      std::vector<DA> sub(pts.begin() + off, pts.end());
      DX ref = msm_acc_entries(sub.data(), off, v.data(), 0, (u32)v.size());
      ASSERT_TRUE(same_bytes((pair_task<false>(sub, off, (u32)n, (u32)(n - off), v)), ref)) << "list " << li;
    }
  }
  // Shared: value w * n_scalars + i names table[w * stride + i - idx_offset].
  u32 ns = 20, off = 3, stride = ns - off, nw = 2;
  std::vector<DA> table(pts.begin(), pts.begin() + nw * stride);
  for (size_t li = 0; li < lists.size(); li++) {
    std::vector<u32> v;
    for (u32 x : lists[li]) v.push_back(((x & ~kMsmNegBit) % (nw * ns)) | (x & kMsmNegBit));
    DX ref = msm_acc_entries_shared(table.data(), off, ns, stride, v.data(), 0, (u32)v.size());
    ASSERT_TRUE(same_bytes((pair_task<true>(table, off, ns, stride, v)), ref)) << "shared list " << li;
  }
}
}  // namespace

TEST(GpuKernelEmulation, MsmG2PairLanesMatchOneThread) { check_pair_lanes<Bls12_381>(); }
TEST(GpuKernelEmulationBn254, MsmG2PairLanesMatchOneThread) { check_pair_lanes<Bn254>(); }

// The bucket-side pair kernels' bodies (full additions, chunked running sums with the double-and-add
// of jK T) against msm_acc_partials / msm_chunk_sum, byte for byte: XYZZ inputs with infinities,
// repeats (doublings) and negations (cancellations).
namespace {
template <class C>
void check_pair_bucket_sums() {
  using DA = typename Dev<C>::G2Affine;
  using DX = typename Dev<C>::G2xyzz;
  std::mt19937_64 rng = test::test_rng();
  auto aff = to_dev<DA>(test::random_points_of<typename C::Fr>(rng, 24, C::g2_generator()));
  std::vector<DX> b;
  for (size_t i = 0; i < aff.size(); i++) {
    DX x = DX::from_affine(aff[i]);
    if (i % 3 == 1) x = xyzz_add(x, DX::from_affine(aff[(i + 5) % aff.size()]));  // ZZ != 1
    b.push_back(x);
  }
  b[4] = DX::infinity();
  b[9] = b[8];   // doubling inside a running sum
  b[13] = -b[12];  // cancellation
  b[20] = b[19];
  for (auto [begin, end] : std::vector<std::pair<u32, u32>>{{0, 0}, {0, 1}, {3, 6}, {7, 11}, {8, 10}, {12, 14}, {11, 14}, {0, 24}}) {
    DX ref = msm_acc_partials(b.data(), begin, end);
    DX got;
    on_pair([&](HostPairEx& ex) { pair_acc_partials(ex, b.data(), begin, end, &got); });
    ASSERT_TRUE(same_bytes(got, ref)) << "partials " << begin << ".." << end;
  }
  for (u32 K : {1u, 4u, 8u}) {
    for (u32 j = 0; j < 24 / K; j++) {
      DX ref = msm_chunk_sum(b.data(), j, K);
      DX got;
      on_pair([&](HostPairEx& ex) { pair_chunk_sum(ex, b.data(), j, K, &got); });
      ASSERT_TRUE(same_bytes(got, ref)) << "chunk " << j << " K " << K;
    }
  }
}
}  // namespace

TEST(GpuKernelEmulation, MsmG2PairBucketSumsMatchOneThread) { check_pair_bucket_sums<Bls12_381>(); }
TEST(GpuKernelEmulationBn254, MsmG2PairBucketSumsMatchOneThread) { check_pair_bucket_sums<Bn254>(); }

// ---- BN254: the same kernel bodies over BN254's device types, against the definitions of
// tests/gpu/curve_refs.hpp (whose fast forms are checked against their definitions here too).

namespace {
using BnF = bn254::Fr;
using BnDF = Dev<Bn254>::Fr;
}  // namespace

TEST(GpuKernelEmulationBn254, ReferencesAgreeWithDefinitions) {
  std::mt19937_64 rng = test::test_rng();
  for (int k : {1, 2, 5, 7}) {
    std::vector<BnF> x(size_t(1) << k);
    for (auto& e : x) e = test::random_scalar<BnF>(rng);
    for (int inverse = 0; inverse < 2; inverse++) {
      std::vector<BnF> y = x;
      test::radix2_ntt(y, k, inverse);
      ASSERT_TRUE(y == test::naive_dft(x, k, inverse)) << "k=" << k << " inverse=" << inverse;
    }
  }
  auto pts = test::random_points_of<BnF>(rng, 60, bn254::g1_generator());
  auto sc = test::edge_scalars<BnF>(rng, 60);
  EXPECT_EQ(test::bucket_msm(pts, sc, 5).to_affine(), test::naive_msm(pts, sc).to_affine());
}

// Every size 2^1..2^12 (the radix-2 passes at 2^1, the register-tiled passes above, two passes from
// 2^11 and, with three passes forced, the multi-pass plan), forward, inverse and both cosets.
TEST(GpuKernelEmulationBn254, NttMatchesReference) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 13;
  auto tw = twiddle_table<BnF>(kt);
  for (int passes : {0, 3})
    for (int k = 1; k <= 12; k++) {
      if (passes && k < 6) continue;
      g_min_passes = passes;
      size_t n = size_t(1) << k;
      std::vector<BnF> x(n);
      for (auto& e : x) e = test::random_scalar<BnF>(rng);
      BnF g = two_adic_root<BnF>(k + 1);
      HostPowT<BnF> cf(g, BnF::one(), k), ci(g.inv(), BnF::from_u64(n).inv(), k);
      for (int inverse = 0; inverse < 2; inverse++)
        for (int coset = 0; coset < 2; coset++) {
          std::vector<BnF> ref = test::ntt_ref(x, k, inverse, coset);
          std::vector<BnDF> d = to_dev<BnDF>(x);
          emulate_ntt(d, k, kt, tw, inverse, coset ? (inverse ? &ci.table : &cf.table) : nullptr);
          ASSERT_EQ(0, std::memcmp(d.data(), ref.data(), n * sizeof(BnF)))
              << "k=" << k << " inverse=" << inverse << " coset=" << coset << " passes=" << passes;
        }
    }
  g_min_passes = 0;
}

// The H stage's per-vector path (inverse DIF, scale by n^-1 g^rev(i), forward DIT) and a*b - c.
TEST(GpuKernelEmulationBn254, HStageMatchesReference) {
  std::mt19937_64 rng = test::test_rng();
  const int kt = 13;
  auto tw = twiddle_table<BnF>(kt);
  for (int k : {1, 3, 10, 12}) {
    size_t n = size_t(1) << k;
    std::vector<BnF> a(n), b(n), c(n);
    for (size_t i = 0; i < n; i++) {
      a[i] = test::random_scalar<BnF>(rng);
      b[i] = test::random_scalar<BnF>(rng);
      c[i] = test::random_scalar<BnF>(rng);
    }
    std::vector<BnF> ref = test::h_coset_ref(a, b, c, k);
    ASSERT_EQ(0, std::memcmp(emulate_h_stage(a, b, c, k, kt, tw).data(), ref.data(), n * sizeof(BnF))) << "k=" << k;
  }
}

// The MSM pipeline (digits, sort, bucket tasks over several levels, chunked window sums; plain and
// over precomputed bases) on BN254's G1 and G2 with infinities, repeats, negations and edge scalars.
TEST(GpuKernelEmulationBn254, MsmMatchesDefinition) {
  std::mt19937_64 rng = test::test_rng();
  for (size_t n : {1, 2, 100, 333}) {
    auto pts = test::random_points_of<BnF>(rng, n, bn254::g1_generator());
    auto sc = test::edge_scalars<BnF>(rng, n);
    auto ref = test::naive_msm(pts, sc).to_affine();
    for (int c : {4, 7, 9})
      ASSERT_EQ((emulate_msm<Dev<Bn254>::G1, bn254::G1Curve>(pts, sc, c, 2, 2, std::min(4u, 1u << (c - 1)))
                     .to_affine()),
                ref)
          << "G1 n=" << n << " c=" << c;
    ASSERT_EQ((emulate_msm<Dev<Bn254>::G1, bn254::G1Curve>(pts, sc, 8, 2, 2, 8, 0, true).to_affine()), ref)
        << "G1 precomputed n=" << n;
  }
  for (size_t n : {1, 40}) {
    auto pts = test::random_points_of<BnF>(rng, n, bn254::g2_generator());
    auto sc = test::edge_scalars<BnF>(rng, n);
    auto ref = test::naive_msm(pts, sc).to_affine();
    ASSERT_EQ((emulate_msm<Dev<Bn254>::G2, bn254::G2Curve>(pts, sc, 5, 3, 2, 4).to_affine()), ref) << "G2 n=" << n;
    ASSERT_EQ((emulate_msm<Dev<Bn254>::G2, bn254::G2Curve>(pts, sc, 8, 3, 2, 4, 0, true).to_affine()), ref)
        << "G2 precomputed n=" << n;
  }
}

// The G1 bucket addition with one Montgomery reduction for two products (mont_sum<2>) over BN254's
// 8-word Fq gives XYZZ::add_affine's exact words, through doublings and cancellations.
TEST(GpuKernelEmulationBn254, Sum2AdditionMatchesAddAffine) {
  std::mt19937_64 rng = test::test_rng();
  using DA = Dev<Bn254>::G1Affine;
  using DX = Dev<Bn254>::G1xyzz;
  auto pts = to_dev<DA>(test::random_points_of<BnF>(rng, 300, bn254::g1_generator()));
  DX a = DX::infinity();
  for (size_t i = 0; i < 3000; i++) {
    DA q = pts[rng() % pts.size()];
    if (i % 50 == 3 && !a.is_inf()) {  // q = the accumulator's own point, or its negation
      bn254::G1 j = to_dev<XYZZ<bn254::G1Curve>>(std::vector<DX>{a})[0].to_jacobian();
      DA aff = to_dev<DA>(std::vector<bn254::G1Affine>{j.to_affine()})[0];
      q = (i / 50) % 2 ? aff : -aff;
    }
    DX want = a.add_affine(q), got = g1_add_affine_sum2(a, q);
    ASSERT_EQ(0, std::memcmp(&want, &got, sizeof want)) << "step " << i;
    a = got;
  }
}

// The bit-length histogram predicts the digit entries a plan emits (within a few percent: Booth's
// carry adds a window now and then, a random digit is zero 2^-c of the time), for random scalars,
// witness-like ones and all edge values; the window it picks for random scalars is the one n alone
// gives, a narrower one for 0/1-heavy scalars; and only the sparse ones prefer a plain plan to
// precomputed bases.
TEST(GpuKernelEmulationDigits, BitLengthHistogramPredictsEntriesAndWindows) {
  std::mt19937_64 rng = test::test_rng();
  const size_t n = 1 << 14;
  auto hist_of = [](const std::vector<Fr>& sc, std::vector<u64>& hist) {
    hist.assign(kMsmHistBins, 0);
    for (const DFr& d : to_dev<DFr>(sc)) {
      u32 k[kMsmScalarWords];
      msm_scalar_words(msm_prepare_scalar(d), k);
      hist[msm_bit_length(k)]++;
    }
  };
  auto entries = [](const std::vector<Fr>& sc, int c) {
    size_t m = 0;
    for (const DFr& d : to_dev<DFr>(sc)) m += msm_emit(msm_prepare_scalar(d), 0, c, [](u32, u32) {});
    return m;
  };
  std::vector<Fr> random(n), sparse(n), edges = {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(2), -Fr::from_u64(2)};
  for (auto& x : random) x = random_fr(rng);
  for (auto& x : sparse) {
    uint64_t k = rng() % 100;
    x = k < 50 ? Fr::zero() : k < 94 ? Fr::one() : random_fr(rng);
  }
  std::vector<u64> hr, hs, he;
  hist_of(random, hr);
  hist_of(sparse, hs);
  hist_of(edges, he);
  EXPECT_EQ(he[0], 1u);  // 0
  EXPECT_EQ(he[1], 2u);  // 1, and r-1 folded to -1
  EXPECT_EQ(he[2], 2u);  // 2 and -2
  for (int c : {8, 13, 16, 20}) {
    for (const auto& [sc, h] : {std::pair{&random, &hr}, std::pair{&sparse, &hs}}) {
      double est = msm_entries_estimate(h->data(), c), got = (double)entries(*sc, c);
      EXPECT_NEAR(est / got, 1.0, 0.05) << "c=" << c;
    }
    EXPECT_EQ(msm_entries_estimate(he.data(), c), 2 * 1 + 2 * 1.0);
  }
  // A witness-sized histogram: the same mix scaled to 2^24 scalars.
  std::vector<u64> big_r(hr), big_s(hs);
  for (auto& v : big_r) v <<= 10;
  for (auto& v : big_s) v <<= 10;
  EXPECT_NEAR(msm_auto_window_hist(big_r.data()), msm_auto_window(size_t(1) << 24), 1);
  EXPECT_LT(msm_auto_window_hist(big_s.data()), msm_auto_window(size_t(1) << 24));
  EXPECT_TRUE(msm_prefer_plain(big_s.data(), size_t(1) << 24, 22));
  EXPECT_FALSE(msm_prefer_plain(big_r.data(), size_t(1) << 24, 22));
}

// msm_entries_bound is an upper bound on what a plan of any window emits, for each scalar alone
// (so for any mix), and it is reached: 2^c - 1 is two digits (-1, then the carry) at width c,
// though it has only c bits.
TEST(GpuKernelEmulationDigits, EntriesBoundHoldsForEveryScalar) {
  std::mt19937_64 rng = test::test_rng();
  auto one = [](const Fr& x, int c, size_t& emitted, size_t& bound) {
    DFr d = to_dev<DFr>(std::vector<Fr>{x})[0];
    u32 k[kMsmScalarWords];
    msm_scalar_words(msm_prepare_scalar(d), k);
    std::vector<u64> h(kMsmHistBins, 0);
    h[msm_bit_length(k)] = 1;
    emitted = (size_t)msm_emit(msm_prepare_scalar(d), 0, c, [](u32, u32) {});
    bound = msm_entries_bound(h.data(), c);
  };
  std::vector<Fr> sc = {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(2), -Fr::from_u64(3)};
  for (int c : {8, 13, 16, 20}) {
    sc.push_back(Fr::from_u64((1ull << c) - 1));
    sc.push_back(-Fr::from_u64((1ull << c) - 1));
    sc.push_back(Fr::from_u64((1ull << c) + 1));
  }
  for (int i = 0; i < 2000; i++) {
    Fr x = random_fr(rng);
    sc.push_back(i % 4 == 0 ? x : Fr::from_u64(rng() >> (rng() % 64)));
  }
  for (int c : {8, 13, 16, 20}) {
    bool reached = false;
    for (const Fr& x : sc) {
      size_t emitted, bound;
      one(x, c, emitted, bound);
      ASSERT_LE(emitted, bound) << "c=" << c;
      if (bound > 1 && emitted == bound && bound < (size_t)msm_windows(c)) reached = true;
    }
    EXPECT_TRUE(reached) << "c=" << c << ": the carry's extra digit never happened";
    size_t e, b;
    one(Fr::from_u64((1ull << c) - 1), c, e, b);
    EXPECT_EQ(e, 2u) << "c=" << c;
    EXPECT_EQ(b, 2u) << "c=" << c;
  }
}
