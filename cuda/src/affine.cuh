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
__device__ __forceinline__ fp2_t f_inv(const fp2_t& x) {
  fp_t d = f_inv(x.c0.sqr() + x.c1.sqr());
  return fp2_t{x.c0 * d, (x.c1 * d).neg()};
}

// 1/x in Montgomery form for x != 0 (0 for x = 0), by Kaliski's almost
// Montgomery inverse: a binary extended Euclid on the integer a = xR mod p
// gives a^-1 2^k mod p (381 <= k <= 762) with only shifts, additions and
// subtractions, and 768 - k modular doublings turn it into a^-1 2^768 =
// x^-1 R. Variable time (the MSM's inputs are public); about 60k
// instructions against about 570 Montgomery products for f_inv. One thread
// runs it per batch of the batch-affine MSM accumulation.
#if defined(__CUDACC__)
#define C2G_INV_FN static __host__ __device__ __noinline__
#else
#define C2G_INV_FN static inline
#endif
C2G_INV_FN fp_t f_inv_binary(const fp_t& x) {
  constexpr int N = 12;
  if (x.is_zero()) return x;
  uint32_t u[N], v[N], r[N], s[N];
  for (int i = 0; i < N; i++) {
    u[i] = FpParams::mod(i);
    v[i] = x.v[i];
    r[i] = 0;
    s[i] = 0;
  }
  s[0] = 1;
  auto is_zero = [](const uint32_t* a) {
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) acc |= a[i];
    return acc == 0;
  };
  auto shr1 = [](uint32_t* a) {
    for (int i = 0; i < N - 1; i++) a[i] = (a[i] >> 1) | (a[i + 1] << 31);
    a[N - 1] >>= 1;
  };
  auto shl1 = [](uint32_t* a) {
    for (int i = N - 1; i > 0; i--) a[i] = (a[i] << 1) | (a[i - 1] >> 31);
    a[0] <<= 1;
  };
  auto sub = [](uint32_t* a, const uint32_t* b) {  // a -= b (a >= b)
    uint64_t br = 0;
    for (int i = 0; i < N; i++) {
      uint64_t d = (uint64_t)a[i] - b[i] - br;
      a[i] = (uint32_t)d;
      br = (d >> 32) & 1;
    }
  };
  auto add = [](uint32_t* a, const uint32_t* b) {  // a += b (no overflow: both < 2^383)
    uint64_t c = 0;
    for (int i = 0; i < N; i++) {
      uint64_t t = (uint64_t)a[i] + b[i] + c;
      a[i] = (uint32_t)t;
      c = t >> 32;
    }
  };
  auto gt = [](const uint32_t* a, const uint32_t* b) {  // a > b
    for (int i = N - 1; i >= 0; i--)
      if (a[i] != b[i]) return a[i] > b[i];
    return false;
  };
  int k = 0;
  while (!is_zero(v)) {
    if (!(u[0] & 1)) {
      shr1(u);
      shl1(s);
    } else if (!(v[0] & 1)) {
      shr1(v);
      shl1(r);
    } else if (gt(u, v)) {
      sub(u, v);
      shr1(u);
      add(r, s);
      shl1(s);
    } else {
      sub(v, u);
      shr1(v);
      add(s, r);
      shl1(r);
    }
    k++;
  }
  // r < 2p: reduce once, then a^-1 2^k = p - r
  uint32_t pm[N];
  for (int i = 0; i < N; i++) pm[i] = FpParams::mod(i);
  if (!gt(pm, r)) sub(r, pm);
  sub(pm, r);
  fp_t y = fp_t::from_limbs(pm);
  for (int i = k; i < 768; i++) y = y.dbl();
  return y;
}
__device__ __forceinline__ fp2_t f_inv_binary(const fp2_t& x) {
  fp_t d = f_inv_binary(x.c0.sqr() + x.c1.sqr());
  return fp2_t{x.c0 * d, (x.c1 * d).neg()};
}

// Affine form of p; infinity as (0, 0), gnark's encoding.
template <class F>
__device__ affine_t<F> to_affine(const xyzz_t<F>& p) {
  if (p.is_inf()) return affine_t<F>{F::zero(), F::zero()};
  F inv = f_inv(p.ZZ * p.ZZZ);
  return affine_t<F>{p.X * (inv * p.ZZZ), p.Y * (inv * p.ZZ)};
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
    if (first + k < n) out[first + k] = affine_t<F>{p[k].X * (dinv * p[k].ZZZ), p[k].Y * (dinv * p[k].ZZ)};
  }
}

}  // namespace c2g
