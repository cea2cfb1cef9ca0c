// Small helpers shared by the kernel bodies: 16-byte vector loads/stores of field elements and the
// device curve descriptors. Host-compilable (plain copies) so the kernel bodies can be emulated.
#pragma once
#include "fp_device.cuh"
#include "math/msm.hpp"

namespace cuzk {
namespace gpu {

// Loads a field element with NW/4 16-byte loads (device arrays of 32- and 48-byte elements are
// 16-byte aligned), which keeps the load unit busy with few instructions.
template <class P>
CUZK_HD DFp<P> load(const DFp<P>* src) {
#if defined(__CUDA_ARCH__)
  static_assert(DFp<P>::NW % 4 == 0, "vector loads need a multiple of four words");
  DFp<P> r;
  const uint4* s = reinterpret_cast<const uint4*>(src);
CUZK_UNROLL
  for (int i = 0; i < DFp<P>::NW / 4; i++) {
    uint4 v = s[i];
    r.w[4 * i] = v.x;
    r.w[4 * i + 1] = v.y;
    r.w[4 * i + 2] = v.z;
    r.w[4 * i + 3] = v.w;
  }
  return r;
#else
  return *src;
#endif
}
template <class P>
CUZK_HD void store(DFp<P>* dst, const DFp<P>& v) {
#if defined(__CUDA_ARCH__)
  uint4* d = reinterpret_cast<uint4*>(dst);
CUZK_UNROLL
  for (int i = 0; i < DFp<P>::NW / 4; i++) d[i] = make_uint4(v.w[4 * i], v.w[4 * i + 1], v.w[4 * i + 2], v.w[4 * i + 3]);
#else
  *dst = v;
#endif
}
template <class F, int XiA>
CUZK_HD Fp2<F, XiA> load(const Fp2<F, XiA>* src) {
  return {load(&src->c0), load(&src->c1)};
}
template <class F, int XiA>
CUZK_HD void store(Fp2<F, XiA>* dst, const Fp2<F, XiA>& v) {
  store(&dst->c0, v.c0);
  store(&dst->c1, v.c1);
}

// A curve group as the device sees it: the host group HostCurve's equation over the device twin F
// of its field. The MSM never needs b (additions and doublings of a = 0 curves do not use it), so
// the device curve carries none; Host names the host group its results convert to.
template <class F_, class Host_>
struct DCurve {
  using F = F_;
  using Host = Host_;
};
template <class HostCurve>
using DeviceCurve = DCurve<DeviceFieldOf<typename HostCurve::F>, HostCurve>;

// The device types of curve C (math/curves.hpp), every one sharing its bytes with the host type.
template <class C>
struct Dev {
  using Fq = DeviceFieldOf<typename C::Fq>;
  using Fr = DeviceFieldOf<typename C::Fr>;
  using Fq2 = DeviceFieldOf<typename C::Fq2>;
  using G1 = DeviceCurve<typename C::G1Curve>;
  using G2 = DeviceCurve<typename C::G2Curve>;
  using G1Affine = Affine<G1>;
  using G2Affine = Affine<G2>;
  using G1xyzz = XYZZ<G1>;
  using G2xyzz = XYZZ<G2>;
  static_assert(sizeof(G1Affine) == sizeof(typename C::G1Affine), "device and host G1 affine points must share bytes");
  static_assert(sizeof(G2Affine) == sizeof(typename C::G2Affine), "device and host G2 affine points must share bytes");
};

// BLS12-381's device curves, the names the resident-key prover uses.
using DG1 = Dev<Bls12_381>::G1;
using DG2 = Dev<Bls12_381>::G2;
using DG1Affine = Dev<Bls12_381>::G1Affine;
using DG2Affine = Dev<Bls12_381>::G2Affine;
using DG1xyzz = Dev<Bls12_381>::G1xyzz;
using DG2xyzz = Dev<Bls12_381>::G2xyzz;
static_assert(sizeof(Dev<Bls12_381>) && sizeof(Dev<Bn254>), "instantiates the layout checks of Dev");

// Point operations used at several call sites, compiled once as real calls on the device: each is
// thousands of instructions (a G2 addition is ~40 Fq multiplies), and inlining every call site
// multiplies compile time and code size for nothing measurable. The hot mixed addition of the
// bucket loop stays inline (one call site).
#if defined(__CUDACC__)
#define CUZK_NOINLINE __host__ __device__ __noinline__
#else
#define CUZK_NOINLINE inline
#endif
template <class C>
CUZK_NOINLINE XYZZ<C> xyzz_add(const XYZZ<C>& a, const XYZZ<C>& b) {
  return a + b;
}
template <class C>
CUZK_NOINLINE XYZZ<C> xyzz_dbl(const XYZZ<C>& a) {
  return a.dbl();
}

template <class C>
CUZK_HD Affine<C> load(const Affine<C>* p) {
  return {load(&p->x), load(&p->y)};
}
template <class C>
CUZK_HD void store(Affine<C>* d, const Affine<C>& v) {
  store(&d->x, v.x);
  store(&d->y, v.y);
}
template <class C>
CUZK_HD XYZZ<C> load(const XYZZ<C>* p) {
  return {load(&p->x), load(&p->y), load(&p->zz), load(&p->zzz)};
}
template <class C>
CUZK_HD void store(XYZZ<C>* d, const XYZZ<C>& v) {
  store(&d->x, v.x);
  store(&d->y, v.y);
  store(&d->zz, v.zz);
  store(&d->zzz, v.zzz);
}

}  // namespace gpu
}  // namespace cuzk
