// Short-Weierstrass points (a = 0) over Fp (G1) and Fp2 (G2).
//
// affine_t has gnark-crypto's layout ({X, Y}; G1Affine 96 bytes, G2Affine 192
// bytes) with infinity encoded as (0, 0), as gnark does. Accumulators are
// XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity has ZZ = ZZZ = 0), with
// the formulas of Bernstein–Lange's EFD: madd-2008-s (mixed add, 8M+2S),
// add-2008-s (12M+2S), dbl-2008-s-1 / mdbl-2008-s. Every special case (an
// operand at infinity, P + P, P + (-P)) is handled.
#pragma once
#include "field.cuh"

// Point operations are out of line on the device: each kernel then holds one
// copy of each (field products stay inlined inside), which keeps code size
// and compile time reasonable at a negligible call cost.
#if defined(__CUDACC__) && !defined(C2G_POINT_INLINE)
#define C2G_PT __host__ __device__ __noinline__
#else
#define C2G_PT C2G_HD
#endif

namespace c2g {

template <class F>
struct field_consts;

template <>
struct field_consts<fp_t> {
  static C2G_HD fp_t one() {
    const uint32_t l[12] = FP_ONE;
    return fp_t::from_limbs(l);
  }
};

template <>
struct field_consts<fp2_t> {
  static C2G_HD fp2_t one() { return fp2_t{field_consts<fp_t>::one(), fp_t::zero()}; }
};

// raw_limbs gives the first base-field limbs of an element (tests use them
// as small integers).
C2G_HD const uint32_t* raw_limbs(const fp_t& x) { return x.v; }
C2G_HD const uint32_t* raw_limbs(const fp2_t& x) { return x.c0.v; }

template <class F>
struct affine_t {
  F X, Y;
  C2G_HD bool is_inf() const { return X.is_zero() && Y.is_zero(); }
  C2G_HD affine_t neg() const { return affine_t{X, Y.neg()}; }  // neg(0) = 0 keeps infinity
  C2G_HD affine_t canonical() const { return affine_t{X.canonical(), Y.canonical()}; }
};

template <class F>
struct xyzz_t {
  F X, Y, ZZ, ZZZ;

  static C2G_HD xyzz_t inf() {
    xyzz_t r;
    r.X = F::zero();
    r.Y = F::zero();
    r.ZZ = F::zero();
    r.ZZZ = F::zero();
    return r;
  }
  static C2G_HD xyzz_t from_affine(const affine_t<F>& a) {
    if (a.is_inf()) return inf();
    xyzz_t r;
    r.X = a.X;
    r.Y = a.Y;
    r.ZZ = field_consts<F>::one();
    r.ZZZ = r.ZZ;
    return r;
  }
  C2G_HD bool is_inf() const { return ZZ.is_zero(); }
  // Every coordinate below p: what leaves the device (coordinates may lie
  // in [0, 2p) inside it, field.cuh).
  C2G_HD xyzz_t canonical() const {
    xyzz_t r;
    r.X = X.canonical();
    r.Y = Y.canonical();
    r.ZZ = ZZ.canonical();
    r.ZZZ = ZZZ.canonical();
    return r;
  }
  C2G_HD xyzz_t neg() const {
    xyzz_t r = *this;
    r.Y = Y.neg();
    return r;
  }

  // 2 * this (dbl-2008-s-1 with a = 0).
  C2G_PT xyzz_t dbl() const {
    if (is_inf()) return *this;
    F U = Y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = X * V;
    F X2 = X.sqr();
    F M = X2.dbl() + X2;
    xyzz_t r;
    r.X = M.sqr() - S.dbl();
    r.Y = M * (S - r.X) - W * Y;
    r.ZZ = V * ZZ;
    r.ZZZ = W * ZZZ;
    return r;
  }

  // 2 * a for an affine a (mdbl-2008-s).
  static C2G_PT xyzz_t dbl_affine(const affine_t<F>& a) {
    if (a.is_inf()) return inf();
    F U = a.Y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = a.X * V;
    F X2 = a.X.sqr();
    F M = X2.dbl() + X2;
    xyzz_t r;
    r.X = M.sqr() - S.dbl();
    r.Y = M * (S - r.X) - W * a.Y;
    r.ZZ = V;
    r.ZZZ = W;
    return r;
  }

  // this += a (madd-2008-s).
  C2G_PT void add_affine(const affine_t<F>& a) {
    if (a.is_inf()) return;
    if (is_inf()) {
      *this = from_affine(a);
      return;
    }
    F U2 = a.X * ZZ;
    F S2 = a.Y * ZZZ;
    F P = U2 - X;
    F R = S2 - Y;
    if (P.is_zero()) {
      if (R.is_zero())
        *this = dbl_affine(a);
      else
        *this = inf();
      return;
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = X * PP;
    F X3 = R.sqr() - PPP - Q.dbl();
    Y = R * (Q - X3) - Y * PPP;
    X = X3;
    ZZ = ZZ * PP;
    ZZZ = ZZZ * PPP;
  }

  // this += o (add-2008-s).
  C2G_PT void add(const xyzz_t& o) {
    if (o.is_inf()) return;
    if (is_inf()) {
      *this = o;
      return;
    }
    F U1 = X * o.ZZ;
    F U2 = o.X * ZZ;
    F S1 = Y * o.ZZZ;
    F S2 = o.Y * ZZZ;
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) {
      if (R.is_zero())
        *this = dbl();
      else
        *this = inf();
      return;
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = U1 * PP;
    F X3 = R.sqr() - PPP - Q.dbl();
    Y = R * (Q - X3) - S1 * PPP;
    X = X3;
    ZZ = ZZ * o.ZZ * PP;
    ZZZ = ZZZ * o.ZZZ * PPP;
  }

  // k * this for a small non-negative integer k (double-and-add, MSB first).
  C2G_HD xyzz_t mul_u64(uint64_t k) const {
    xyzz_t r = inf();
    if (k == 0) return r;
    int top = 63;
    while (!((k >> top) & 1)) top--;
    r = *this;
    for (int b = top - 1; b >= 0; b--) {
      r = r.dbl();
      if ((k >> b) & 1) r.add(*this);
    }
    return r;
  }
};

using g1_affine = affine_t<fp_t>;
using g2_affine = affine_t<fp2_t>;
using g1_xyzz = xyzz_t<fp_t>;
using g2_xyzz = xyzz_t<fp2_t>;

}  // namespace c2g
