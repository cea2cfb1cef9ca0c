// Development-only Groth16 setup: the zkey `snarkjs groth16 setup` + one phase-2 contribution would
// give, computed straight from known toxic waste instead of from a powers-of-tau file.
//
// Every key point is (scalar) * generator, with the scalars below (n = domain size, L_j the Lagrange
// basis of the n-th roots of unity, u/v/w_s(x) = sum over the rows c of A/B/C[c][s] * L_c(x), and
// u_s extended by snarkjs's extra A rows L_{nConstraints+s} for the public signals s <= nPublic):
//   A_s  = u_s(tau) G1          B1_s = v_s(tau) G1          B2_s = v_s(tau) G2
//   IC_s = (beta u_s + alpha v_s + w_s)(tau) / gamma G1      (s <= nPublic)
//   C_s  = (beta u_s + alpha v_s + w_s)(tau) / delta G1      (s >  nPublic)
//   H_i  = L'_{2i+1}(tau) / delta G1, L' the Lagrange basis of the 2n-th roots of unity.
// snarkjs takes H_i from the ptau's 2n-domain Lagrange points at odd indices (then divides by delta
// in phase 2). That equals the odd-coset Lagrange basis times Z(tau)/Z(coset): with g = w_2n,
// g^n = -1, L'_{2i+1}(x) = (x^2n - 1)/(2n) * g w^i / (x - g w^i)
//                        = (x^n - 1) / (-2) * [(x^n + 1)/(-n) * g w^i / (x - g w^i)],
// the bracket being the Lagrange basis of the coset g<w>, and -2 = g^n - 1 the value of
// Z(x) = x^n - 1 on that coset. So sum_i P_i H_i = h(tau) Z(tau) / delta when P holds the coset
// values of A*B - C, which is why the prover never divides by Z.
#include "setup.hpp"

#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "parallel.hpp"
#include "random.hpp"

namespace cuzk {

namespace {

// SHA-256 (FIPS 180-4), only to expand a seed string into toxic waste without a crypto library.
struct Sha256 {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buf[64];
  size_t buf_len = 0;
  uint64_t total = 0;

  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void block(const uint8_t* p) {
    static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
      uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  void update(const void* data, size_t len) {
    const uint8_t* p = (const uint8_t*)data;
    total += len;
    while (len) {
      size_t k = std::min(len, 64 - buf_len);
      memcpy(buf + buf_len, p, k);
      buf_len += k, p += k, len -= k;
      if (buf_len == 64) block(buf), buf_len = 0;
    }
  }
  void digest(uint8_t out[32]) {
    uint64_t bits = total * 8;
    uint8_t pad = 0x80;
    update(&pad, 1);
    uint8_t zero = 0;
    while (buf_len != 56) update(&zero, 1);
    uint8_t len_be[8];
    for (int i = 0; i < 8; i++) len_be[i] = (uint8_t)(bits >> (56 - 8 * i));
    update(len_be, 8);
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
  }
};

// 64 bytes (big-endian integer) reduced mod r by Horner over 64-bit limbs. Reducing 512 bits onto a
// 254- or 255-bit modulus leaves a bias below 2^-256, so the result is uniform for every practical
// purpose.
template <class Fr>
Fr fr_from_wide(const uint8_t b[64]) {
  Fr two64 = Fr::from_u64(~0ull) + Fr::one();
  Fr acc = Fr::zero();
  for (int i = 0; i < 8; i++) {
    u64 limb = 0;
    for (int j = 0; j < 8; j++) limb = limb << 8 | b[8 * i + j];
    acc = acc * two64 + Fr::from_u64(limb);
  }
  return acc;
}

// acc[i] += p[i] for i < m, affine, with the m slope denominators inverted together (Montgomery's
// trick): about 6M + 1S per addition against 7M + 4S for a mixed Jacobian addition, and the result
// needs no normalisation. Infinity, doubling (3x^2/2y, a = 0) and p = -acc are handled per lane.
template <class C>
struct BatchAdder {
  using F = typename C::F;
  using Aff = Affine<C>;
  std::vector<F> den, scratch;
  std::vector<uint8_t> kind;  // 0: done, 1: add, 2: double

