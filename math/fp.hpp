// Prime field in Montgomery form, one template for every modulus (Fq and Fr of BLS12-381, later BN254).
// P supplies: N (64-bit limbs), MOD, ONE (= R mod p), R2 (= R^2 mod p), INV (= -p^-1 mod 2^64), and
// requires p < 2^(64N-1) so that a+b never carries out of the top limb and CIOS needs no extra word.
#pragma once
#include "common.hpp"

// x86-64 host fast path for Montgomery multiplication (MULX/ADCX/ADOX). Compiled only for the host
// side of x86-64 builds; used only when the running CPU reports BMI2 and ADX, so a binary built here
// still runs (through the portable loop) on a CPU without them. Define CUZK_NO_ASM to disable.
#if defined(__x86_64__) && !defined(__CUDA_ARCH__) && !defined(CUZK_NO_ASM)
#define CUZK_X86_MULX 1
// The multiply is inlined into every caller (the asm is ~150 instructions) and the portable loop,
// then only a fallback, is kept out of line so that it does not bloat those callers.
#define CUZK_FP_HOT __attribute__((always_inline)) inline
#define CUZK_FP_COLD __attribute__((noinline))
#include <cpuid.h>

#include <cstdlib>
namespace cuzk::detail {
// CPUID leaf 7: EBX bit 8 is BMI2 (MULX), bit 19 is ADX (ADCX/ADOX). CUZK_FORCE_ADX=1 skips the
// check: valgrind executes MULX/ADCX/ADOX but hides the ADX bit, so instruction counts under
// callgrind would otherwise measure the portable path (only for CPUs known to have them).
inline const bool g_cpu_mulx_adx = [] {
  if (const char* f = std::getenv("CUZK_FORCE_ADX"); f && f[0] == '1') return true;
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return ((b >> 8) & 1) && ((b >> 19) & 1);
}();
}  // namespace cuzk::detail
// The asm fragments below work on named operands: x, y (pointers to the factors), p (modulus),
// inv (-p^-1 mod 2^64), lo/hi scratch and the rotating accumulators. Each row of a product
// y[i]*x is added with MULX, the low halves chained through ADOX (OF) and the high halves through
// ADCX (CF), so the two carry chains run in parallel.
#define CUZK_MX_S(x) #x
// t = x*y[0] (row 0 needs no accumulation): t0..tN.
#define CUZK_MX_FIRST_ROW_BEGIN "movq 0(%[y]), %%rdx\n\txorl %k[lo], %k[lo]\n\t"
#define CUZK_MX_MUL0(a, b) "mulxq 0(%[x]), %[" CUZK_MX_S(a) "], %[" CUZK_MX_S(b) "]\n\t"
#define CUZK_MX_MULC(off, a, b) \
  "mulxq " CUZK_MX_S(off) "(%[x]), %[lo], %[" CUZK_MX_S(b) "]\n\tadcxq %[lo], %[" CUZK_MX_S(a) "]\n\t"
#define CUZK_MX_CARRY_C(a) "movl $0, %k[lo]\n\tadcxq %[lo], %[" CUZK_MX_S(a) "]\n\t"
// (a, b) += src[off] * rdx, low half into a on OF, high half into b on CF.
#define CUZK_MX_MA(src, off, a, b)                                                                 \
  "mulxq " CUZK_MX_S(off) "(%[" src "]), %[lo], %[hi]\n\tadoxq %[lo], %[" CUZK_MX_S(a) "]\n\tadcxq %[hi], %[" \
  CUZK_MX_S(b) "]\n\t"
// Reduction step: m = t0*inv, t += m*p, which zeroes t0 (dropped by the register rotation).
#define CUZK_MX_RED_BEGIN "movq %[inv], %%rdx\n\timulq %[" 
#define CUZK_MX_RED_BEGIN2 "], %%rdx\n\txorl %k[lo], %k[lo]\n\t"
#define CUZK_MX_CARRY_O(a) "movl $0, %k[lo]\n\tadoxq %[lo], %[" CUZK_MX_S(a) "]\n\t"
// Row i >= 1 (off = 8i): (t0..tN) += x*y[i], tN starting fresh from the top MULX.
#define CUZK_MX_ROW_BEGIN(off) "movq " CUZK_MX_S(off) "(%[y]), %%rdx\n\txorl %k[lo], %k[lo]\n\t"
#define CUZK_MX_TOP(off, a, b)                                                                      \
  "mulxq " CUZK_MX_S(off) "(%[x]), %[lo], %[" CUZK_MX_S(b) "]\n\tadoxq %[lo], %[" CUZK_MX_S(a) "]\n\t" \
  "movl $0, %k[lo]\n\tadcxq %[lo], %[" CUZK_MX_S(b) "]\n\tadoxq %[lo], %[" CUZK_MX_S(b) "]\n\t"

