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
CUZK_HD DFq2 load(const DFq2* src) { return {load(&src->c0), load(&src->c1)}; }
CUZK_HD void store(DFq2* dst, const DFq2& v) {
  store(&dst->c0, v.c0);
  store(&dst->c1, v.c1);
}

// The curves as the device sees them: same equations, device fields. b() is never needed by the
// MSM (additions and doublings of a = 0 curves do not use b).
struct DG1 {
  using F = DFq;
};
struct DG2 {
  using F = DFq2;
};
using DG1Affine = Affine<DG1>;
using DG2Affine = Affine<DG2>;
using DG1xyzz = XYZZ<DG1>;
using DG2xyzz = XYZZ<DG2>;

static_assert(sizeof(DG1Affine) == sizeof(bls12_381::G1Affine), "device and host G1 affine points must share bytes");
static_assert(sizeof(DG2Affine) == sizeof(bls12_381::G2Affine), "device and host G2 affine points must share bytes");

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
