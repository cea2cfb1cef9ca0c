// Radix-2 NTT over any curve's Fr with snarkjs's roots of unity, and the H stage of the prover built
// on it.
//
// Two butterfly orders are used so that no bit-reversal is needed inside the H stage:
//   DIF (Gentleman-Sande): natural order in, bit-reversed out;
//   DIT (Cooley-Tukey):    bit-reversed in, natural order out.
// Stages whose butterfly span exceeds a cache block run as whole-array passes split over the
// threads; the remaining stages run block by block (one block per task) while the block is in cache.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "hugepages.hpp"
#include "parallel.hpp"
#include "prover.hpp"

namespace cuzk {
namespace {

constexpr int kBlockLog = 12;  // 4096 elements = 128 KiB, inside L2

// The low `bits` bits of i in reverse order.
size_t bit_reverse(size_t i, int bits) {
  uint64_t v = i;
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  v = __builtin_bswap64(v);
  return bits ? (size_t)(v >> (64 - bits)) : 0;
}

// Twiddles for one size and direction in the per-level layout: tw[len + j] = w_{2len}^j for the
// stage whose butterflies span len (j < len), so every stage reads its factors contiguously.
// The top level holds the powers of w_n; each lower level is every other entry of the one above.
template <class Fr>
HugeVec<Fr> make_twiddles(int log_n, bool inverse) {
  size_t n = size_t(1) << log_n;
  HugeVec<Fr> tw;
  resize_huge(tw, std::max<size_t>(n, 2));
  tw[0] = tw[1] = Fr::zero();  // tw[0] is never read; tw[1] is set below when n >= 2
  if (n < 2) return tw;
  Fr w = two_adic_root<Fr>(log_n);
  if (inverse) w = w.inv();
  size_t half = n / 2;
  parallel_for(half, [&](size_t b, size_t e, size_t) {
    Fr x = w.pow_u64(b);
    for (size_t j = b; j < e; j++) tw[half + j] = x, x = x * w;
  });
  for (size_t len = half / 2; len >= 1; len /= 2)
    for (size_t j = 0; j < len; j++) tw[len + j] = tw[2 * len + 2 * j];
  return tw;
}

// Tables are built once per (size, direction) and kept for the life of the process: a prover
// runs the same sizes proof after proof.
template <class Fr>
const Fr* twiddles(int log_n, bool inverse) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<HugeVec<Fr>>> cache;
  std::lock_guard<std::mutex> g(mu);
  auto& slot = cache[log_n * 2 + (inverse ? 1 : 0)];
  if (!slot) slot = std::make_unique<HugeVec<Fr>>(make_twiddles<Fr>(log_n, inverse));
  return slot->data();
}

// The coset factors of the H stage in bit-reversed order: f[j] = inc^rev(j) / n, inc the 2n-th
// root of unity. Applied between the inverse DIF and the forward DIT, it turns the bit-reversed
// coefficients (times n) of p(x) into those of p(inc x).
template <class Fr>
const Fr* coset_factors(int log_n) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<HugeVec<Fr>>> cache;
  std::lock_guard<std::mutex> g(mu);
  auto& slot = cache[log_n];
  if (!slot) {
    size_t n = size_t(1) << log_n;
    auto f = std::make_unique<HugeVec<Fr>>();
    resize_huge(*f, n);
    Fr inc = two_adic_root<Fr>(log_n + 1), n_inv = Fr::from_u64(n).inv();
    parallel_for(n, [&](size_t b, size_t e, size_t) {
      Fr x = inc.pow_u64(b) * n_inv;
      for (size_t i = b; i < e; i++) (*f)[bit_reverse(i, log_n)] = x, x = x * inc;
    });
    slot = std::move(f);
  }
  return slot->data();
}

// The butterflies of one stage (span len) over butterfly indices [b, e) of the n/2 in the array.
// DIF: (u, v) -> (u + v, (u - v) w);  DIT: (u, v) -> (u + v w, u - v w).
template <bool Dif, class Fr>
void stage(Fr* a, size_t len, const Fr* tw, size_t b, size_t e) {
  const Fr* w = tw + len;
  size_t t = b;
  while (t < e) {
    size_t s = (t / len) * 2 * len, j = t % len, stop = std::min(len, j + (e - t));
    Fr* lo = a + s;
    Fr* hi = lo + len;
    for (; j < stop; j++, t++) {
      if constexpr (Dif) {
        Fr u = lo[j], v = hi[j];
        lo[j] = u + v;
        hi[j] = (u - v) * w[j];
      } else {
        Fr u = lo[j], v = hi[j] * w[j];
        lo[j] = u + v;
        hi[j] = u - v;
      }
    }
  }
}

