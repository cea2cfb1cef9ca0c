// Curve-generic CPU references for the device and emulation tests, written directly on math/'s
// templates (no groth16/ code), so that every curve of math/curves.hpp is checked against the same
// definitions: MSM by double-and-add and by plain buckets, the NTT by its O(n^2) definition and by
// an iterative radix-2 transform, the coset transforms and the H stage.
#pragma once
#include <random>
#include <vector>

#include "math/curves.hpp"

namespace cuzk {
namespace test {

// A uniform element of F (rejection from random limbs below 2^(64N - 1)).
template <class F>
F random_scalar(std::mt19937_64& rng) {
  for (;;) {
    u64 l[F::N];
    for (auto& x : l) x = rng();
    l[F::N - 1] >>= 1;
    if (F::is_canonical(l)) return F::from_mont_limbs(l);
  }
}

// n points: a chain of random steps from random multiples of the generator (distinct in general),
// with infinities, repeats and negations mixed in.
template <class HF, class HC>
std::vector<Affine<HC>> random_points_of(std::mt19937_64& rng, size_t n, const Affine<HC>& gen) {
  std::vector<Jacobian<HC>> steps;
  for (int i = 0; i < 8; i++) steps.push_back(Jacobian<HC>::from_affine(gen).mul(random_scalar<HF>(rng).to_plain()));
  std::vector<Jacobian<HC>> pts(n);
  Jacobian<HC> cur = steps[0];
  for (auto& p : pts) p = cur = cur + steps[rng() % 8];
  std::vector<Affine<HC>> aff = batch_to_affine(pts);
  for (size_t i = 0; i < n; i++) {
    if (i % 17 == 5) aff[i] = Affine<HC>::infinity();
    if (i % 23 == 7 && i > 0) aff[i] = aff[i - 1];
    if (i % 29 == 11 && i > 0) aff[i] = -aff[i - 1];
  }
  return aff;
}

// Scalars that stress the digit recoding: zero, one, -1, small values and their negations, the
// values around (r-1)/2 where the fold flips, and uniform ones.
template <class F>
std::vector<F> edge_scalars(std::mt19937_64& rng, size_t n) {
  const F half = (F::zero() - F::one()) * F::from_u64(2).inv();  // (r-1)/2
  std::vector<F> s(n);
  for (auto& x : s) {
    switch (rng() % 10) {
      case 0: x = F::zero(); break;
      case 1: x = F::one(); break;
      case 2: x = -F::one(); break;
      case 3: x = F::from_u64(rng() % 70000); break;
      case 4: x = -F::from_u64(rng() % 70000); break;
      case 5: x = half + F::from_u64(rng() % 3) - F::one(); break;
      default: x = random_scalar<F>(rng);
    }
  }
  return s;
}

// sum k_i P_i by its definition: double-and-add per point.
template <class HC, class F>
Jacobian<HC> naive_msm(const std::vector<Affine<HC>>& p, const std::vector<F>& k) {
  Jacobian<HC> acc = Jacobian<HC>::infinity();
  for (size_t i = 0; i < p.size(); i++) acc = acc + Jacobian<HC>::from_affine(p[i]).mul(k[i].to_plain());
  return acc;
}

// The same sum by unsigned windows of c bits and running bucket sums, for sizes where the
// definition is too slow; checked against naive_msm by the emulation tests.
template <class HC, class F>
Jacobian<HC> bucket_msm(const std::vector<Affine<HC>>& p, const std::vector<F>& k, int c = 12) {
  std::vector<typename F::Repr> plain(k.size());
  for (size_t i = 0; i < k.size(); i++) plain[i] = k[i].to_plain();
  const int bits = 64 * F::N;
  Jacobian<HC> acc = Jacobian<HC>::infinity();
  for (int w = (bits + c - 1) / c - 1; w >= 0; w--) {
    for (int i = 0; i < c; i++) acc = acc.dbl();
    const int width = std::min(c, bits - w * c);
    std::vector<Jacobian<HC>> b(size_t(1) << width, Jacobian<HC>::infinity());
    for (size_t i = 0; i < p.size(); i++) {
      u32 d = plain[i].bits(w * c, width);
      if (d) b[d] = b[d].add_affine(p[i]);
    }
    Jacobian<HC> run = Jacobian<HC>::infinity(), sum = Jacobian<HC>::infinity();
    for (size_t d = b.size() - 1; d >= 1; d--) {
      run = run + b[d];
      sum = sum + run;
    }
    acc = acc + sum;
  }
  return acc;
}

// y_j = sum_i x_i w^(ij) (inverse: w^-1 and a factor 1/n), w = the 2^k-th root of F: O(n^2).
template <class F>
std::vector<F> naive_dft(const std::vector<F>& x, int k, bool inverse) {
  const size_t n = x.size();
  F w = two_adic_root<F>(k);
  if (inverse) w = w.inv();
  std::vector<F> y(n, F::zero());
  F wj = F::one();
  for (size_t j = 0; j < n; j++, wj = wj * w) {
    F wij = F::one();
    for (size_t i = 0; i < n; i++, wij = wij * wj) y[j] = y[j] + x[i] * wij;
  }
  if (inverse) {
    F ninv = F::from_u64(n).inv();
    for (auto& e : y) e = e * ninv;
  }
  return y;
}

// The same transform, iterative radix-2 (bit reversal, then Cooley-Tukey stages): O(n log n).
template <class F>
void radix2_ntt(std::vector<F>& x, int k, bool inverse) {
  const size_t n = x.size();
  for (size_t i = 0, j = 0; i < n; i++) {
    if (i < j) std::swap(x[i], x[j]);
    for (size_t bit = n >> 1; bit; bit >>= 1) {
      j ^= bit;
      if (j & bit) break;
    }
  }
  for (int s = 1; s <= k; s++) {
    const size_t m = size_t(1) << s;
    F wm = two_adic_root<F>(s);
    if (inverse) wm = wm.inv();
    for (size_t b = 0; b < n; b += m) {
      F w = F::one();
      for (size_t j = 0; j < m / 2; j++, w = w * wm) {
        F t = x[b + j + m / 2] * w, u = x[b + j];
        x[b + j] = u + t;
        x[b + j + m / 2] = u - t;
      }
    }
  }
  if (inverse) {
    F ninv = F::from_u64(n).inv();
    for (auto& e : x) e = e * ninv;
  }
}

// The natural-order transforms on the odd coset g<w>, g = the 2^(k+1)-th root (NttEngine's coset):
// forward transforms x_i g^i, inverse multiplies the inverse transform's output by g^-i.
template <class F>
std::vector<F> coset_ntt_ref(std::vector<F> x, int k, bool inverse) {
  F g = two_adic_root<F>(k + 1);
  if (inverse) {
    radix2_ntt(x, k, true);
    g = g.inv();
  }
  F gi = F::one();
  for (auto& e : x) e = e * gi, gi = gi * g;
  if (!inverse) radix2_ntt(x, k, false);
  return x;
}

// NttEngine's four natural-order transforms: plain or on the odd coset, forward or inverse.
template <class F>
std::vector<F> ntt_ref(std::vector<F> x, int k, bool inverse, bool coset) {
  if (coset) return coset_ntt_ref(std::move(x), k, inverse);
  radix2_ntt(x, k, inverse);
  return x;
}

// The H stage: A'B' - C' with X' the odd-coset values of the polynomial interpolating x.
template <class F>
std::vector<F> h_coset_ref(std::vector<F> a, std::vector<F> b, std::vector<F> c, int k) {
  for (auto* v : {&a, &b, &c}) {
    radix2_ntt(*v, k, true);
    *v = coset_ntt_ref(*v, k, false);
  }
  for (size_t i = 0; i < a.size(); i++) a[i] = a[i] * b[i] - c[i];
  return a;
}

}  // namespace test
}  // namespace cuzk
