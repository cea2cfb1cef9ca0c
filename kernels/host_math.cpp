#include "host_math.hpp"

#include <cstring>

#include "math/msm.hpp"

namespace cuzk {
namespace gpu {
namespace host {

using bls12_381::Fr;

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

Fr root_of_unity(int k) { return bls12_381::root_of_unity(k); }
Fr one() { return Fr::one(); }
Fr inverse(const Fr& x) { return x.inv(); }
Fr inverse_of_pow2(int k) { return Fr::from_u64(uint64_t(1) << k).inv(); }

namespace {
template <class C>
Jacobian<C> horner(const void* xyzz, int nw, int c) {
  std::vector<XYZZ<C>> win(nw);
  std::memcpy(win.data(), xyzz, nw * sizeof(XYZZ<C>));
  Jacobian<C> acc = Jacobian<C>::infinity();
  for (int w = nw - 1; w >= 0; w--) {
    for (int i = 0; i < c; i++) acc = acc.dbl();
    acc = acc + win[w].to_jacobian();
  }
  return acc;
}
}  // namespace

bls12_381::G1 g1_from_windows(const void* xyzz, int nw, int c) { return horner<bls12_381::G1Curve>(xyzz, nw, c); }
bls12_381::G2 g2_from_windows(const void* xyzz, int nw, int c) { return horner<bls12_381::G2Curve>(xyzz, nw, c); }
bls12_381::G1 g1_infinity() { return bls12_381::G1::infinity(); }
bls12_381::G2 g2_infinity() { return bls12_381::G2::infinity(); }

}  // namespace host
}  // namespace gpu
}  // namespace cuzk
