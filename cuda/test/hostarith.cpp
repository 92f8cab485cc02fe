// Host build of the device arithmetic (field, extension field, XYZZ curve
// ops) for the Go tests: the same source as the kernels, with the PTX carry
// instructions emulated, checked against gnark-crypto on machines without a
// GPU. Built by the test itself (g++) or by cuda/build.sh hostarith.
#include "../src/bits.cuh"
#include "../src/digits.cuh"
#include "../src/selftest.cuh"

extern "C" int c2g_host_selftest(int op, const void* in0, const void* in1, void* out, uint64_t n) {
  uint32_t s0, s1, so;
  if (!c2g::selftest_sizes(op, &s0, &s1, &so)) return 1;
  for (uint64_t i = 0; i < n; i++)
    c2g::selftest_op(op, (const uint8_t*)in0, (const uint8_t*)in1, (uint8_t*)out, i);
  return 0;
}

// Signed digits of one canonical 8-limb scalar for window size c: writes
// ceil(256/c) digits; returns 2 where a digit differs from the carry chain
// run up from window 0 (signed_digit_step, the reference).
extern "C" int c2g_host_digits(const uint32_t* scalar, uint32_t c, int32_t* out) {
  if (c < 2 || c > 31) return 1;
  uint32_t w = (256 + c - 1) / c;
  int32_t carry = 0;
  for (uint32_t i = 0; i < w; i++) {
    out[i] = c2g::signed_digit(scalar, c, i);
    if (out[i] != c2g::signed_digit_step(scalar, c, i, carry)) return 2;
  }
  return 0;
}

// The upload's density count (bits.cuh) of the first nbits of w.
extern "C" uint64_t c2g_host_popcount(const uint64_t* w, uint64_t nbits) { return c2g::popcount_bits(w, nbits); }
