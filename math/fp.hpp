// Prime field in Montgomery form, one template for every modulus (Fq and Fr of BLS12-381, later BN254).
// P supplies: N (64-bit limbs), MOD, ONE (= R mod p), R2 (= R^2 mod p), INV (= -p^-1 mod 2^64), and
// requires p < 2^(64N-1) so that a+b never carries out of the top limb and CIOS needs no extra word.
#pragma once
#include "common.hpp"

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
    u64 t[N], borrow = 0;
    for (int i = 0; i < N; i++) t[i] = sbb(l[i], P::MOD[i], borrow);
    if (!borrow)
      for (int i = 0; i < N; i++) l[i] = t[i];
  }

  CUZK_HD Fp operator+(const Fp& b) const {
    Fp r;
    u64 c = 0;
    for (int i = 0; i < N; i++) r.l[i] = adc(l[i], b.l[i], c);
    r.reduce_once();
    return r;
  }
  CUZK_HD Fp operator-(const Fp& b) const {
    Fp r;
    u64 br = 0;
    for (int i = 0; i < N; i++) r.l[i] = sbb(l[i], b.l[i], br);
    if (br) {
      u64 c = 0;
      for (int i = 0; i < N; i++) r.l[i] = adc(r.l[i], P::MOD[i], c);
    }
    return r;
  }
  CUZK_HD Fp operator-() const { return zero() - *this; }
  CUZK_HD Fp dbl() const { return *this + *this; }

  // CIOS Montgomery multiplication: N^2 + N word products (2N^2+N multiplies counting m*p),
  // interleaving the reduction so the running sum stays N+2 words. The spare top bit of p
  // guarantees the result is < 2p before the final conditional subtraction.
  CUZK_HD Fp operator*(const Fp& b) const {
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

}  // namespace cuzk
