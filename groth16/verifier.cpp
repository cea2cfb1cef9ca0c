#include "verifier.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include "parallel.hpp"
#include "random.hpp"

namespace cuzk::groth16 {

namespace {

template <class C>
void check_g1(const typename C::G1Affine& p, const char* name) {
  if (!p.on_curve()) throw std::invalid_argument(std::string("proof point ") + name + " is not on the curve");
  if (!Pairing<C>::g1_in_subgroup(p))
    throw std::invalid_argument(std::string("proof point ") + name + " is not in the prime-order subgroup");
}

template <class C>
void check_g2(const typename C::G2Affine& p, const char* name) {
  if (!p.on_curve()) throw std::invalid_argument(std::string("proof point ") + name + " is not on the curve");
  if (!Pairing<C>::g2_in_subgroup(p))
    throw std::invalid_argument(std::string("proof point ") + name + " is not in the prime-order subgroup");
}

template <class C>
void check_ic(const VerificationKey<C>& vk) {
  if (vk.ic.size() != (size_t)vk.n_public + 1)
    throw std::invalid_argument("verify: verification key has " + std::to_string(vk.ic.size()) +
                                " IC points, expected nPublic + 1 = " + std::to_string(vk.n_public + 1));
}

// The checks verify_proof makes before any pairing; throws std::invalid_argument naming the fault.
template <class C>
void check_well_formed(const VerificationKey<C>& vk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof) {
  if (pub.size() != vk.n_public)
    throw std::invalid_argument("verify: expected " + std::to_string(vk.n_public) + " public signals, got " +
                                std::to_string(pub.size()));
  check_ic(vk);
  check_g1<C>(proof.a, "pi_a");
  check_g2<C>(proof.b, "pi_b");
  check_g1<C>(proof.c, "pi_c");
}

template <class C>
bool well_formed(const VerificationKey<C>& vk, const ProofRef<C>& p) {
  try {
    check_well_formed(vk, *p.pub, *p.proof);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// sum_i k_i P_i over affine points: math's linear_combination (Straus over width-5 NAFs, one doubling
// chain for every term). Public data only (not constant time).
template <class Cv, int M>
Jacobian<Cv> linear_combination(const Affine<Cv>* p, const BigInt<M>* k, size_t n) {
  std::vector<Jacobian<Cv>> j(n);
  for (size_t i = 0; i < n; i++) j[i] = Jacobian<Cv>::from_affine(p[i]);
  return cuzk::linear_combination(j.data(), k, n);
}

// vk_x = IC[0] + sum_j s_j IC[j+1] for the Fr scalars s (s_0 weighs IC[0]).
template <class C>
typename C::G1 ic_combination(const VerificationKey<C>& vk, const std::vector<typename C::Fr>& s) {
  std::vector<typename C::Fr::Repr> k(s.size());
  for (size_t j = 0; j < s.size(); j++) k[j] = s[j].to_plain();
  return linear_combination(vk.ic.data(), k.data(), k.size());
}

// A 192-bit integer: the sum of up to 2^64 weights of 128 bits, never reduced mod r (fewer bits
// than r to exponentiate by).
using WeightSum = BigInt<3>;

void add_weight(WeightSum& s, const BigInt<2>& w) {
  u64 c = 0;
  s.l[0] = adc(s.l[0], w.l[0], c);
  s.l[1] = adc(s.l[1], w.l[1], c);
  s.l[2] += c;
}

// e(alpha, beta)^e by a fixed 4-bit window over the cached powers 0..15: the base is a reduced
// pairing value, in the cyclotomic subgroup, where the cheaper cyclotomic squaring applies.
template <class C>
typename Pairing<C>::Fq12 alphabeta_pow(const PreparedKey<C>& pk, const WeightSum& e) {
  using Fq12 = typename Pairing<C>::Fq12;
  int top = (e.num_bits() + 3) / 4;
  Fq12 r = Fq12::one();
  for (int w = top - 1; w >= 0; w--) {
    if (w != top - 1)
      for (int i = 0; i < 4; i++) r = r.cyclotomic_sqr();
    u32 d = e.bits(4 * w, 4);
    if (d) r = r * pk.alphabeta_pow[d];
  }
  return r;
}

// The weighted batch equation over a set of well-formed proofs, the weighted A_i computed once for
// every subset that bisection checks.
template <class C>
struct Batch {
  using Fr = typename C::Fr;
  using G1 = typename C::G1;
  using G1Affine = typename C::G1Affine;
  using G2Affine = typename C::G2Affine;
  using Fq12 = typename Pairing<C>::Fq12;

  const PreparedKey<C>& pk;
  std::vector<ProofRef<C>> items;
  std::vector<BigInt<2>> w;  // the weights
  std::vector<Fr> wf;        // the same in Fr
  std::vector<G1Affine> wa;  // r_i A_i

  Batch(const PreparedKey<C>& k, std::vector<ProofRef<C>> it, std::vector<BigInt<2>> weights)
      : pk(k), items(std::move(it)), w(std::move(weights)) {
    wf.resize(items.size());
    std::vector<G1> a(items.size());
    for (size_t i = 0; i < items.size(); i++) {
      typename Fr::Repr r{};
      r.l[0] = w[i].l[0], r.l[1] = w[i].l[1];
      wf[i] = Fr::from_plain(r);
      const bool one = w[i].l[0] == 1 && w[i].l[1] == 0;
      a[i] = one ? G1::from_affine(items[i].proof->a) : linear_combination(&items[i].proof->a, &w[i], 1);
    }
    wa = batch_to_affine(a);
  }

  // prod_{i in S} e(r_i A_i, B_i) e(-sum r_i vk_x_i, gamma) e(-sum r_i C_i, delta) = e(alpha, beta)^(sum r_i),
  // for S = idx[0..m). The public-signal terms fold into one combination of the IC points:
  // sum_i r_i vk_x_i = (sum_i r_i) IC[0] + sum_j (sum_i r_i pub_ij) IC[j+1].
  bool holds(const size_t* idx, size_t m) const {
    const VerificationKey<C>& vk = pk.vk;
    std::vector<Fr> s(vk.n_public + 1, Fr::zero());
    WeightSum total{};
    std::vector<G1Affine> cs(m);
    std::vector<BigInt<2>> cw(m);
    std::vector<G1Affine> ps(m + 2);
    std::vector<G2Affine> qs(m + 2);
    for (size_t k = 0; k < m; k++) {
      const size_t i = idx[k];
      const std::vector<Fr>& pub = *items[i].pub;
      s[0] += wf[i];
      for (size_t j = 0; j < pub.size(); j++) s[j + 1] += wf[i] * pub[j];
      add_weight(total, w[i]);
      cs[k] = items[i].proof->c, cw[k] = w[i];
      ps[k] = wa[i], qs[k] = items[i].proof->b;
    }
    std::vector<G1> sums = {-ic_combination(vk, s), -linear_combination(cs.data(), cw.data(), m)};
    std::vector<G1Affine> aff = batch_to_affine(sums);
    ps[m] = aff[0], qs[m] = vk.gamma2;
    ps[m + 1] = aff[1], qs[m + 1] = vk.delta2;
    Fq12 f = Pairing<C>::final_exponentiation(Pairing<C>::multi_miller_loop(ps.data(), qs.data(), m + 2));
    return f == alphabeta_pow(pk, total);
  }

  // Verdicts for idx[0..m); known_bad: the set is known to hold an invalid proof (its parent
  // failed and its sibling held), so it is split without being checked as a whole.
  void bisect(const size_t* idx, size_t m, bool known_bad, std::vector<bool>& ok) const {
    if (m == 0) return;
    if (!known_bad && holds(idx, m)) {
      for (size_t k = 0; k < m; k++) ok[idx[k]] = true;
      return;
    }
    if (m == 1) return;  // stays false
    const size_t h = m / 2;
    if (holds(idx, h)) {
      for (size_t k = 0; k < h; k++) ok[idx[k]] = true;
      bisect(idx + h, m - h, true, ok);
    } else {
      bisect(idx, h, true, ok);
      bisect(idx + h, m - h, false, ok);
    }
  }
};

// 128-bit weights from the CSPRNG, none zero; the first is 1 (see verifier.hpp).
std::vector<BigInt<2>> random_weights(size_t n) {
  std::vector<BigInt<2>> w(n);
  if (n == 0) return w;
  os_random(w.data(), n * sizeof(BigInt<2>));
  w[0] = BigInt<2>{{1, 0}};
  for (auto& x : w)
    while (x.is_zero()) os_random(&x, sizeof x);
  return w;
}

}  // namespace

// Groth16 check in snarkjs's form: with vk_x = IC[0] + sum_i pub[i] IC[i+1],
//   e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) = 1,
// as one multi-Miller loop over four pairs and a single final exponentiation.
template <class C>
bool verify_proof(const VerificationKey<C>& vk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof) {
  check_well_formed(vk, pub, proof);
  std::vector<typename C::Fr> s(pub.size() + 1);
  s[0] = C::Fr::one();
  std::copy(pub.begin(), pub.end(), s.begin() + 1);
  typename C::G1Affine vk_x = ic_combination(vk, s).to_affine();

  typename C::G1Affine ps[4] = {-proof.a, vk.alpha1, vk_x, proof.c};
  typename C::G2Affine qs[4] = {proof.b, vk.beta2, vk.gamma2, vk.delta2};
  return Pairing<C>::product_is_one(ps, qs, 4);
}

template <class C>
PreparedKey<C>::PreparedKey(VerificationKey<C> key) : vk(std::move(key)) {
  check_ic(vk);
  alphabeta_pow[0] = Fq12::one();
  alphabeta_pow[1] = Pairing<C>::pairing(vk.alpha1, vk.beta2);
  for (size_t d = 2; d < alphabeta_pow.size(); d++) alphabeta_pow[d] = alphabeta_pow[d - 1] * alphabeta_pow[1];
}

// e(A, B) e(-vk_x, gamma) e(-C, delta) = e(alpha, beta), the first factor but one from the public
// signals ahead of the proof.
template <class C>
bool verify_proof(const PreparedKey<C>& pk, const std::vector<typename C::Fr>& pub, const Proof<C>& proof) {
  return verify_proof(pk, prepare_public(pk, pub), proof);
}

template <class C>
PublicPart<C> prepare_public(const PreparedKey<C>& pk, const std::vector<typename C::Fr>& pub) {
  const VerificationKey<C>& vk = pk.vk;
  if (pub.size() != vk.n_public)
    throw std::invalid_argument("verify: expected " + std::to_string(vk.n_public) + " public signals, got " +
                                std::to_string(pub.size()));
  check_ic(vk);
  std::vector<typename C::Fr> s(pub.size() + 1);
  s[0] = C::Fr::one();
  std::copy(pub.begin(), pub.end(), s.begin() + 1);
  const typename C::G1Affine vk_x = (-ic_combination(vk, s)).to_affine();
  return {Pairing<C>::multi_miller_loop(&vk_x, &vk.gamma2, 1)};
}

template <class C>
bool verify_proof(const PreparedKey<C>& pk, const PublicPart<C>& pub, const Proof<C>& proof) {
  using Fq12 = typename Pairing<C>::Fq12;
  // Two halves of about the same cost: A and B's checks with e(A, B), C's with e(-C, delta).
  // A fault is reported as a sequential check would: pi_a's, then pi_b's, then pi_c's.
  Fq12 f[2];
  std::exception_ptr fault[2];
  parallel_for(
      2,
      [&](size_t b, size_t, size_t) {
        try {
          if (b == 0) {
            check_g1<C>(proof.a, "pi_a");
            check_g2<C>(proof.b, "pi_b");
            f[0] = Pairing<C>::multi_miller_loop(&proof.a, &proof.b, 1);
          } else {
            check_g1<C>(proof.c, "pi_c");
            const typename C::G1Affine neg_c = -proof.c;
            f[1] = Pairing<C>::multi_miller_loop(&neg_c, &pk.vk.delta2, 1);
          }
        } catch (...) {
          fault[b] = std::current_exception();
        }
      },
      2);
  for (const std::exception_ptr& e : fault)
    if (e) std::rethrow_exception(e);
  return Pairing<C>::final_exponentiation(f[0] * f[1] * pub.ic_gamma) == pk.alphabeta();
}

template <class C>
std::vector<bool> verify_batch(const PreparedKey<C>& pk, const std::vector<ProofRef<C>>& proofs) {
  std::vector<bool> ok(proofs.size(), false);
  std::vector<ProofRef<C>> good;
  std::vector<size_t> where;  // good[k] is proofs[where[k]]
  for (size_t i = 0; i < proofs.size(); i++)
    if (well_formed(pk.vk, proofs[i])) good.push_back(proofs[i]), where.push_back(i);
  if (good.empty()) return ok;
  Batch<C> b(pk, std::move(good), random_weights(where.size()));
  std::vector<size_t> idx(where.size());
  for (size_t k = 0; k < idx.size(); k++) idx[k] = k;
  std::vector<bool> good_ok(where.size(), false);
  b.bisect(idx.data(), idx.size(), false, good_ok);
  for (size_t k = 0; k < where.size(); k++) ok[where[k]] = good_ok[k];
  return ok;
}

template <class C>
bool batch_equation_holds(const PreparedKey<C>& pk, const std::vector<ProofRef<C>>& proofs,
                          const std::vector<BigInt<2>>& weights) {
  if (weights.size() != proofs.size()) throw std::invalid_argument("batch_equation_holds: one weight per proof");
  for (const auto& x : weights)
    if (x.is_zero()) throw std::invalid_argument("batch_equation_holds: a weight is zero");
  for (const auto& p : proofs)
    if (!well_formed(pk.vk, p)) return false;
  Batch<C> b(pk, proofs, weights);
  std::vector<size_t> idx(proofs.size());
  for (size_t k = 0; k < idx.size(); k++) idx[k] = k;
  return b.holds(idx.data(), idx.size());
}

#define CUZK_VERIFIER_INSTANTIATE(C)                                                                             \
  template bool verify_proof<C>(const VerificationKey<C>&, const std::vector<C::Fr>&, const Proof<C>&);         \
  template struct PreparedKey<C>;                                                                                \
  template bool verify_proof<C>(const PreparedKey<C>&, const std::vector<C::Fr>&, const Proof<C>&);             \
  template PublicPart<C> prepare_public<C>(const PreparedKey<C>&, const std::vector<C::Fr>&);                   \
  template bool verify_proof<C>(const PreparedKey<C>&, const PublicPart<C>&, const Proof<C>&);                  \
  template std::vector<bool> verify_batch<C>(const PreparedKey<C>&, const std::vector<ProofRef<C>>&);           \
  template bool batch_equation_holds<C>(const PreparedKey<C>&, const std::vector<ProofRef<C>>&,                  \
                                        const std::vector<BigInt<2>>&);
CUZK_VERIFIER_INSTANTIATE(Bls12_381)
CUZK_VERIFIER_INSTANTIATE(Bn254)

}  // namespace cuzk::groth16