#define CUZK_MX_FIRST6(a0, a1, a2, a3, a4, a5, a6)                                               \
  CUZK_MX_FIRST_ROW_BEGIN CUZK_MX_MUL0(a0, a1) CUZK_MX_MULC(8, a1, a2) CUZK_MX_MULC(16, a2, a3) \
  CUZK_MX_MULC(24, a3, a4) CUZK_MX_MULC(32, a4, a5) CUZK_MX_MULC(40, a5, a6) CUZK_MX_CARRY_C(a6)
#define CUZK_MX_MAC6(off, a0, a1, a2, a3, a4, a5, a6)                                              \
  CUZK_MX_ROW_BEGIN(off) CUZK_MX_MA("x", 0, a0, a1) CUZK_MX_MA("x", 8, a1, a2)                     \
  CUZK_MX_MA("x", 16, a2, a3) CUZK_MX_MA("x", 24, a3, a4) CUZK_MX_MA("x", 32, a4, a5) \
  CUZK_MX_TOP(40, a5, a6)
#define CUZK_MX_RED6(a0, a1, a2, a3, a4, a5, a6)                                                   \
  CUZK_MX_RED_BEGIN CUZK_MX_S(a0) CUZK_MX_RED_BEGIN2 CUZK_MX_MA("p", 0, a0, a1)                  \
  CUZK_MX_MA("p", 8, a1, a2) CUZK_MX_MA("p", 16, a2, a3) CUZK_MX_MA("p", 24, a3, a4)              \
  CUZK_MX_MA("p", 32, a4, a5) CUZK_MX_MA("p", 40, a5, a6) CUZK_MX_CARRY_O(a6)
#define CUZK_MX_FIRST4(a0, a1, a2, a3, a4)                                                       \
  CUZK_MX_FIRST_ROW_BEGIN CUZK_MX_MUL0(a0, a1) CUZK_MX_MULC(8, a1, a2) CUZK_MX_MULC(16, a2, a3) \
  CUZK_MX_MULC(24, a3, a4) CUZK_MX_CARRY_C(a4)
#define CUZK_MX_MAC4(off, a0, a1, a2, a3, a4)                                                 \
  CUZK_MX_ROW_BEGIN(off) CUZK_MX_MA("x", 0, a0, a1) CUZK_MX_MA("x", 8, a1, a2) \
  CUZK_MX_MA("x", 16, a2, a3) CUZK_MX_TOP(24, a3, a4)
#define CUZK_MX_RED4(a0, a1, a2, a3, a4)                                                        \
  CUZK_MX_RED_BEGIN CUZK_MX_S(a0) CUZK_MX_RED_BEGIN2 CUZK_MX_MA("p", 0, a0, a1)               \
  CUZK_MX_MA("p", 8, a1, a2) CUZK_MX_MA("p", 16, a2, a3) CUZK_MX_MA("p", 24, a3, a4) CUZK_MX_CARRY_O(a4)
// Conditional subtraction of p without a branch and with one scratch register: CF and OF are both
// cleared, then r - p is formed as r + ~p + 1 on the CF chain (ADCX), which leaves CF = 1 exactly
// when r >= p; a second chain on OF (ADOX) adds p back where CF = 0, selecting p or 0 with CMOVNC.
// MOV, NOT and CMOV leave the flags alone, so both chains survive interleaving.
#define CUZK_AS_START(t) "xorl %k[" CUZK_MX_S(t) "], %k[" CUZK_MX_S(t) "]\n\tstc\n\t"
#define CUZK_AS_SUBP(t, off, r)                                                                          \
  "movq " CUZK_MX_S(off) "(%[p]), %[" CUZK_MX_S(t) "]\n\tnotq %[" CUZK_MX_S(t) "]\n\tadcxq %[" CUZK_MX_S(t) \
  "], %[" CUZK_MX_S(r) "]\n\t"
#define CUZK_AS_FIX(t, off, r)                                                                    \
  "movl $0, %k[" CUZK_MX_S(t) "]\n\tcmovncq " CUZK_MX_S(off) "(%[p]), %[" CUZK_MX_S(t) "]\n\tadoxq %[" \
  CUZK_MX_S(t) "], %[" CUZK_MX_S(r) "]\n\t"
