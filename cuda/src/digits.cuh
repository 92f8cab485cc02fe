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
// ceil(256/c) windows and a scalar below 2^255. The carry into window w is
// that of signed_digit_step's chain, found without running it: window u
// passes on its carry-in unchanged when its bits are exactly 2^(c-1), else
// it carries out 1 exactly when its bits exceed 2^(c-1). So the first
// window below w (going down) whose bits are not 2^(c-1) decides, and
// there is none when every window down to 0 is (window 0's carry-in is 0):
// one window read besides w's own, but for 2^-c of random scalars, instead
// of all w windows below (the MSM's digits kernel for the top windows).
C2G_HD int32_t signed_digit(const uint32_t* l, uint32_t c, uint32_t w) {
  const uint32_t half = 1u << (c - 1);
  int32_t carry = 0;
  for (uint32_t u = w; u-- > 0;) {
    const uint32_t x = window_bits(l, u * c, c);
    if (x != half) {
      carry = x > half;
      break;
    }
  }
  const int32_t v = (int32_t)window_bits(l, w * c, c) + carry;
  return v > (int32_t)half ? v - (1 << c) : v;
}

}  // namespace c2g
