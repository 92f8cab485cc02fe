// Element-wise self-test operations on the arithmetic, shared by the device
// self-test kernel (c2g_selftest) and the host build used by the Go tests
// (cuda/test/hostarith.cpp), so both run the same code against gnark-crypto.
#pragma once
#include "curve.cuh"
#include "../include/c2g.h"

namespace c2g {

// selftest_sizes reports the byte sizes of one element of in0, in1 and out
// for op; false for an unknown op.
C2G_HD bool selftest_sizes(int op, uint32_t* s0, uint32_t* s1, uint32_t* so) {
  const uint32_t FP = 48, FR = 32, FP2 = 96, A1 = 96, A2 = 192, X1 = 192, X2 = 384;
  switch (op) {
    case C2G_ST_FP_ADD: case C2G_ST_FP_SUB: case C2G_ST_FP_MUL: case C2G_ST_FP_SQR:
    case C2G_ST_FP_NEG: case C2G_ST_FP_FROM_MONT: case C2G_ST_FP_INV:
    case C2G_ST_FP_INV_EUCLID: case C2G_ST_FP_INV_DIVSTEPS:
      *s0 = FP; *s1 = FP; *so = FP; return true;
    case C2G_ST_FR_ADD: case C2G_ST_FR_SUB: case C2G_ST_FR_MUL: case C2G_ST_FR_FROM_MONT:
      *s0 = FR; *s1 = FR; *so = FR; return true;
    case C2G_ST_FP2_ADD: case C2G_ST_FP2_SUB: case C2G_ST_FP2_MUL: case C2G_ST_FP2_SQR: case C2G_ST_FP2_INV:
      *s0 = FP2; *s1 = FP2; *so = FP2; return true;
    case C2G_ST_G1_MADD: case C2G_ST_G1_ADD: case C2G_ST_G1_DBL: case C2G_ST_G1_MUL_SMALL:
      *s0 = A1; *s1 = A1; *so = X1; return true;
    case C2G_ST_G2_MADD: case C2G_ST_G2_ADD: case C2G_ST_G2_DBL: case C2G_ST_G2_MUL_SMALL:
      *s0 = A2; *s1 = A2; *so = X2; return true;
  }
  return false;
}

template <class F>
C2G_HD void selftest_curve(int kind, const affine_t<F>& a, const affine_t<F>& b, xyzz_t<F>* out) {
  using P = xyzz_t<F>;
  P r;
  switch (kind) {
    case 0:  // a + b through the mixed addition
      r = P::from_affine(a);
      r.add_affine(b);
      break;
    case 1:  // 2a + 2b through the full addition (operands with ZZ != 1)
      r = P::from_affine(a).dbl();
      r.add(P::dbl_affine(b));
      break;
    case 2:  // 4a through two doublings
      r = P::from_affine(a).dbl().dbl();
      break;
    case 3: {  // k*a with k = the first 64 bits of b.X's raw limbs
      const uint32_t* k = raw_limbs(b.X);
      r = P::from_affine(a).mul_u64((uint64_t)k[0] | ((uint64_t)k[1] << 32));
      break;
    }
    default:
      return;
  }
  *out = r.canonical();  // coordinates lie in [0, 2p) on the way (field.cuh)
}

C2G_HD void selftest_op(int op, const uint8_t* in0, const uint8_t* in1, uint8_t* out, uint64_t i) {
  uint32_t s0, s1, so;
  if (!selftest_sizes(op, &s0, &s1, &so)) return;
  const uint8_t* p0 = in0 + i * s0;
  const uint8_t* p1 = in1 + i * s1;
  uint8_t* po = out + i * so;
  switch (op) {
#define FPOP(T, name, expr)                 \
  case name: {                              \
    T a = *(const T*)p0, b = *(const T*)p1; \
    *(T*)po = (expr).canonical();           \
    break;                                  \
  }
#define FPOP1(T, name, expr) \
  case name: {               \
    T a = *(const T*)p0;     \
    *(T*)po = (expr).canonical(); \
    break;                   \
  }
    FPOP(fp_t, C2G_ST_FP_ADD, a + b)
    FPOP(fp_t, C2G_ST_FP_SUB, a - b)
    FPOP(fp_t, C2G_ST_FP_MUL, a * b)
    FPOP1(fp_t, C2G_ST_FP_SQR, a.sqr())
    FPOP1(fp_t, C2G_ST_FP_NEG, a.neg())
    FPOP1(fp_t, C2G_ST_FP_FROM_MONT, a.from_mont())
    FPOP1(fp_t, C2G_ST_FP_INV, fp_inverse(a))
    FPOP1(fp_t, C2G_ST_FP_INV_EUCLID, fp_inverse_euclid(a))
    case C2G_ST_FP_INV_DIVSTEPS: {
      bool ok;
      fp_t r = fp_inverse_divsteps(*(const fp_t*)p0, ok).canonical();
      if (!ok)
        for (int k = 0; k < FpParams::N; k++) r.v[k] = 0xffffffffu;
      *(fp_t*)po = r;
      break;
    }
    FPOP(fr_t, C2G_ST_FR_ADD, a + b)
    FPOP(fr_t, C2G_ST_FR_SUB, a - b)
    FPOP(fr_t, C2G_ST_FR_MUL, a * b)
    FPOP1(fr_t, C2G_ST_FR_FROM_MONT, a.from_mont())
    FPOP(fp2_t, C2G_ST_FP2_ADD, a + b)
    FPOP(fp2_t, C2G_ST_FP2_SUB, a - b)
    FPOP(fp2_t, C2G_ST_FP2_MUL, a * b)
    FPOP1(fp2_t, C2G_ST_FP2_SQR, a.sqr())
    FPOP1(fp2_t, C2G_ST_FP2_INV, fp2_inverse(a))
#undef FPOP
#undef FPOP1
    case C2G_ST_G1_MADD: case C2G_ST_G1_ADD: case C2G_ST_G1_DBL: case C2G_ST_G1_MUL_SMALL:
      selftest_curve<fp_t>(op - C2G_ST_G1_MADD, *(const g1_affine*)p0, *(const g1_affine*)p1, (g1_xyzz*)po);
      break;
    case C2G_ST_G2_MADD: case C2G_ST_G2_ADD: case C2G_ST_G2_DBL: case C2G_ST_G2_MUL_SMALL:
      selftest_curve<fp2_t>(op - C2G_ST_G2_MADD, *(const g2_affine*)p0, *(const g2_affine*)p1, (g2_xyzz*)po);
      break;
  }
}

}  // namespace c2g