// r = a - b read from memory, as r = a + ~b + 1 on the CF chain (same flag discipline as above).
#define CUZK_AS_SUBAB(t, off, r)                                                                   \
  "movq " CUZK_MX_S(off) "(%[a]), %[" CUZK_MX_S(r) "]\n\tmovq " CUZK_MX_S(off) "(%[b]), %[" CUZK_MX_S(t) \
  "]\n\tnotq %[" CUZK_MX_S(t) "]\n\tadcxq %[" CUZK_MX_S(t) "], %[" CUZK_MX_S(r) "]\n\t"
// r = a + b (CF chain from a cleared CF; p < 2^(64N-1) means no carry out).
#define CUZK_AS_ADDAB(off, r) \
  "movq " CUZK_MX_S(off) "(%[a]), %[" CUZK_MX_S(r) "]\n\tadcq " CUZK_MX_S(off) "(%[b]), %[" CUZK_MX_S(r) "]\n\t"
#define CUZK_AS_REDUCE4(t, r0, r1, r2, r3)                                                      \
  CUZK_AS_START(t) CUZK_AS_SUBP(t, 0, r0) CUZK_AS_SUBP(t, 8, r1) CUZK_AS_SUBP(t, 16, r2)       \
  CUZK_AS_SUBP(t, 24, r3) CUZK_AS_FIX(t, 0, r0) CUZK_AS_FIX(t, 8, r1) CUZK_AS_FIX(t, 16, r2) \
  CUZK_AS_FIX(t, 24, r3)
#define CUZK_AS_REDUCE6(t, r0, r1, r2, r3, r4, r5)                                                  \
  CUZK_AS_START(t) CUZK_AS_SUBP(t, 0, r0) CUZK_AS_SUBP(t, 8, r1) CUZK_AS_SUBP(t, 16, r2)           \
  CUZK_AS_SUBP(t, 24, r3) CUZK_AS_SUBP(t, 32, r4) CUZK_AS_SUBP(t, 40, r5) CUZK_AS_FIX(t, 0, r0) \
  CUZK_AS_FIX(t, 8, r1) CUZK_AS_FIX(t, 16, r2) CUZK_AS_FIX(t, 24, r3) CUZK_AS_FIX(t, 32, r4)     \
  CUZK_AS_FIX(t, 40, r5)
#else
#define CUZK_FP_HOT CUZK_HD
#define CUZK_FP_COLD CUZK_HD
#endif

namespace cuzk {

template <class P>
struct Fp {
  static constexpr int N = P::N;
  using Params = P;
  using Repr = BigInt<N>;
  u64 l[N];  // Montgomery representation: the element x is stored as x*R mod p.

  CUZK_HD static Fp zero() {
    Fp r;
    for (int i = 0; i < N; i++) r.l[i] = 0;
    return r;
  }
  CUZK_HD static Fp one() {
    Fp r;
    for (int i = 0; i < N; i++) r.l[i] = P::ONE[i];
    return r;
  }
  // Limbs taken verbatim as the Montgomery representation (zkey encoding).
  CUZK_HD static Fp from_mont_limbs(const u64* a) {
    Fp r;
    for (int i = 0; i < N; i++) r.l[i] = a[i];
    return r;
  }
  // Plain integer (must be < p) into Montgomery form: one multiply by R^2.
  CUZK_HD static Fp from_plain(const Repr& a) {
    Fp t = from_mont_limbs(a.l), r2 = from_mont_limbs(P::R2);
    return t * r2;
  }
  CUZK_HD static Fp from_u64(u64 v) {
    Repr a{};
    for (int i = 0; i < N; i++) a.l[i] = 0;
    a.l[0] = v;
    return from_plain(a);
  }
  // Montgomery form back to the plain integer: one multiply by 1.
  CUZK_HD Repr to_plain() const {
    Fp one_raw = zero();
    one_raw.l[0] = 1;
    Fp t = *this * one_raw;
    Repr r;
    for (int i = 0; i < N; i++) r.l[i] = t.l[i];
    return r;
  }
  // True iff the limbs form an integer below p: every decoded element must pass this.
  CUZK_HD static bool is_canonical(const u64* a) {
    for (int i = N - 1; i >= 0; i--) {
      if (a[i] < P::MOD[i]) return true;
      if (a[i] > P::MOD[i]) return false;
    }
    return false;  // equal to p
  }

