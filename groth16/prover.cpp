// The pieces every prover backend shares: the key checks and the proof's assembly from the five raw
// MSMs (snarkjs's Groth16 prove, FORMATS.md).
#include <stdexcept>
#include <string>

#include "prover.hpp"
#include "random.hpp"

namespace cuzk {
namespace {

G1 g1_mul(const G1Affine& p, const Fr& k) { return G1::from_affine(p).mul(k.to_plain()); }
G2 g2_mul(const G2Affine& p, const Fr& k) { return G2::from_affine(p).mul(k.to_plain()); }

}  // namespace

void check_proving_key(const ZKey& zk) {
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
  need(zk.a.size(), zk.n_vars, "section 5 (A)");
  need(zk.b1.size(), zk.n_vars, "section 6 (B1)");
  need(zk.b2.size(), zk.n_vars, "section 7 (B2)");
  need(zk.c.size(), zk.n_vars - zk.n_public - 1, "section 8 (C)");
  need(zk.h.size(), zk.domain_size, "section 9 (H)");
}

void check_synthesized(const ZKey& zk, const SynthesizedView& s) {
  if (!s.w || !s.a || !s.b || !s.c) throw std::invalid_argument("synthesized vectors: a null vector");
  if (s.n_vars != zk.n_vars)
    throw std::invalid_argument("synthesized witness has " + std::to_string(s.n_vars) +
                                " values, the zkey expects nVars=" + std::to_string(zk.n_vars));
  if (s.domain_size != zk.domain_size)
    throw std::invalid_argument("synthesized a/b/c have " + std::to_string(s.domain_size) +
                                " entries, the zkey's domainSize is " + std::to_string(zk.domain_size));
}

Proof assemble_proof(const ZKey& zk, const RawMsms& m, const ProveOptions& opt) {
  Fr r = opt.r ? *opt.r : random_fr();
  Fr s = opt.s ? *opt.s : random_fr();
  // pi_a = A + alpha1 + r delta1; pi_b = B2 + beta2 + s delta2; b1 = B1 + beta1 + s delta1;
  // pi_c = C + H + s pi_a + r b1 - r s delta1.
  G1 pi_a = m.a + G1::from_affine(zk.alpha1) + g1_mul(zk.delta1, r);
  G2 pi_b = m.b2 + G2::from_affine(zk.beta2) + g2_mul(zk.delta2, s);
  G1 b1 = m.b1 + G1::from_affine(zk.beta1) + g1_mul(zk.delta1, s);
  G1 pi_c = m.c + m.h + pi_a.mul(s.to_plain()) + b1.mul(r.to_plain()) - g1_mul(zk.delta1, r * s);
  return Proof{pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
}

std::vector<Fr> public_signals(const std::vector<Fr>& witness, uint32_t n_public) {
  if (witness.size() < (size_t)n_public + 1)
    throw std::invalid_argument("witness has " + std::to_string(witness.size()) + " values, fewer than nPublic+1=" +
                                std::to_string(n_public + 1));
  return std::vector<Fr>(witness.begin() + 1, witness.begin() + 1 + n_public);
}

}  // namespace cuzk