  void add(Aff* acc, const Aff* p, size_t m) {
    den.resize(m), scratch.resize(m), kind.resize(m);
    for (size_t i = 0; i < m; i++) {
      Aff& a = acc[i];
      kind[i] = 0;
      den[i] = F::zero();
      if (p[i].is_inf()) continue;
      if (a.is_inf()) {
        a = p[i];
      } else if (a.x != p[i].x) {
        kind[i] = 1, den[i] = p[i].x - a.x;
      } else if (a.y == p[i].y && !a.y.is_zero()) {
        kind[i] = 2, den[i] = a.y.dbl();
      } else {
        a = Aff::infinity();
      }
    }
    batch_inverse(den.data(), m, scratch.data());
    for (size_t i = 0; i < m; i++) {
      if (!kind[i]) continue;
      Aff& a = acc[i];
      F lambda;
      if (kind[i] == 1) {
        lambda = (p[i].y - a.y) * den[i];
      } else {
        F xx = a.x.sqr();
        lambda = (xx.dbl() + xx) * den[i];
      }
      F x3 = lambda.sqr() - a.x - p[i].x;  // p.x = a.x when doubling
      a.y = lambda * (a.x - x3) - a.y;
      a.x = x3;
    }
  }
};

// Fixed-base scalar multiplication k*G with signed W-bit windows: the table holds
// j * 2^(W*t) * G for j = 1..2^(W-1) and every window t, so k*G costs one addition per window
// (ceil(256/W) of them) and no doublings. Digits are recoded into [-2^(W-1), 2^(W-1)] (negating an
// affine point is free), which halves the table.
template <class C>
class FixedBase {
 public:
  using Scalar = BigInt<4>;  // plain scalars of either curve (r < 2^255)
  using Aff = Affine<C>;
  using Jac = Jacobian<C>;

  // The table is built in W-1 doubling rounds over all windows at once: with entries 1..h of every
  // window known, entries h+1..2h are entry h plus entries 1..h, windows*h independent additions
  // that share one inversion per thread. Total: windows * 2^(W-1) affine additions.
  FixedBase(const Aff& g, int w) : w_(w), windows_((256 + w - 1) / w), half_(size_t(1) << (w - 1)) {
    table_.resize((size_t)windows_ * half_);
    Jac b = Jac::from_affine(g);
    for (int t = 0; t < windows_; t++) {
      table_[t * half_] = b.to_affine();
      for (int i = 0; i < w; i++) b = b.dbl();
    }
    for (size_t h = 1; h < half_; h *= 2) {
      parallel_for((size_t)windows_ * h, [&](size_t b0, size_t b1, size_t) {
        std::vector<Aff> acc(b1 - b0), add(b1 - b0);
        for (size_t k = b0; k < b1; k++) {
          size_t t = k / h, j = k % h;
          acc[k - b0] = table_[t * half_ + h - 1];
          add[k - b0] = table_[t * half_ + j];
        }
        BatchAdder<C>().add(acc.data(), add.data(), b1 - b0);
        for (size_t k = b0; k < b1; k++) table_[(k / h) * half_ + h + k % h] = acc[k - b0];
      });
    }
  }

  // k*G for a single scalar (mixed Jacobian additions).
  Jac mul(const Scalar& k) const {
    Jac acc = Jac::infinity();
    u32 carry = 0;
    for (int t = 0; t < windows_; t++) {
      int32_t d = digit(k, t, carry);
      if (d) acc = acc.add_affine(d > 0 ? table_[t * half_ + d - 1] : -table_[t * half_ - d - 1]);
    }
    return acc;
  }

