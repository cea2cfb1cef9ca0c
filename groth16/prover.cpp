// The pieces every prover backend shares: the key checks and the proof's assembly from the five raw
// MSMs (snarkjs's Groth16 prove, FORMATS.md).
#include "prover.hpp"

#include <stdexcept>
#include <string>

#include "random.hpp"

namespace cuzk::groth16 {

template <class C>
void check_proving_key(const ZKey<C>& zk) {
  auto need = [](size_t got, size_t want, const char* what) {
    if (got != want)
      throw std::invalid_argument(std::string("zkey ") + what + " has " + std::to_string(got) + " points, expected " +
                                  std::to_string(want));
  };
  if (zk.n_vars < zk.n_public + 1)
    throw std::invalid_argument("zkey nVars=" + std::to_string(zk.n_vars) + " is below nPublic+1=" +
                                std::to_string(zk.n_public + 1));
  if (zk.log_domain < 0 || zk.log_domain > 30 || zk.domain_size != (1u << zk.log_domain))
    throw std::invalid_argument("zkey domainSize=" + std::to_string(zk.domain_size) + " is not 2^" +
                                std::to_string(zk.log_domain));
  // The H stage evaluates on the odd coset of the domain, which takes a root of unity of order 2n.
  constexpr int max_log = C::FrParams::TWO_ADICITY - 1;
  if (zk.log_domain > max_log)
    throw std::invalid_argument("zkey domainSize=2^" + std::to_string(zk.log_domain) + " is above 2^" +
                                std::to_string(max_log) + ", the largest circuit " + C::display_name +
                                " can prove (its scalar field has roots of unity of order 2^" +
                                std::to_string(max_log + 1) + " at most)");
  need(zk.a.size(), zk.n_vars, "section 5 (A)");
  need(zk.b1.size(), zk.n_vars, "section 6 (B1)");
  need(zk.b2.size(), zk.n_vars, "section 7 (B2)");
  need(zk.c.size(), zk.n_vars - zk.n_public - 1, "section 8 (C)");
  need(zk.h.size(), zk.domain_size, "section 9 (H)");
}

template <class C>
void check_synthesized(const ZKey<C>& zk, const SynthesizedView<C>& s) {
  if (!s.w || (!s.a || !s.b || !s.c) != (!s.a && !s.b && !s.c))
    throw std::invalid_argument("synthesized vectors: a null vector (w, or some but not all of a, b, c)");
  if (s.n_vars != zk.n_vars)
    throw std::invalid_argument("synthesized witness has " + std::to_string(s.n_vars) +
                                " values, the zkey expects nVars=" + std::to_string(zk.n_vars));
  if (s.domain_size != zk.domain_size)
    throw std::invalid_argument("synthesized a/b/c have " + std::to_string(s.domain_size) +
                                " entries, the zkey's domainSize is " + std::to_string(zk.domain_size));
}

template <class C>
Blinding<C> draw_blinding(const ZKey<C>& zk, const ProveOptions<C>& opt) {
  using G1 = typename C::G1;
  using G2 = typename C::G2;
  Blinding<C> b;
  b.r = opt.r ? *opt.r : random_fr<typename C::Fr>();
  b.s = opt.s ? *opt.s : random_fr<typename C::Fr>();
  // pi_a = A + alpha1 + r delta1; pi_b = B2 + beta2 + s delta2; with b1 = B1 + beta1 + s delta1,
  // pi_c = C + H + s pi_a + r b1 - r s delta1 = C + H + s A + r B1 + (s alpha1 + r beta1 + r s delta1).
  // The bracket is one combination of three terms sharing a doubling chain.
  const G1 alpha1 = G1::from_affine(zk.alpha1), beta1 = G1::from_affine(zk.beta1);
  const G1 delta1 = G1::from_affine(zk.delta1);
  const G2 delta2 = G2::from_affine(zk.delta2);
  const auto rk = b.r.to_plain(), sk = b.s.to_plain();
  b.a = alpha1 + linear_combination(&delta1, &rk, 1);
  b.b2 = G2::from_affine(zk.beta2) + linear_combination(&delta2, &sk, 1);
  const G1 terms[3] = {alpha1, beta1, delta1};
  const decltype(rk) scalars[3] = {sk, rk, (b.r * b.s).to_plain()};
  b.c = linear_combination(terms, scalars, 3);
  return b;
}

template <class C>
Proof<C> assemble_proof(const RawMsms<C>& m, const Blinding<C>& b) {
  using G1 = typename C::G1;
  const G1 terms[2] = {m.a, m.b1};
  const decltype(b.r.to_plain()) scalars[2] = {b.s.to_plain(), b.r.to_plain()};
  const G1 pi_a = m.a + b.a;
  const typename C::G2 pi_b = m.b2 + b.b2;
  const G1 pi_c = m.c + m.h + linear_combination(terms, scalars, 2) + b.c;
  return Proof<C>{pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
}

#define CUZK_PROVER_COMMON(C)                                                                    \
  template void check_proving_key<C>(const ZKey<C>&);                                            \
  template void check_synthesized<C>(const ZKey<C>&, const SynthesizedView<C>&);                 \
  template Blinding<C> draw_blinding<C>(const ZKey<C>&, const ProveOptions<C>&);                \
  template Proof<C> assemble_proof<C>(const RawMsms<C>&, const Blinding<C>&);
CUZK_PROVER_COMMON(Bls12_381)
CUZK_PROVER_COMMON(Bn254)
#undef CUZK_PROVER_COMMON

}  // namespace cuzk::groth16
