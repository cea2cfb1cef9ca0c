// The element-wise steps around the NTT passes: scaling (by a constant such as n^-1, or by powers of
// the coset shift), the bit-reversal permutation (element by element, or by tiles), and the H
// stage's a*b - c. Host/device code, like plan.cuh, for the host emulation tests.
#pragma once
#include "kernels/ntt/plan.cuh"

namespace cuzk {
namespace gpu {

// c * g^e from two small tables: lo[e mod 2^lo_bits] (with the constant c folded in) times
// hi[e >> lo_bits]; one multiply per element instead of a table of the whole size.
template <class F>
struct PowTable {
  const F* lo = nullptr;
  const F* hi = nullptr;
  int lo_bits = 0;
  CUZK_HD F at(size_t e) const {
    return load(lo + (e & ((size_t(1) << lo_bits) - 1))) * load(hi + (e >> lo_bits));
  }
};

// The element-wise step around the passes:
//  permute: natural <-> bit-reversed order (in place, by swapping each pair once);
//  scale: multiply the element that ends at index i by table(i), or by table(rev(i)) when
//  rev_exponent (the H stage scales in bit-reversed order).
struct NttScaleMode {
  enum Mode { None, Constant, Table };
};
template <class F>
struct NttScale : NttScaleMode {
  bool permute = false;
  Mode mode = None;
  bool rev_exponent = false;
  F constant;  // Constant mode: every element times this
  PowTable<F> table;
  CUZK_HD F factor(size_t e) const { return mode == Constant ? constant : table.at(e); }
};

template <class F>
CUZK_HD void ntt_scale_elem(F* data, int k, const NttScale<F>& s, size_t i) {
  if (!s.permute) {
    if (s.mode == NttScaleMode::None) return;
    F x = load(data + i);
    store(data + i, x * s.factor(s.rev_exponent ? bit_reverse(i, k) : i));
    return;
  }
  size_t j = bit_reverse(i, k);
  if (j < i) return;  // the pair is handled from its smaller index
  F a = load(data + i), b = load(data + j);
  if (s.mode != NttScaleMode::None) {
    b = b * s.factor(i);
    if (j != i) a = a * s.factor(j);
  }
  store(data + i, b);
  if (j != i) store(data + j, a);
}

// h = a*b - c, element-wise (the quotient numerator on the coset).
template <class F>
CUZK_HD void h_combine_elem(F* a, const F* b, const F* c, size_t i) {
  store(a + i, load(a + i) * load(b + i) - load(c + i));
}

// Bit-reversal permutation (with the optional per-element scale of NttScale, permute = true) by
// tiles, for k >= 2 kPermBits: index i = (a, m, c) with a the top and c the bottom kPermBits bits;
// rev(i) = (rev c, rev m, rev a). Block m (taken when m <= rev m) loads the two 16 x 16 tiles
// {(a, m, c)} and {(a, rev m, c)} with rows of 16 consecutive elements (coalesced), and writes each
// position from the other tile's transposed, bit-reversed position: one read and one write of the
// data, in 512-byte runs, instead of scattered 32-byte accesses.
constexpr int kPermBits = 4;
constexpr u32 kPermSide = 1u << kPermBits;
constexpr u32 kPermStride = kPermSide + 1;  // padded rows: fewer bank conflicts on the transposed read
constexpr u32 kPermThreads = kPermSide * kPermSide;
CUZK_HD size_t ntt_perm_blocks(int k) { return size_t(1) << (k - 2 * kPermBits); }
// Phase 0: load both tiles into tA, tB (kPermSide * kPermStride each); phase 1 (after a barrier): store.
template <class F>
CUZK_HD void ntt_perm_tile(F* data, int k, const NttScale<F>& s, F* tA, F* tB, size_t block, u32 tid, int phase) {
  const int mb = k - 2 * kPermBits;
  size_t m = block, mr = bit_reverse(m, mb);
  if (mr < m) return;
  u32 a = tid >> kPermBits, c = tid & (kPermSide - 1);
  size_t iA = (size_t(a) << (k - kPermBits)) | (m << kPermBits) | c;
  size_t iB = (size_t(a) << (k - kPermBits)) | (mr << kPermBits) | c;
  if (phase == 0) {
    tA[a * kPermStride + c] = load(data + iA);
    if (mr != m) tB[a * kPermStride + c] = load(data + iB);
    return;
  }
  u32 ra = (u32)bit_reverse(a, kPermBits), rc = (u32)bit_reverse(c, kPermBits);
  F* src = mr != m ? tB : tA;  // position (a, m, c) takes (rev c, rev m, rev a)
  F vA = src[rc * kPermStride + ra];
  if (s.mode != NttScaleMode::None) vA = vA * s.factor(iA);
  store(data + iA, vA);
  if (mr != m) {
    F vB = tA[rc * kPermStride + ra];
    if (s.mode != NttScaleMode::None) vB = vB * s.factor(iB);
    store(data + iB, vB);
  }
}

}  // namespace gpu
}  // namespace cuzk
