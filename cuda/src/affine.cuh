// XYZZ -> affine conversion on the device: field inversion by Fermat's
// little theorem, one point at a time or a batch with one inversion
// (Montgomery's trick).
#pragma once
#include "curve.cuh"

namespace c2g {

__device__ __forceinline__ fp_t f_inv(const fp_t& x) {
  uint32_t e[12] = FP_MOD;
  e[0] -= 2;  // p - 2 (the low limb of p is 0xffffaaab: no borrow)
  return x.pow_limbs(e, 12, field_consts<fp_t>::one());
}
__device__ __forceinline__ fp2_t f_inv(const fp2_t& x) { return x.inverse_by_norm(f_inv(x.norm())); }

// Affine form of p, canonical coordinates; infinity as (0, 0), gnark's
// encoding.
template <class F>
__device__ affine_t<F> to_affine(const xyzz_t<F>& p) {
  if (p.is_inf()) return affine_t<F>{F::zero(), F::zero()};
  F inv = f_inv(p.ZZ * p.ZZZ);
  return affine_t<F>{p.X * (inv * p.ZZZ), p.Y * (inv * p.ZZ)}.canonical();
}

// out[first + k] = affine p[k] for k < B and first + k < n, with one
// inversion for the batch.
template <class F, uint32_t B>
__device__ void batch_to_affine(const xyzz_t<F> (&p)[B], affine_t<F>* out, uint64_t first, uint64_t n) {
  F pref[B];
  F acc = field_consts<F>::one();
  for (uint32_t k = 0; k < B; k++) {
    pref[k] = acc;
    F d = p[k].ZZ * p[k].ZZZ;
    if (!d.is_zero()) acc = acc * d;
  }
  F inv = f_inv(acc);  // 1 / the product of the non-zero d
  for (int k = B - 1; k >= 0; k--) {
    F d = p[k].ZZ * p[k].ZZZ;
    if (d.is_zero()) {
      if (first + k < n) out[first + k] = affine_t<F>{F::zero(), F::zero()};
      continue;
    }
    F dinv = inv * pref[k];  // 1/d_k
    inv = inv * d;
    if (first + k < n)
      out[first + k] = affine_t<F>{p[k].X * (dinv * p[k].ZZZ), p[k].Y * (dinv * p[k].ZZ)}.canonical();
  }
}

}  // namespace c2g