  CUZK_HD bool is_zero() const {
    u64 acc = 0;
    for (int i = 0; i < N; i++) acc |= l[i];
    return acc == 0;
  }
  CUZK_HD bool is_one() const { return *this == one(); }
  CUZK_HD bool operator==(const Fp& o) const {
    u64 acc = 0;
    for (int i = 0; i < N; i++) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  CUZK_HD bool operator!=(const Fp& o) const { return !(*this == o); }

  // Subtract p once if the value is >= p (inputs < 2p).
  CUZK_HD void reduce_once() {
#if CUZK_X86_MULX
    if constexpr (N == 4 || N == 6) {
      if (detail::g_cpu_mulx_adx) {
        asm_reduce(l);
        return;
      }
    }
#endif
    u64 t[N], borrow = 0;
    for (int i = 0; i < N; i++) t[i] = sbb(l[i], P::MOD[i], borrow);
    if (!borrow)
      for (int i = 0; i < N; i++) l[i] = t[i];
  }

  CUZK_FP_HOT Fp operator+(const Fp& b) const {
    Fp r;
#if CUZK_X86_MULX
    if constexpr (N == 4 || N == 6) {
      if (detail::g_cpu_mulx_adx) {
        asm_add(r.l, l, b.l);
        return r;
      }
    }
#endif
    u64 c = 0;
    for (int i = 0; i < N; i++) r.l[i] = adc(l[i], b.l[i], c);
    r.reduce_once();
    return r;
  }
  CUZK_FP_HOT Fp operator-(const Fp& b) const {
    Fp r;
#if CUZK_X86_MULX
    if constexpr (N == 4 || N == 6) {
      if (detail::g_cpu_mulx_adx) {
        asm_sub(r.l, l, b.l);
        return r;
      }
    }
#endif
    u64 br = 0;
    for (int i = 0; i < N; i++) r.l[i] = sbb(l[i], b.l[i], br);
    if (br) {
      u64 c = 0;
      for (int i = 0; i < N; i++) r.l[i] = adc(r.l[i], P::MOD[i], c);
    }
    return r;
  }
#if CUZK_X86_MULX
  // x86-64 add, subtract and reduce for 4 and 6 limbs: compilers turn the portable carry helpers
  // (and even the carry intrinsics) into flag spills, so these are straight carry chains (see
  // CUZK_AS_*). They use ADCX/ADOX, so callers test g_cpu_mulx_adx first. Inlined like the
  // multiply: out of line, the call and the operand traffic cost a third of the work.
  __attribute__((always_inline)) static void asm_reduce(u64* v) {
    u64 t;
    if constexpr (N == 6) {
      u64 r0 = v[0], r1 = v[1], r2 = v[2], r3 = v[3], r4 = v[4], r5 = v[5];
      asm(CUZK_AS_REDUCE6(t, r0, r1, r2, r3, r4, r5)
          : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [r4] "+r"(r4), [r5] "+r"(r5), [t] "=&r"(t)
          : [p] "r"(P::MOD)
          : "cc", "memory");
      v[0] = r0, v[1] = r1, v[2] = r2, v[3] = r3, v[4] = r4, v[5] = r5;
    } else {
      u64 r0 = v[0], r1 = v[1], r2 = v[2], r3 = v[3];
      asm(CUZK_AS_REDUCE4(t, r0, r1, r2, r3)
          : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [t] "=&r"(t)
          : [p] "r"(P::MOD)
          : "cc", "memory");
      v[0] = r0, v[1] = r1, v[2] = r2, v[3] = r3;
    }
  }
  __attribute__((always_inline)) static void asm_add(u64* out, const u64* a, const u64* b) {
    u64 t;
    if constexpr (N == 6) {
      u64 r0, r1, r2, r3, r4, r5;
      asm("xorl %k[t], %k[t]\n\t" CUZK_AS_ADDAB(0, r0) CUZK_AS_ADDAB(8, r1) CUZK_AS_ADDAB(16, r2)
              CUZK_AS_ADDAB(24, r3) CUZK_AS_ADDAB(32, r4) CUZK_AS_ADDAB(40, r5)
                  CUZK_AS_REDUCE6(t, r0, r1, r2, r3, r4, r5)
          : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [r5] "=&r"(r5),
            [t] "=&r"(t)
          : [a] "r"(a), [b] "r"(b), [p] "r"(P::MOD)
          : "cc", "memory");
      out[0] = r0, out[1] = r1, out[2] = r2, out[3] = r3, out[4] = r4, out[5] = r5;
    } else {
      u64 r0, r1, r2, r3;
      asm("xorl %k[t], %k[t]\n\t" CUZK_AS_ADDAB(0, r0) CUZK_AS_ADDAB(8, r1) CUZK_AS_ADDAB(16, r2)
              CUZK_AS_ADDAB(24, r3) CUZK_AS_REDUCE4(t, r0, r1, r2, r3)
          : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [t] "=&r"(t)
          : [a] "r"(a), [b] "r"(b), [p] "r"(P::MOD)
          : "cc", "memory");
      out[0] = r0, out[1] = r1, out[2] = r2, out[3] = r3;
    }
  }
  __attribute__((always_inline)) static void asm_sub(u64* out, const u64* a, const u64* b) {
    u64 t;
    if constexpr (N == 6) {
      u64 r0, r1, r2, r3, r4, r5;
      asm(CUZK_AS_START(t) CUZK_AS_SUBAB(t, 0, r0) CUZK_AS_SUBAB(t, 8, r1) CUZK_AS_SUBAB(t, 16, r2)
              CUZK_AS_SUBAB(t, 24, r3) CUZK_AS_SUBAB(t, 32, r4) CUZK_AS_SUBAB(t, 40, r5) CUZK_AS_FIX(t, 0, r0)
                  CUZK_AS_FIX(t, 8, r1) CUZK_AS_FIX(t, 16, r2) CUZK_AS_FIX(t, 24, r3) CUZK_AS_FIX(t, 32, r4)
                      CUZK_AS_FIX(t, 40, r5)
          : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [r5] "=&r"(r5),
            [t] "=&r"(t)
          : [a] "r"(a), [b] "r"(b), [p] "r"(P::MOD)
          : "cc", "memory");
      out[0] = r0, out[1] = r1, out[2] = r2, out[3] = r3, out[4] = r4, out[5] = r5;
    } else {
      u64 r0, r1, r2, r3;
      asm(CUZK_AS_START(t) CUZK_AS_SUBAB(t, 0, r0) CUZK_AS_SUBAB(t, 8, r1) CUZK_AS_SUBAB(t, 16, r2)
              CUZK_AS_SUBAB(t, 24, r3) CUZK_AS_FIX(t, 0, r0) CUZK_AS_FIX(t, 8, r1) CUZK_AS_FIX(t, 16, r2)
                  CUZK_AS_FIX(t, 24, r3)
          : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [t] "=&r"(t)
          : [a] "r"(a), [b] "r"(b), [p] "r"(P::MOD)
          : "cc", "memory");
      out[0] = r0, out[1] = r1, out[2] = r2, out[3] = r3;
    }
  }
#endif
  CUZK_HD Fp operator-() const { return zero() - *this; }
  CUZK_HD Fp dbl() const { return *this + *this; }

  // Montgomery product: the x86-64 BMI2/ADX kernel for 4 and 6 limbs (Fr, Fq) on the host when the
  // CPU has it, otherwise the portable CIOS loop. Both give the same canonical result.
  CUZK_FP_HOT Fp operator*(const Fp& b) const {
#if CUZK_X86_MULX
    if constexpr (N == 4 || N == 6) {
      if (detail::g_cpu_mulx_adx) return mul_mulx(b);
    }
#endif
    return mul_cios(b);
  }
  // CIOS Montgomery multiplication: N^2 + N word products (2N^2+N multiplies counting m*p),
  // interleaving the reduction so the running sum stays N+2 words. The spare top bit of p
  // guarantees the result is < 2p before the final conditional subtraction.
  CUZK_FP_COLD Fp mul_cios(const Fp& b) const {
    u64 t[N + 2];
    for (int i = 0; i < N + 2; i++) t[i] = 0;
    for (int i = 0; i < N; i++) {
      u64 c = 0;
      for (int j = 0; j < N; j++) t[j] = mac(t[j], l[j], b.l[i], c);
      u64 c2 = 0;
      t[N] = adc(t[N], c, c2);
      t[N + 1] = c2;
      u64 m = t[0] * P::INV;
      c = 0;
      (void)mac(t[0], m, P::MOD[0], c);
      for (int j = 1; j < N; j++) t[j - 1] = mac(t[j], m, P::MOD[j], c);
      c2 = 0;
      t[N - 1] = adc(t[N], c, c2);
      t[N] = t[N + 1] + c2;
    }
    Fp r;
    for (int i = 0; i < N; i++) r.l[i] = t[i];
    r.reduce_once();
    return r;
  }
#if CUZK_X86_MULX
  // "No-carry" CIOS with two interleaved carry chains (ADCX on CF for the high halves, ADOX on OF
  // for the low halves), fully unrolled with the N+1 accumulators rotating through registers.
  // Needs the top limb of p below 2^62 (true for Fr and Fq) so the accumulator never outgrows N+1
  // words; the result is < 2p and the final conditional subtraction (CUZK_AS_REDUCE) makes it
  // canonical. About 2x the
  // compiler's code for the portable loop on Zen/Intel cores.
  template <bool kReduce = true>
  __attribute__((always_inline)) inline Fp mul_mulx(const Fp& b) const {
    Fp r;
    u64 t0, t1, t2, t3, t4, t5, t6, lo, hi;
    if constexpr (N == 6 && !kReduce) {
      asm(CUZK_MX_FIRST6(t0, t1, t2, t3, t4, t5, t6)   //
          CUZK_MX_RED6(t0, t1, t2, t3, t4, t5, t6)     //
          CUZK_MX_MAC6(8, t1, t2, t3, t4, t5, t6, t0)  //
          CUZK_MX_RED6(t1, t2, t3, t4, t5, t6, t0)     //
          CUZK_MX_MAC6(16, t2, t3, t4, t5, t6, t0, t1) //
          CUZK_MX_RED6(t2, t3, t4, t5, t6, t0, t1)     //
          CUZK_MX_MAC6(24, t3, t4, t5, t6, t0, t1, t2) //
          CUZK_MX_RED6(t3, t4, t5, t6, t0, t1, t2)     //
          CUZK_MX_MAC6(32, t4, t5, t6, t0, t1, t2, t3) //
          CUZK_MX_RED6(t4, t5, t6, t0, t1, t2, t3)     //
          CUZK_MX_MAC6(40, t5, t6, t0, t1, t2, t3, t4) //
          CUZK_MX_RED6(t5, t6, t0, t1, t2, t3, t4)
          : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
            [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi)
          : [x] "r"(l), [y] "r"(b.l), [p] "r"(P::MOD), [inv] "m"(P::INV)
          : "rdx", "cc", "memory");
      r.l[0] = t6, r.l[1] = t0, r.l[2] = t1, r.l[3] = t2, r.l[4] = t3, r.l[5] = t4;
    } else if constexpr (N == 6) {
      asm(CUZK_MX_FIRST6(t0, t1, t2, t3, t4, t5, t6)   //
          CUZK_MX_RED6(t0, t1, t2, t3, t4, t5, t6)     //
          CUZK_MX_MAC6(8, t1, t2, t3, t4, t5, t6, t0)  //
          CUZK_MX_RED6(t1, t2, t3, t4, t5, t6, t0)     //
          CUZK_MX_MAC6(16, t2, t3, t4, t5, t6, t0, t1) //
          CUZK_MX_RED6(t2, t3, t4, t5, t6, t0, t1)     //
          CUZK_MX_MAC6(24, t3, t4, t5, t6, t0, t1, t2) //
          CUZK_MX_RED6(t3, t4, t5, t6, t0, t1, t2)     //
          CUZK_MX_MAC6(32, t4, t5, t6, t0, t1, t2, t3) //
          CUZK_MX_RED6(t4, t5, t6, t0, t1, t2, t3)     //
          CUZK_MX_MAC6(40, t5, t6, t0, t1, t2, t3, t4) //
          CUZK_MX_RED6(t5, t6, t0, t1, t2, t3, t4)     //
          CUZK_AS_REDUCE6(lo, t6, t0, t1, t2, t3, t4)
          : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
            [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi)
          : [x] "r"(l), [y] "r"(b.l), [p] "r"(P::MOD), [inv] "m"(P::INV)
          : "rdx", "cc", "memory");
      r.l[0] = t6, r.l[1] = t0, r.l[2] = t1, r.l[3] = t2, r.l[4] = t3, r.l[5] = t4;
    } else {
      (void)t5, (void)t6;
      asm(CUZK_MX_FIRST4(t0, t1, t2, t3, t4)   //
          CUZK_MX_RED4(t0, t1, t2, t3, t4)     //
          CUZK_MX_MAC4(8, t1, t2, t3, t4, t0)  //
          CUZK_MX_RED4(t1, t2, t3, t4, t0)     //
          CUZK_MX_MAC4(16, t2, t3, t4, t0, t1) //
          CUZK_MX_RED4(t2, t3, t4, t0, t1)     //
          CUZK_MX_MAC4(24, t3, t4, t0, t1, t2) //
          CUZK_MX_RED4(t3, t4, t0, t1, t2)  //
          CUZK_AS_REDUCE4(lo, t4, t0, t1, t2)
          : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
            [lo] "=&r"(lo), [hi] "=&r"(hi)
          : [x] "r"(l), [y] "r"(b.l), [p] "r"(P::MOD), [inv] "m"(P::INV)
          : "rdx", "cc", "memory");
      r.l[0] = t4, r.l[1] = t0, r.l[2] = t1, r.l[3] = t2;
    }
    return r;
  }
#endif
  // Montgomery product left in [0, 2p) (the final conditional subtraction skipped) for inputs in
  // [0, 2p): only for values that feed nothing but further multiplies (lazy_mul's results may be
  // given back to lazy_mul or operator*, whose result is canonical again), never to +, -, == or
  // is_zero. Sound when 8p < R = 2^(64N): then (ab + mp)/R < (4p^2 + Rp)/R < 1.5p, and the running
  // sum of the no-carry CIOS stays below 3p < R between rows. Fq qualifies (p < 2^381); elsewhere,
  // and on the portable path, it is the ordinary product.
  static constexpr bool kLazyOk = P::MOD[N - 1] < (u64(1) << 61);
  CUZK_FP_HOT Fp mul_lazy(const Fp& b) const {
#if CUZK_X86_MULX
    if constexpr (N == 6 && kLazyOk) {
      if (detail::g_cpu_mulx_adx) return mul_mulx<false>(b);
    }
#endif
    return *this * b;
  }
  CUZK_HD Fp sqr() const { return *this * *this; }
  CUZK_HD Fp& operator+=(const Fp& b) { return *this = *this + b; }
  CUZK_HD Fp& operator-=(const Fp& b) { return *this = *this - b; }
  CUZK_HD Fp& operator*=(const Fp& b) { return *this = *this * b; }

  // x^e for a plain little-endian exponent, left-to-right square and multiply.
  template <int M>
  CUZK_HD Fp pow(const BigInt<M>& e) const {
    Fp r = one();
    for (int i = e.num_bits() - 1; i >= 0; i--) {
      r = r.sqr();
      if (e.bit(i)) r = r * *this;
    }
    return r;
  }
  CUZK_HD Fp pow_u64(u64 e) const {
    BigInt<1> b{{e}};
    return pow(b);
  }
  // Fermat inverse x^(p-2); 0 maps to 0. Costs about 1.2*log2(p) multiplies; batch when hot.
  CUZK_HD Fp inv() const {
    BigInt<N> e;
    for (int i = 0; i < N; i++) e.l[i] = P::MOD[i];
    u64 br = 0;
    e.l[0] = sbb(e.l[0], 2, br);
    for (int i = 1; i < N; i++) e.l[i] = sbb(e.l[i], 0, br);
    return pow(e);
  }
  // The same inverse by the binary extended Euclidean algorithm, in variable time (only for public
  // data, such as the MSM's slope denominators): about 380 rounds of shifts and subtractions on
  // plain integers instead of the ~570 multiplies of x^(p-2), then one multiply by R^3 to return to
  // Montgomery form. Invariants, with x = aR the stored limbs and u, v odd: x1 x = u, x2 x = v (mod
  // p); each round subtracts the smaller of u, v from the larger and strips the factors of two from
  // the difference, dividing its coefficient by the same power of two mod p (x + m p with
  // m = x (-p^-1) mod 2^k is divisible by 2^k). It ends at u = v = gcd = 1. Accepts [0, 2p).
  CUZK_HD Fp inv_vartime() const {
    u64 u[N], v[N];
    Fp x1 = zero(), x2 = zero();
    for (int i = 0; i < N; i++) u[i] = l[i], v[i] = P::MOD[i];
    reduce_limbs(u);
    bool nz = false;
    for (int i = 0; i < N; i++) nz |= u[i] != 0;
    if (!nz) return zero();
    x1.l[0] = 1;
    strip_twos(u, x1);
    for (;;) {
      int c = cmp_limbs(u, v);
      if (c == 0) break;
      if (c > 0) {
        sub_limbs(u, v);
        x1 = x1 - x2;
        strip_twos(u, x1);
      } else {
        sub_limbs(v, u);
        x2 = x2 - x1;
        strip_twos(v, x2);
      }
    }
    // x1 = x^-1 (plain); a^-1 R = x^-1 R^2 = mont(x1, R^3).
    Fp r2 = from_mont_limbs(P::R2);
    return x1 * (r2 * r2);
  }

 private:
  CUZK_HD static void reduce_limbs(u64* a) {
    u64 t[N], br = 0;
    for (int i = 0; i < N; i++) t[i] = sbb(a[i], P::MOD[i], br);
    if (!br)
      for (int i = 0; i < N; i++) a[i] = t[i];
  }
  CUZK_HD static int cmp_limbs(const u64* a, const u64* b) {
    for (int i = N - 1; i >= 0; i--)
      if (a[i] != b[i]) return a[i] > b[i] ? 1 : -1;
    return 0;
  }
  CUZK_HD static void sub_limbs(u64* a, const u64* b) {
    u64 br = 0;
    for (int i = 0; i < N; i++) a[i] = sbb(a[i], b[i], br);
  }
  // a (non-zero, even or odd) loses its factors of two, 2^k; x becomes x / 2^k mod p.
  CUZK_HD static void strip_twos(u64* a, Fp& x) {
    for (;;) {
      int k;
      if (a[0] == 0) {
        k = 63;
      } else {
        k = 63 - clz64(a[0] & (~a[0] + 1));  // trailing zeros of a[0]
        if (k == 0) return;
      }
      for (int i = 0; i < N; i++) a[i] = (a[i] >> k) | (i + 1 < N ? a[i + 1] << (64 - k) : 0);
      // t = x + m p with m = x * (-p^-1) mod 2^k, then t / 2^k (< p since x < p and m < 2^k).
      u64 m = (x.l[0] * P::INV) & ((u64(1) << k) - 1), t[N + 1], c = 0;
      for (int i = 0; i < N; i++) t[i] = mac(x.l[i], m, P::MOD[i], c);
      t[N] = c;
      for (int i = 0; i < N; i++) x.l[i] = (t[i] >> k) | (t[i + 1] << (64 - k));
    }
  }

 public:
  // Legendre symbol as x^((p-1)/2): one, zero or minus one.
  CUZK_HD Fp legendre() const {
    BigInt<N> e;
    for (int i = 0; i < N; i++) e.l[i] = P::MOD[i];
    e.l[0] -= 1;  // p is odd
    for (int i = 0; i < N; i++) e.l[i] = (e.l[i] >> 1) | (i + 1 < N ? e.l[i + 1] << 63 : 0);
    return pow(e);
  }
  // Square root for p = 3 mod 4 (BLS12-381's q): x^((p+1)/4). Returns false when none exists.
  CUZK_HD bool sqrt(Fp& out) const {
    BigInt<N> e;
    u64 c = 0;
    for (int i = 0; i < N; i++) e.l[i] = adc(P::MOD[i], i == 0 ? 1 : 0, c);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < N; i++) e.l[i] = (e.l[i] >> 1) | (i + 1 < N ? e.l[i + 1] << 63 : 0);
    out = pow(e);
    return out.sqr() == *this;
  }
  // Lexicographic "largest" flag of the compressed encodings: plain value > (p-1)/2.
  CUZK_HD bool is_lexicographically_largest() const {
    Repr v = to_plain();
    Repr h;  // (p-1)/2
    for (int i = 0; i < N; i++) h.l[i] = (P::MOD[i] >> 1) | (i + 1 < N ? P::MOD[i + 1] << 63 : 0);
    for (int i = N - 1; i >= 0; i--) {
      if (v.l[i] > h.l[i]) return true;
      if (v.l[i] < h.l[i]) return false;
    }
    return false;
  }
};

// Inverts every element of v in place with one field inversion and 3(n-1) multiplies
// (Montgomery's trick). Zeros stay zero.
template <class F>
void batch_inverse(F* v, size_t n, F* scratch) {
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!v[i].is_zero()) acc = acc * v[i];
  }
  F inv = acc.inv();
  for (size_t i = n; i-- > 0;) {
    if (v[i].is_zero()) continue;
    F t = inv * scratch[i];
    inv = inv * v[i];
    v[i] = t;
  }
}

// The primitive 2^k-th root of unity of a field with a root of order 2^TWO_ADICITY in its params
// (k <= TWO_ADICITY): ROOT_OF_UNITY squared TWO_ADICITY - k times.
template <class F>
F two_adic_root(int k) {
  F w = F::from_mont_limbs(F::Params::ROOT_OF_UNITY);
  for (int i = k; i < F::Params::TWO_ADICITY; i++) w = w.sqr();
  return w;
}

}  // namespace cuzk
