// Prime-order subgroup membership for G1 and G2 of BLS12-381. Points decoded from untrusted bytes
// (compressed proofs, verifier inputs) can lie on the curve but outside the r-torsion, where the
// pairing equation means nothing; these checks reject them.
#pragma once
#include "pairing.hpp"

namespace cuzk {

// Reference check by definition: [r]P = O. About 255 doublings; used by tests to cross-check the
// endomorphism tests below, and usable for any curve.
template <class C, int M>
CUZK_HD bool in_subgroup_by_order(const Affine<C>& p, const BigInt<M>& order) {
  return Jacobian<C>::from_affine(p).mul(order).is_inf();
}

namespace bls12_381 {

// [x]P for the (negative) BLS parameter x: 63 doublings and 5 additions.
template <class C>
CUZK_HD Jacobian<C> mul_by_x(const Jacobian<C>& p) {
  BigInt<1> e{{PairingParams::X_ABS}};
  return -p.mul(e);
}

// Scott's G1 test (eprint 2021/1130): phi(x, y) = (beta x, y) is an endomorphism of order 3 that
// acts on the r-torsion as [-x^2]; on BLS12-381 a point of E(Fq) is in G1 iff phi(P) = [-x^2]P.
// Two multiplications by |x| (about 128 doublings) instead of 255 for [r]P.
CUZK_HD bool g1_in_subgroup(const G1Affine& p) {
  if (p.is_inf()) return true;
  G1 x2p = mul_by_x(mul_by_x(G1::from_affine(p)));  // [x^2]P
  G1Affine phi{p.x * PairingParams::beta(), p.y};
  return G1::from_affine(phi) == -x2p;
}

// psi = untwist . Frobenius . twist, on E'(Fq2): (x, y) -> (conj(x) xi^(-(q-1)/3), conj(y) xi^(-(q-1)/2)).
CUZK_HD G2Affine g2_psi(const G2Affine& q) {
  if (q.is_inf()) return q;
  return {q.x.conj() * PairingParams::psi_x(), q.y.conj() * PairingParams::psi_y()};
}

// Scott's G2 test: psi acts on G2 as [q] = [x] mod r, and on BLS12-381 a point of E'(Fq2) is in G2
// iff psi(Q) = [x]Q. One multiplication by |x| (64 doublings) instead of 255 for [r]Q.
CUZK_HD bool g2_in_subgroup(const G2Affine& q) {
  if (q.is_inf()) return true;
  return G2::from_affine(g2_psi(q)) == mul_by_x(G2::from_affine(q));
}

}  // namespace bls12_381
}  // namespace cuzk
