// Device prime-field arithmetic with 32-bit limbs and PTX carry chains (mad.lo.cc / madc.hi.cc).
//
// DFp<P> holds exactly the bytes of the host Fp<P> (N 64-bit limbs == 2N 32-bit limbs, little-endian,
// Montgomery form with the same R = 2^(64N)), so key points, scalars and results cross between host and
// device with no conversion. Values are always fully reduced (< p), like the host type.
//
// Every carry-chain primitive has a host emulation (the CC.CF flag kept in a Carry object), so the exact
// instruction sequence that runs on the GPU is unit-tested on the CPU against the 64-bit host field.
// This header compiles with nvcc (device or host pass) and with a plain C++ compiler (emulation only).
#pragma once
#include "math/curves.hpp"

// Full unrolling on the device (register arrays must only see constant indices); nothing on the host.
#if defined(__CUDA_ARCH__)
#define CUZK_UNROLL _Pragma("unroll")
#else
#define CUZK_UNROLL
#endif

namespace cuzk {
namespace gpu {

// The PTX condition-code carry flag. On the device it is the hardware CC register and this object is
// dead state the compiler removes; on the host it carries the emulated flag between primitives.
struct Carry {
  u32 cf = 0;
};

#if defined(__CUDA_ARCH__)
#define CUZK_ASM asm volatile
CUZK_HD u32 add_cc(u32 a, u32 b, Carry&) { u32 d; CUZK_ASM("add.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
CUZK_HD u32 addc_cc(u32 a, u32 b, Carry&) { u32 d; CUZK_ASM("addc.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
CUZK_HD u32 addc(u32 a, u32 b, Carry&) { u32 d; CUZK_ASM("addc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
CUZK_HD u32 sub_cc(u32 a, u32 b, Carry&) { u32 d; CUZK_ASM("sub.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
CUZK_HD u32 subc_cc(u32 a, u32 b, Carry&) { u32 d; CUZK_ASM("subc.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
CUZK_HD u32 subc(u32 a, u32 b, Carry&) { u32 d; CUZK_ASM("subc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
CUZK_HD u32 mad_lo_cc(u32 a, u32 b, u32 c, Carry&) { u32 d; CUZK_ASM("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d; }
CUZK_HD u32 madc_lo_cc(u32 a, u32 b, u32 c, Carry&) { u32 d; CUZK_ASM("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d; }
CUZK_HD u32 madc_hi_cc(u32 a, u32 b, u32 c, Carry&) { u32 d; CUZK_ASM("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d; }
#undef CUZK_ASM
#else
// Host emulation: identical semantics, CF is the carry (or borrow, for the sub forms) bit.
CUZK_HD u32 add_cc(u32 a, u32 b, Carry& c) { u64 t = (u64)a + b; c.cf = (u32)(t >> 32); return (u32)t; }
CUZK_HD u32 addc_cc(u32 a, u32 b, Carry& c) { u64 t = (u64)a + b + c.cf; c.cf = (u32)(t >> 32); return (u32)t; }
CUZK_HD u32 addc(u32 a, u32 b, Carry& c) { return a + b + c.cf; }
CUZK_HD u32 sub_cc(u32 a, u32 b, Carry& c) { u64 t = (u64)a - b; c.cf = (u32)(t >> 63); return (u32)t; }
CUZK_HD u32 subc_cc(u32 a, u32 b, Carry& c) { u64 t = (u64)a - b - c.cf; c.cf = (u32)(t >> 63); return (u32)t; }
CUZK_HD u32 subc(u32 a, u32 b, Carry& c) { return a - b - c.cf; }
CUZK_HD u32 mad_lo_cc(u32 a, u32 b, u32 c, Carry& f) { u64 t = (u64)(u32)(a * b) + c; f.cf = (u32)(t >> 32); return (u32)t; }
CUZK_HD u32 madc_lo_cc(u32 a, u32 b, u32 c, Carry& f) { u64 t = (u64)(u32)(a * b) + c + f.cf; f.cf = (u32)(t >> 32); return (u32)t; }
CUZK_HD u32 madc_hi_cc(u32 a, u32 b, u32 c, Carry& f) { u64 t = (((u64)a * b) >> 32) + c + f.cf; f.cf = (u32)(t >> 32); return (u32)t; }
#endif
CUZK_HD u32 mul_lo(u32 a, u32 b) { return a * b; }
CUZK_HD u32 mul_hi(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return (u32)(((u64)a * b) >> 32);
#endif
}

// The 32-bit words of a field's constants. Device code reads them from __constant__ memory (with full
// unrolling every index is a compile-time constant, so they become constant-bank operands of the
// multiply-adds); host code derives them from the 64-bit constants in math/.
template <class P>
struct Words;

#define CUZK_WORD_LIST6(A) \
  (u32)A[0], (u32)(A[0] >> 32), (u32)A[1], (u32)(A[1] >> 32), (u32)A[2], (u32)(A[2] >> 32), (u32)A[3], \
      (u32)(A[3] >> 32), (u32)A[4], (u32)(A[4] >> 32), (u32)A[5], (u32)(A[5] >> 32)
#define CUZK_WORD_LIST4(A) \
  (u32)A[0], (u32)(A[0] >> 32), (u32)A[1], (u32)(A[1] >> 32), (u32)A[2], (u32)(A[2] >> 32), (u32)A[3], (u32)(A[3] >> 32)

#if defined(__CUDACC__)
static __constant__ u32 kBlsFqMod32[12] = {CUZK_WORD_LIST6(bls12_381::FqParams::MOD)};
static __constant__ u32 kBlsFqOne32[12] = {CUZK_WORD_LIST6(bls12_381::FqParams::ONE)};
static __constant__ u32 kBlsFrMod32[8] = {CUZK_WORD_LIST4(bls12_381::FrParams::MOD)};
static __constant__ u32 kBlsFrOne32[8] = {CUZK_WORD_LIST4(bls12_381::FrParams::ONE)};
// BLS12-381 Fr's -r^-1 mod 2^32 is -1, so m = x0 * (-r^-1) is a negation when the compiler can see
// the constant, and ptxas then leaves every reduction row as IMAD.X + IMAD.HI.U32.X pairs (2 + 4
// multiply-add pipe cycles per word product on sm_90) instead of the fused IMAD.WIDE.U32.X (4) it
// makes for Fq, whose m is a multiply. Read from __constant__ memory the factor is opaque, m is one
// IMAD, and the rows fuse: 65.8e9 against 54.1e9 Fr products/s in registers on the H200.
static __constant__ u32 kBlsFrInv32 = (u32)bls12_381::FrParams::INV;
static __constant__ u32 kBnFqMod32[8] = {CUZK_WORD_LIST4(bn254::FqParams::MOD)};
static __constant__ u32 kBnFqOne32[8] = {CUZK_WORD_LIST4(bn254::FqParams::ONE)};
static __constant__ u32 kBnFrMod32[8] = {CUZK_WORD_LIST4(bn254::FrParams::MOD)};
static __constant__ u32 kBnFrOne32[8] = {CUZK_WORD_LIST4(bn254::FrParams::ONE)};
#endif

#if defined(__CUDA_ARCH__)
#define CUZK_WORD(dev, P64, j) return dev[j]
#else
#define CUZK_WORD(dev, P64, j) return (u32)(P64[(j) >> 1] >> (32 * ((j) & 1)))
#endif

// What every field's words share: the count and -p^-1 mod 2^32, the low word of -p^-1 mod 2^64.
template <class P>
struct WordsBase {
  static constexpr int NW = 2 * P::N;
  static constexpr u32 INV = (u32)P::INV;
};

// A field whose reduction factor is an ordinary multiply: -p^-1 as an immediate.
#define CUZK_FIELD_WORDS(P, DMOD, DONE)                                    \
  template <>                                                              \
  struct Words<P> : WordsBase<P> {                                         \
    CUZK_HD static u32 inv() { return INV; }                               \
    CUZK_HD static u32 mod(int j) { CUZK_WORD(DMOD, P::MOD, j); }          \
    CUZK_HD static u32 one(int j) { CUZK_WORD(DONE, P::ONE, j); }          \
  };
CUZK_FIELD_WORDS(bls12_381::FqParams, kBlsFqMod32, kBlsFqOne32)
CUZK_FIELD_WORDS(bn254::FqParams, kBnFqMod32, kBnFqOne32)
CUZK_FIELD_WORDS(bn254::FrParams, kBnFrMod32, kBnFrOne32)
#undef CUZK_FIELD_WORDS

template <>
struct Words<bls12_381::FrParams> : WordsBase<bls12_381::FrParams> {
  // The factor the reduction rows multiply by, opaque on the device (see kBlsFrInv32).
  CUZK_HD static u32 inv() {
#if defined(__CUDA_ARCH__)
    return kBlsFrInv32;
#else
    return INV;
#endif
  }
  CUZK_HD static u32 mod(int j) { CUZK_WORD(kBlsFrMod32, bls12_381::FrParams::MOD, j); }
  CUZK_HD static u32 one(int j) { CUZK_WORD(kBlsFrOne32, bls12_381::FrParams::ONE, j); }
};
#undef CUZK_WORD

// 16-byte alignment (both sizes are multiples of 16) lets struct copies through shared and global
// memory use 128-bit accesses.
template <class P>
struct alignas(16) DFp {
  using Params = P;
  using W = Words<P>;
  static constexpr int NW = W::NW;
  static_assert(NW % 2 == 0, "the even/odd multiply needs an even word count");
  // The sums below never carry out of NW words and the CIOS product ends below 2p with one
  // conditional subtraction left: both need 2p < 2^(32 NW), a spare top bit (BLS12-381's Fq has
  // three, its Fr one, both BN254 fields two).
  static_assert((P::MOD[P::N - 1] >> 63) == 0, "the lazy bounds need p < 2^(64 N - 1)");
  u32 w[NW];

  CUZK_HD static DFp zero() {
    DFp r;
CUZK_UNROLL
    for (int j = 0; j < NW; j++) r.w[j] = 0;
    return r;
  }
  CUZK_HD static DFp one() {
    DFp r;
CUZK_UNROLL
    for (int j = 0; j < NW; j++) r.w[j] = W::one(j);
    return r;
  }
  CUZK_HD bool is_zero() const {
    u32 acc = 0;
CUZK_UNROLL
    for (int j = 0; j < NW; j++) acc |= w[j];
    return acc == 0;
  }
  CUZK_HD bool operator==(const DFp& o) const {
    u32 acc = 0;
CUZK_UNROLL
    for (int j = 0; j < NW; j++) acc |= w[j] ^ o.w[j];
    return acc == 0;
  }
  CUZK_HD bool operator!=(const DFp& o) const { return !(*this == o); }

  // r - p if r >= p, else r; branch-free through the borrow of the trial subtraction.
  CUZK_HD static DFp reduce_once(const DFp& r) {
    DFp t;
    Carry c;
    t.w[0] = sub_cc(r.w[0], W::mod(0), c);
CUZK_UNROLL
    for (int j = 1; j < NW; j++) t.w[j] = subc_cc(r.w[j], W::mod(j), c);
    u32 borrow = subc(0, 0, c);  // all ones when r < p
CUZK_UNROLL
    for (int j = 0; j < NW; j++) t.w[j] = (r.w[j] & borrow) | (t.w[j] & ~borrow);
    return t;
  }
  // a + b < 2p < 2^(32 NW) (p has a spare top bit), so the sum never carries out.
  CUZK_HD DFp operator+(const DFp& b) const {
    DFp r;
    Carry c;
    r.w[0] = add_cc(w[0], b.w[0], c);
CUZK_UNROLL
    for (int j = 1; j < NW - 1; j++) r.w[j] = addc_cc(w[j], b.w[j], c);
    r.w[NW - 1] = addc(w[NW - 1], b.w[NW - 1], c);
    return reduce_once(r);
  }
  // a - b, plus p when it borrowed (p masked by the borrow, no branch).
  CUZK_HD DFp operator-(const DFp& b) const {
    DFp r;
    Carry c;
    r.w[0] = sub_cc(w[0], b.w[0], c);
CUZK_UNROLL
    for (int j = 1; j < NW; j++) r.w[j] = subc_cc(w[j], b.w[j], c);
    u32 mask = subc(0, 0, c);
    Carry d;
    r.w[0] = add_cc(r.w[0], W::mod(0) & mask, d);
CUZK_UNROLL
    for (int j = 1; j < NW - 1; j++) r.w[j] = addc_cc(r.w[j], W::mod(j) & mask, d);
    r.w[NW - 1] = addc(r.w[NW - 1], W::mod(NW - 1) & mask, d);
    return r;
  }
  CUZK_HD DFp operator-() const { return zero() - *this; }
  CUZK_HD DFp dbl() const { return *this + *this; }
  CUZK_HD DFp& operator+=(const DFp& b) { return *this = *this + b; }
  CUZK_HD DFp& operator-=(const DFp& b) { return *this = *this - b; }
  CUZK_HD DFp& operator*=(const DFp& b) { return *this = *this * b; }

  // Montgomery product a*b/2^(32 NW) mod p, CIOS over 32-bit words.
  //
  // The running value T is kept as T = X + 2^32 Y, where X collects the products of the even words
  // of a and Y those of the odd words. A word product a_j*b_i spans words (j, j+1); for even j these
  // pairs tile X exactly, for odd j they tile Y (shifted down one word), so each half is one
  // uninterrupted mad.lo.cc/madc.hi.cc chain on the same operands — a pair the assembler can fuse into
  // one 64-bit wide multiply-add with carry. Per row: a*b_i into X and Y, m = X_0 * (-p^-1), m*p into
  // X and Y (which clears X_0), then the division by 2^32: T/2^32 = (Y + X_1) + 2^32 (X >> 64), so
  // the halves swap roles; the carry of Y_0 + X_1 lands on the next row's odd chain, which starts at
  // that word. X and Y each carry one top word for the few bits above 32*NW. Cost: 4*NW^2 32-bit
  // multiply-adds plus about 4*NW adds; the result is < 2p (standard CIOS bound for a, b < p) and
  // one conditional subtraction makes it canonical.
  CUZK_HD DFp operator*(const DFp& bb) const { return reduce_once(mul_rows<StdRow>(*this, bb)); }

  // The standard reduction row of the product below (any modulus).
  struct StdRow {
    CUZK_HD static void apply(u32* X, u32* Y) { reduce_row(X, Y); }
  };
  // That CIOS product before its final subtraction, in [0, 2p). Row::apply(X, Y) is the reduction
  // row, so that a modulus of special shape (Fr's r = 1 - 2^32 mod 2^64, ntt/radix4_passes.cuh) can
  // bring its own cheaper one.
  template <class Row>
  CUZK_HD static DFp mul_rows(const DFp& aa, const DFp& bb) {
    const u32* a = aa.w;
    const u32* b = bb.w;
    u32 X[NW + 1], Y[NW + 1];
    // Row 0: plain products, nothing to accumulate yet.
CUZK_UNROLL
    for (int j = 0; j < NW; j += 2) {
      X[j] = mul_lo(a[j], b[0]);
      X[j + 1] = mul_hi(a[j], b[0]);
      Y[j] = mul_lo(a[j + 1], b[0]);
      Y[j + 1] = mul_hi(a[j + 1], b[0]);
    }
    X[NW] = 0;
    Y[NW] = 0;
    Row::apply(X, Y);
CUZK_UNROLL
    for (int i = 1; i < NW; i++) {
      u32 Xn[NW + 1], Yn[NW + 1];
      Carry c;
      // New even half: Y with X_1 added at word 0; its carry goes to word 1 of T = word 0 of the new odd half.
      Xn[0] = add_cc(Y[0], X[1], c);
      // New odd half: X >> 64 plus the odd products of a*b_i.
CUZK_UNROLL
      for (int j = 1; j < NW - 1; j += 2) {
        Yn[j - 1] = madc_lo_cc(a[j], b[i], X[j + 1], c);
        Yn[j] = madc_hi_cc(a[j], b[i], X[j + 2], c);
      }
      Yn[NW - 2] = madc_lo_cc(a[NW - 1], b[i], X[NW], c);
      Yn[NW - 1] = madc_hi_cc(a[NW - 1], b[i], 0, c);
      Yn[NW] = addc(0, 0, c);
      // Even products into the new even half (words 1.. still hold Y).
      Carry d;
      Xn[0] = mad_lo_cc(a[0], b[i], Xn[0], d);
      Xn[1] = madc_hi_cc(a[0], b[i], Y[1], d);
CUZK_UNROLL
      for (int j = 2; j < NW; j += 2) {
        Xn[j] = madc_lo_cc(a[j], b[i], Y[j], d);
        Xn[j + 1] = madc_hi_cc(a[j], b[i], Y[j + 1], d);
      }
      Xn[NW] = addc(Y[NW], 0, d);
      Row::apply(Xn, Yn);
CUZK_UNROLL
      for (int j = 0; j <= NW; j++) {
        X[j] = Xn[j];
        Y[j] = Yn[j];
      }
    }
    return fold_halves(X, Y);
  }
  // T/2^32 = Y + (X >> 32) after the last reduction row: the CIOS result, < 2p < 2^(32 NW).
  CUZK_HD static DFp fold_halves(const u32* X, const u32* Y) {
    DFp r;
    Carry c;
    r.w[0] = add_cc(Y[0], X[1], c);
CUZK_UNROLL
    for (int j = 1; j < NW - 1; j++) r.w[j] = addc_cc(Y[j], X[j + 1], c);
    r.w[NW - 1] = addc(Y[NW - 1], X[NW], c);
    return r;
  }
  // acc[0..NW] += the products a_j b of one parity (j = First, First + 2, ...), word pair (lo, hi)
  // of a_j b at acc[j - First], acc[j - First + 1]: one half of a CIOS row, for sums of products.
  template <int First>
  CUZK_HD static void mac_half(u32* acc, const DFp& a, u32 b) {
    Carry c;
    acc[0] = mad_lo_cc(a.w[First], b, acc[0], c);
    acc[1] = madc_hi_cc(a.w[First], b, acc[1], c);
CUZK_UNROLL
    for (int j = First + 2; j < NW; j += 2) {
      acc[j - First] = madc_lo_cc(a.w[j], b, acc[j - First], c);
      acc[j - First + 1] = madc_hi_cc(a.w[j], b, acc[j - First + 1], c);
    }
    acc[NW] = addc(acc[NW], 0, c);
  }
  CUZK_HD DFp sqr() const { return *this * *this; }

  // Adds m*p, m = X_0 * (-p^-1) mod 2^32, so that the low word of T becomes zero.
  CUZK_HD static void reduce_row(u32* X, u32* Y) {
    u32 m = X[0] * W::inv();
    Carry c;
    X[0] = mad_lo_cc(m, W::mod(0), X[0], c);
    X[1] = madc_hi_cc(m, W::mod(0), X[1], c);
CUZK_UNROLL
    for (int j = 2; j < NW; j += 2) {
      X[j] = madc_lo_cc(m, W::mod(j), X[j], c);
      X[j + 1] = madc_hi_cc(m, W::mod(j), X[j + 1], c);
    }
    X[NW] = addc(X[NW], 0, c);
    Carry d;
    Y[0] = mad_lo_cc(m, W::mod(1), Y[0], d);
    Y[1] = madc_hi_cc(m, W::mod(1), Y[1], d);
CUZK_UNROLL
    for (int j = 3; j < NW; j += 2) {
      Y[j - 1] = madc_lo_cc(m, W::mod(j), Y[j - 1], d);
      Y[j] = madc_hi_cc(m, W::mod(j), Y[j], d);
    }
    Y[NW] = addc(Y[NW], 0, d);
  }

  // Montgomery form to the plain integer (a multiply by 1).
  CUZK_HD DFp to_plain() const {
    DFp one_raw = zero();
    one_raw.w[0] = 1;
    return *this * one_raw;
  }
};

// The device twin of a host field (same bytes): Fp<P> -> DFp<P>, Fp2<Fp<P>, Xi> -> Fp2<DFp<P>, Xi>.
template <class F>
struct DeviceField;
template <class P>
struct DeviceField<Fp<P>> {
  using type = DFp<P>;
};
template <class P, int XiA>
struct DeviceField<Fp2<Fp<P>, XiA>> {
  using type = Fp2<DFp<P>, XiA>;
};
template <class F>
using DeviceFieldOf = typename DeviceField<F>::type;

// Whether a device field is a prime field (G1) rather than its quadratic extension (G2).
template <class F>
inline constexpr bool kIsPrimeField = false;
template <class P>
inline constexpr bool kIsPrimeField<DFp<P>> = true;

// BLS12-381's device fields, the names the resident-key prover uses.
using DFq = DeviceFieldOf<bls12_381::Fq>;
using DFr = DeviceFieldOf<bls12_381::Fr>;
using DFq2 = DeviceFieldOf<bls12_381::Fq2>;

static_assert(sizeof(DFq) == sizeof(bls12_381::Fq), "device and host Fq must share their bytes");
static_assert(sizeof(DFr) == sizeof(bls12_381::Fr), "device and host Fr must share their bytes");
static_assert(sizeof(DFq2) == sizeof(bls12_381::Fq2), "device and host Fq2 must share their bytes");
static_assert(sizeof(DeviceFieldOf<bn254::Fq>) == sizeof(bn254::Fq), "device and host Fq must share their bytes");
static_assert(sizeof(DeviceFieldOf<bn254::Fr>) == sizeof(bn254::Fr), "device and host Fr must share their bytes");
static_assert(sizeof(DeviceFieldOf<bn254::Fq2>) == sizeof(bn254::Fq2), "device and host Fq2 must share their bytes");

}  // namespace gpu
}  // namespace cuzk