// Natural -> bit-reversed: the wide stages over the whole array, then each cache block alone.
template <class Fr>
void dif(Fr* a, int log_n, const Fr* tw) {
  size_t n = size_t(1) << log_n, block = size_t(1) << std::min(log_n, kBlockLog);
  size_t len = n / 2;
  for (; len >= block; len /= 2)
    parallel_for_light(n / 2, [&](size_t b, size_t e, size_t) { stage<true>(a, len, tw, b, e); });
  if (len == 0) return;
  parallel_for(n / block, [&](size_t b, size_t e, size_t) {
    for (size_t blk = b; blk < e; blk++)
      for (size_t l = len; l >= 1; l /= 2) stage<true>(a + blk * block, l, tw, 0, block / 2);
  });
}

// Bit-reversed -> natural: each cache block alone for the narrow stages, then the wide ones.
template <class Fr>
void dit(Fr* a, int log_n, const Fr* tw) {
  size_t n = size_t(1) << log_n, block = size_t(1) << std::min(log_n, kBlockLog);
  if (n < 2) return;
  parallel_for(n / block, [&](size_t b, size_t e, size_t) {
    for (size_t blk = b; blk < e; blk++)
      for (size_t l = 1; l < block; l *= 2) stage<false>(a + blk * block, l, tw, 0, block / 2);
  });
  for (size_t len = block; len < n; len *= 2)
    parallel_for_light(n / 2, [&](size_t b, size_t e, size_t) { stage<false>(a, len, tw, b, e); });
}

template <class Fr>
void bit_reverse_permute(Fr* a, int log_n) {
  parallel_for_light(size_t(1) << log_n, [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; i++) {
      size_t j = bit_reverse(i, log_n);
      if (i < j) std::swap(a[i], a[j]);
    }
  });
}

// Fr has roots of unity of order up to 2^TWO_ADICITY (2^32 for BLS12-381, 2^28 for BN254).
template <class Fr>
void check_log_n(int log_n, const char* what) {
  constexpr int max = Fr::Params::TWO_ADICITY;
  if (log_n < 0 || log_n > max)
    throw std::invalid_argument(std::string(what) + " of 2^" + std::to_string(log_n) +
                                " points is outside 2^0 .. 2^" + std::to_string(max) +
                                ": the scalar field has roots of unity of order 2^" + std::to_string(max) + " at most");
}

}  // namespace

template <class Fr>
void ntt(Fr* data, int log_n, bool inverse) {
  check_log_n<Fr>(log_n, "an NTT");
  if (log_n == 0) return;
  dif(data, log_n, twiddles<Fr>(log_n, inverse));
  bit_reverse_permute(data, log_n);
  if (inverse) {
    size_t n = size_t(1) << log_n;
    Fr n_inv = Fr::from_u64(n).inv();
    parallel_for_light(n, [&](size_t b, size_t e, size_t) {
      for (size_t i = b; i < e; i++) data[i] *= n_inv;
    });
  }
}

// Per polynomial: inverse DIF (values -> bit-reversed coefficients times n), one multiply by the
// coset factor, forward DIT (-> values on the odd coset, natural order). Then P = A'B' - C', which
// snarkjs hands to the H MSM as is: Z(x) = x^n - 1 equals -2 on that coset and the zkey's H points
// already carry the 1/Z factor.
template <class Fr>
std::vector<Fr> compute_h_coset(std::vector<Fr> a, std::vector<Fr> b, std::vector<Fr> c, int log_n) {
  // The odd coset needs a root of order 2n, so the largest domain is half the largest NTT.
  check_log_n<Fr>(log_n + 1, "the H stage's coset (twice the domain)");
  size_t n = size_t(1) << log_n;
  if (a.size() != n || b.size() != n || c.size() != n)
    throw std::invalid_argument("compute_h_coset: a, b, c must have 2^" + std::to_string(log_n) + " = " +
                                std::to_string(n) + " entries (got " + std::to_string(a.size()) + ", " +
                                std::to_string(b.size()) + ", " + std::to_string(c.size()) + ")");
  const Fr* itw = twiddles<Fr>(log_n, true);
  const Fr* ftw = twiddles<Fr>(log_n, false);
  const Fr* shift = coset_factors<Fr>(log_n);
  for (std::vector<Fr>* v : {&a, &b, &c}) {
    Fr* p = v->data();
    dif(p, log_n, itw);
    parallel_for_light(n, [&](size_t lo, size_t hi, size_t) {
      for (size_t i = lo; i < hi; i++) p[i] *= shift[i];
    });
    dit(p, log_n, ftw);
  }
  parallel_for_light(n, [&](size_t lo, size_t hi, size_t) {
    for (size_t i = lo; i < hi; i++) a[i] = a[i] * b[i] - c[i];
  });
  return a;
}

#define CUZK_CPU_NTT(C)                                   \
  template void ntt<C::Fr>(C::Fr*, int, bool);            \
  template std::vector<C::Fr> compute_h_coset<C::Fr>(std::vector<C::Fr>, std::vector<C::Fr>, std::vector<C::Fr>, int);
CUZK_CPU_NTT(Bls12_381)
CUZK_CPU_NTT(Bn254)
#undef CUZK_CPU_NTT

}  // namespace cuzk