  // out[i] = k[i] * G for m scalars at once, window by window through the batched affine adder.
  template <class Fr>
  void mul_batch(const Fr* k, size_t m, Aff* out) const {
    std::vector<Scalar> plain(m);
    std::vector<u32> carry(m, 0);
    std::vector<Aff> addend(m);
    BatchAdder<C> adder;
    for (size_t i = 0; i < m; i++) plain[i] = k[i].to_plain(), out[i] = Aff::infinity();
    for (int t = 0; t < windows_; t++) {
      const Aff* row = table_.data() + t * half_;
      for (size_t i = 0; i < m; i++) {
        int32_t d = digit(plain[i], t, carry[i]);
        addend[i] = d > 0 ? row[d - 1] : d < 0 ? -row[-d - 1] : Aff::infinity();
      }
      adder.add(out, addend.data(), m);
    }
  }

  // Table window that minimises build plus use: windows * 2^(W-1) table additions plus
  // count * windows additions, all of the same batched affine kind.
  static int best_window(size_t count) {
    int best = 4;
    double best_cost = 1e300;
    for (int w = 4; w <= 16; w++) {
      double win = (256 + w - 1) / w;
      double cost = win * double(size_t(1) << (w - 1)) + double(count) * win;
      if (cost < best_cost) best_cost = cost, best = w;
    }
    return best;
  }

 private:
  // Signed digit t of k in [-2^(W-1), 2^(W-1)], consuming and producing the carry. k < r < 2^255
  // and windows * W >= 256, so the top window never carries out.
  int32_t digit(const Scalar& k, int t, u32& carry) const {
    u32 d = k.bits(t * w_, w_) + carry;  // bits() returns 0 past the top limb
    carry = 0;
    if (d > half_) {
      carry = 1;
      return (int32_t)d - (int32_t)(1u << w_);  // d = 2^W gives digit 0 with a carry
    }
    return (int32_t)d;
  }

