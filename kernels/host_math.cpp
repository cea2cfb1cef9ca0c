#include "host_math.hpp"

#include <cstring>

#include "math/msm.hpp"

namespace cuzk {
namespace gpu {
namespace host {

template <class Fr>
std::vector<Fr> pow_tables(const Fr& base, const Fr& c, int lo_bits, int hi_bits) {
  size_t nlo = size_t(1) << lo_bits, nhi = size_t(1) << hi_bits;
  std::vector<Fr> out(nlo + nhi);
  Fr x = c;
  for (size_t i = 0; i < nlo; i++) {
    out[i] = x;
    x = x * base;
  }
  Fr step = base;
  for (int i = 0; i < lo_bits; i++) step = step.sqr();
  Fr y = Fr::one();
  for (size_t j = 0; j < nhi; j++) {
    out[nlo + j] = y;
    y = y * step;
  }
  return out;
}

template <class Fr>
Fr root_of_unity(int k) {
  return two_adic_root<Fr>(k);
}
template <class Fr>
Fr one() {
  return Fr::one();
}
template <class Fr>
Fr inverse(const Fr& x) {
  return x.inv();
}
template <class Fr>
Fr inverse_of_pow2(int k) {
  return Fr::from_u64(uint64_t(1) << k).inv();
}

template <class HC>
Jacobian<HC> from_windows(const void* xyzz, int nw, int c, int first) {
  std::vector<XYZZ<HC>> win(nw);
  std::memcpy(win.data(), xyzz, nw * sizeof(XYZZ<HC>));
  Jacobian<HC> acc = Jacobian<HC>::infinity();
  for (int w = nw - 1; w >= 0; w--) {
    for (int i = 0; i < c; i++) acc = acc.dbl();
    acc = acc + win[w].to_jacobian();
  }
  for (int i = 0; i < first * c; i++) acc = acc.dbl();
  return acc;
}
template <class HC>
Jacobian<HC> infinity() {
  return Jacobian<HC>::infinity();
}
template <class HC>
Jacobian<HC> add(const Jacobian<HC>& a, const Jacobian<HC>& b) {
  return a + b;
}

template <class HC>
typename HC::F curve_b() {
  return HC::b();
}

#define CUZK_INSTANTIATE(C)                                                                 \
  template std::vector<C::Fr> pow_tables(const C::Fr&, const C::Fr&, int, int);             \
  template C::Fr root_of_unity<C::Fr>(int);                                                 \
  template C::Fr one<C::Fr>();                                                              \
  template C::Fr inverse(const C::Fr&);                                                     \
  template C::Fr inverse_of_pow2<C::Fr>(int);                                               \
  template C::G1 from_windows<C::G1Curve>(const void*, int, int, int);                           \
  template C::G2 from_windows<C::G2Curve>(const void*, int, int, int);                           \
  template C::G1 infinity<C::G1Curve>();                                                    \
  template C::G2 infinity<C::G2Curve>();                                                    \
  template C::G1 add<C::G1Curve>(const C::G1&, const C::G1&);                               \
  template C::G2 add<C::G2Curve>(const C::G2&, const C::G2&);                               \
  template C::Fq curve_b<C::G1Curve>();                                                     \
  template C::Fq2 curve_b<C::G2Curve>();
CUZK_INSTANTIATE(Bls12_381)
CUZK_INSTANTIATE(Bn254)
#undef CUZK_INSTANTIATE

}  // namespace host
}  // namespace gpu
}  // namespace cuzk
