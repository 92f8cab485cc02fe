// Signed-digit recoding of 256-bit scalars for Pippenger windows, shared by
// the MSM kernels and the host tests.
#pragma once
#include "arith.cuh"

namespace c2g {

// c bits of the little-endian 8-limb scalar l starting at bit off (zero
// beyond bit 255); 1 <= c <= 31.
C2G_HD uint32_t window_bits(const uint32_t* l, uint32_t off, uint32_t c) {
  if (off >= 256) return 0;
  uint32_t limb = off >> 5, sh = off & 31;
  uint32_t x = l[limb] >> sh;
  if (sh + c > 32 && limb + 1 < 8) x |= l[limb + 1] << (32 - sh);
  return x & ((1u << c) - 1);
}

// Digit w of the signed recoding, given the carry out of digit w-1 (0 for
// w = 0); updates carry for digit w+1. Digits lie in [-2^(c-1) + 1, 2^(c-1)].
C2G_HD int32_t signed_digit_step(const uint32_t* l, uint32_t c, uint32_t w, int32_t& carry) {
  const int32_t v = (int32_t)window_bits(l, w * c, c) + carry;
  carry = v > (1 << (c - 1));
  return carry ? v - (1 << c) : v;
}

// Digit w of the signed recoding with c-bit windows: digits in
// [-2^(c-1) + 1, 2^(c-1)] with sum_w d_w 2^(c w) equal to the scalar, for
// ceil(256/c) windows and a scalar below 2^255.
C2G_HD int32_t signed_digit(const uint32_t* l, uint32_t c, uint32_t w) {
  int32_t carry = 0, d = 0;
  for (uint32_t u = 0; u <= w; u++) d = signed_digit_step(l, c, u, carry);
  return d;
}

}  // namespace c2g