  int w_, windows_;
  size_t half_;
  std::vector<Aff> table_;
};

// Reports (stage, done, total) from the calling thread only: parallel_for runs chunk 0 on it.
struct Progress {
  const std::function<void(const char*, size_t, size_t)>& fn;
  const char* stage;
  size_t total;
  std::atomic<size_t> done{0};
  void add(size_t k, size_t chunk) {
    size_t d = done.fetch_add(k) + k;
    if (fn && chunk == 0) fn(stage, d, total);
  }
};

// out[i] = scalars[i] * G for every i, threaded, in batches that share their inversions.
template <class C, class Fr>
void fixed_base_batch(const FixedBase<C>& fb, const std::vector<Fr>& scalars, std::vector<Affine<C>>& out,
                      Progress& prog) {
  out.resize(scalars.size());
  constexpr size_t kBatch = 1024;
  parallel_for(scalars.size(), [&](size_t b, size_t e, size_t chunk) {
    for (size_t s = b; s < e; s += kBatch) {
      size_t t = std::min(e, s + kBatch);
      fb.mul_batch(scalars.data() + s, t - s, out.data() + s);
      prog.add(t - s, chunk);
    }
  });
}
template <class C, class Fr>
void fixed_base_batch(const FixedBase<C>& fb, const std::vector<Fr>& scalars, PointArray<Affine<C>>& out,
                      Progress& prog) {
  std::vector<Affine<C>> v;
  fixed_base_batch(fb, scalars, v, prog);
  out = std::move(v);
}

// L_j(tau) for j = first + stride*i, i < count, of the Lagrange basis of the 2^log_m-th roots of
// unity: L_j(x) = (x^m - 1)/m * w^j / (x - w^j), one batched inversion per thread. When tau is
// itself a root w^j, the formula's 0/0 resolves to L_j = 1 and every other L = 0 (x^m - 1 = 0).
template <class Fr>
std::vector<Fr> lagrange_at(const Fr& tau, int log_m, uint64_t first, uint64_t stride, size_t count) {
  Fr w = two_adic_root<Fr>(log_m);
  Fr zt = tau;
  for (int i = 0; i < log_m; i++) zt = zt.sqr();
  zt = zt - Fr::one();                                     // tau^m - 1
  Fr scale = zt * Fr::from_u64(uint64_t(1) << log_m).inv();  // (tau^m - 1)/m
  Fr step = w.pow_u64(stride);
  std::vector<Fr> out(count);
  parallel_for(count, [&](size_t b, size_t e, size_t) {
    std::vector<Fr> xs(e - b), den(e - b), scratch(e - b);
    Fr x = w.pow_u64((first + stride * b) & ((uint64_t(1) << log_m) - 1));
    for (size_t i = b; i < e; i++) {
      xs[i - b] = x;
      den[i - b] = tau - x;
      x = x * step;
    }
    batch_inverse(den.data(), den.size(), scratch.data());
    for (size_t i = b; i < e; i++)
      out[i] = den[i - b].is_zero() ? Fr::one() : scale * xs[i - b] * den[i - b];
  });
  return out;
}

}  // namespace

namespace groth16 {

template <class C>
ToxicWaste<C> toxic_from_seed(const std::optional<std::string>& seed) {
  using Fr = typename C::Fr;
  // Element k (0..4 = tau, alpha, beta, gamma, delta) is the big-endian 512-bit integer
  // SHA-256(tag | len64le(seed) | seed | k | ctr32le | 0) || SHA-256(same | 1) reduced mod r; ctr
  // (from 0) skips the negligible zero outcome so that gamma and delta are invertible. Without a
  // seed, 64 bytes of OS randomness per element. Either way the key is for development only: whoever
  // knows the seed can forge proofs.
  static const char kTag[] = "cuzk dev setup toxic waste v1";
  Fr out[5];
  for (int k = 0; k < 5; k++) {
    for (uint32_t ctr = 0;; ctr++) {
      uint8_t wide[64];
      if (seed) {
        for (uint8_t half = 0; half < 2; half++) {
          Sha256 h;
          h.update(kTag, sizeof(kTag) - 1);
          uint8_t len_le[8];
          for (int i = 0; i < 8; i++) len_le[i] = (uint8_t)((uint64_t)seed->size() >> (8 * i));
          h.update(len_le, sizeof(len_le));
          h.update(seed->data(), seed->size());
          uint8_t tail[6] = {(uint8_t)k, (uint8_t)ctr, (uint8_t)(ctr >> 8), (uint8_t)(ctr >> 16),
                             (uint8_t)(ctr >> 24), half};
          h.update(tail, sizeof(tail));
          h.digest(wide + 32 * half);
        }
      } else {
        os_random(wide, sizeof(wide));
      }
      out[k] = fr_from_wide<Fr>(wide);
      if (!out[k].is_zero()) break;
    }
  }
  return {out[0], out[1], out[2], out[3], out[4]};
}

template <class C>
ZKey<C> setup_zkey(const R1cs<C>& r1cs, const ToxicWaste<C>& tw,
                   const std::function<void(const char*, size_t, size_t)>& progress) {
  using Fr = typename C::Fr;
  const uint64_t n_cons = r1cs.constraints.size();
  const uint32_t n_pub = r1cs.n_public();
  const uint32_t n_vars = r1cs.n_wires;
  if (n_vars < (uint64_t)n_pub + 1)
    throw std::invalid_argument("setup: r1cs has " + std::to_string(n_vars) + " wires but " +
                                std::to_string(n_pub) + " public signals plus the constant");
  if (tw.gamma.is_zero() || tw.delta.is_zero())
    throw std::invalid_argument("setup: gamma and delta must be non-zero");
  // snarkjs: the smallest power of two >= nConstraints + nPublic + 1 (the extra A rows of the
  // public signals live at nConstraints..nConstraints+nPublic). H needs the 2n-th root, so n is at
  // most half the largest power-of-two root of unity: 2^31 for BLS12-381, 2^27 for BN254.
  int log_n = 0;
  while ((uint64_t(1) << log_n) < n_cons + n_pub + 1) log_n++;
  constexpr int max_log = C::FrParams::TWO_ADICITY - 1;
  if (log_n > max_log)
    throw std::invalid_argument("setup: the circuit needs a domain of 2^" + std::to_string(log_n) + " rows; " +
                                C::display_name + " allows 2^" + std::to_string(max_log) + " at most");
  const uint64_t n = uint64_t(1) << log_n;

  for (uint64_t c = 0; c < n_cons; c++) {
    const Constraint<C>& k = r1cs.constraints[c];
    for (const auto* lc : {&k.a, &k.b, &k.c})
      for (const LinearTerm<C>& t : *lc)
        if (t.wire >= n_vars)
          throw std::invalid_argument("setup: constraint " + std::to_string(c) + " uses wire " +
                                      std::to_string(t.wire) + " but the r1cs has " + std::to_string(n_vars));
  }

  ZKey<C> zk;
  zk.n_vars = n_vars;
  zk.n_public = n_pub;
  zk.domain_size = (uint32_t)n;
  zk.log_domain = log_n;

  // Section 4: per constraint its A terms then its B terms, in r1cs order, then one A row per
  // public signal s (constant included) at row nConstraints + s with coefficient 1. Filled in
  // parallel from per-chunk offsets.
  {
    size_t chunks = std::max<size_t>(1, std::min<size_t>(thread_count(), n_cons / 1024 + 1));
    std::vector<size_t> offs(chunks + 1, 0);
    parallel_for(n_cons, [&](size_t b, size_t e, size_t ch) {
      size_t cnt = 0;
      for (size_t c = b; c < e; c++) cnt += r1cs.constraints[c].a.size() + r1cs.constraints[c].b.size();
      offs[ch + 1] = cnt;
    }, chunks);
    for (size_t i = 0; i < chunks; i++) offs[i + 1] += offs[i];
    zk.coefs.resize(offs[chunks] + n_pub + 1);
    parallel_for(n_cons, [&](size_t b, size_t e, size_t ch) {
      ZKeyCoef<C>* out = zk.coefs.data() + offs[ch];
      for (size_t c = b; c < e; c++) {
        for (const LinearTerm<C>& t : r1cs.constraints[c].a) *out++ = {0, (uint32_t)c, t.wire, t.coeff};
        for (const LinearTerm<C>& t : r1cs.constraints[c].b) *out++ = {1, (uint32_t)c, t.wire, t.coeff};
      }
    }, chunks);
    for (uint32_t s = 0; s <= n_pub; s++) zk.coefs[offs[chunks] + s] = {0, (uint32_t)(n_cons + s), s, Fr::one()};
  }

  if (progress) progress("evaluating the QAP at tau", 0, 1);
  std::vector<Fr> lag = lagrange_at(tw.tau, log_n, 0, 1, n);

  // u, v, w at tau. Threads own disjoint wire ranges and each scans every constraint, which avoids
  // write conflicts without per-thread copies of the nVars-long arrays; capped at 8 scanners since
  // the scan, not the multiplications, then dominates.
  std::vector<Fr> u(n_vars, Fr::zero()), v(n_vars, Fr::zero()), w(n_vars, Fr::zero());
  parallel_for(n_vars, [&](size_t lo, size_t hi, size_t) {
    for (uint64_t c = 0; c < n_cons; c++) {
      const Constraint<C>& k = r1cs.constraints[c];
      const Fr& l = lag[c];
      for (const LinearTerm<C>& t : k.a)
        if (t.wire >= lo && t.wire < hi) u[t.wire] += t.coeff * l;
      for (const LinearTerm<C>& t : k.b)
        if (t.wire >= lo && t.wire < hi) v[t.wire] += t.coeff * l;
      for (const LinearTerm<C>& t : k.c)
        if (t.wire >= lo && t.wire < hi) w[t.wire] += t.coeff * l;
    }
  }, std::min<size_t>(thread_count(), 8));
  for (uint32_t s = 0; s <= n_pub; s++) u[s] += lag[n_cons + s];
  std::vector<Fr>().swap(lag);

  // IC and C scalars: (beta u + alpha v + w) / gamma or / delta.
  const Fr gamma_inv = tw.gamma.inv(), delta_inv = tw.delta.inv();
  std::vector<Fr> ic_s(n_pub + 1), c_s(n_vars - n_pub - 1);
  parallel_for(n_vars, [&](size_t b, size_t e, size_t) {
    for (size_t s = b; s < e; s++) {
      Fr t = tw.beta * u[s] + tw.alpha * v[s] + w[s];
      if (s <= n_pub)
        ic_s[s] = t * gamma_inv;
      else
        c_s[s - n_pub - 1] = t * delta_inv;
    }
  });
  std::vector<Fr>().swap(w);

  const typename C::G1Affine g1 = C::g1_generator();
  const typename C::G2Affine g2 = C::g2_generator();
  size_t n_g1 = (size_t)n_vars * 3 + n;
  using FB1 = FixedBase<typename C::G1Curve>;
  using FB2 = FixedBase<typename C::G2Curve>;
  FB1 fb1(g1, FB1::best_window(n_g1));
  FB2 fb2(g2, FB2::best_window(n_vars));

  auto g1mul = [&](const Fr& k) { return fb1.mul(k.to_plain()).to_affine(); };
  auto g2mul = [&](const Fr& k) { return fb2.mul(k.to_plain()).to_affine(); };
  zk.alpha1 = g1mul(tw.alpha);
  zk.beta1 = g1mul(tw.beta);
  zk.beta2 = g2mul(tw.beta);
  zk.gamma2 = g2mul(tw.gamma);
  zk.delta1 = g1mul(tw.delta);
  zk.delta2 = g2mul(tw.delta);

  {
    Progress p{progress, "G1 points", n_g1};
    fixed_base_batch(fb1, ic_s, zk.ic, p);
    fixed_base_batch(fb1, u, zk.a, p);
    std::vector<Fr>().swap(u);
    fixed_base_batch(fb1, v, zk.b1, p);
    fixed_base_batch(fb1, c_s, zk.c, p);
    std::vector<Fr>().swap(c_s);
    // H_i = L'_{2i+1}(tau) / delta over the 2n-th roots (see the top of this file).
    std::vector<Fr> h_s = lagrange_at(tw.tau, log_n + 1, 1, 2, n);
    parallel_for(n, [&](size_t b, size_t e, size_t) {
      for (size_t i = b; i < e; i++) h_s[i] = h_s[i] * delta_inv;
    });
    fixed_base_batch(fb1, h_s, zk.h, p);
  }
  {
    Progress p{progress, "G2 points", n_vars};
    fixed_base_batch(fb2, v, zk.b2, p);
  }

  // Section 10 of a key that no ceremony touched: a 64-byte circuit hash (left zero: nothing
  // checks it when proving or verifying) and a contribution count of 0.
  zk.section10.assign(68, 0);
  return zk;
}

#define CUZK_SETUP(C)                                                                     \
  template ToxicWaste<C> toxic_from_seed<C>(const std::optional<std::string>&);           \
  template ZKey<C> setup_zkey<C>(const R1cs<C>&, const ToxicWaste<C>&,                    \
                                 const std::function<void(const char*, size_t, size_t)>&);
CUZK_SETUP(Bls12_381)
CUZK_SETUP(Bn254)
#undef CUZK_SETUP

}  // namespace groth16
}  // namespace cuzk
