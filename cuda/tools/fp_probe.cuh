// What the Fp product probes (fp52.cu, fp30.cu) share: the timed chains of
// dependent products, and host helpers through the library's own host
// arithmetic (mont<FpParams>, which TestHostArithmetic checks against
// gnark-crypto): elements from limbs, Montgomery form with R = 2^384,
// comparison with p, random elements below p. Include after field.cuh.
#pragma once
#include <cstdint>
#include <random>

// x from twelve 32-bit limbs, least significant first
static c2g::fp_t fp_from_u32(const uint32_t* l) { return c2g::fp_t::from_limbs(l); }

// x 2^384 mod p, canonical
static c2g::fp_t to_mont384(const c2g::fp_t& x) {
  const uint32_t r2[12] = FP_R2;
  return c2g::fp_t::mul(x, fp_from_u32(r2)).canonical();
}

// x y mod p for canonical x, y (not in Montgomery form), canonical
static c2g::fp_t fp_mul_plain(const c2g::fp_t& x, const c2g::fp_t& y) {
  const uint32_t one[12] = {1};
  return c2g::fp_t::mul(c2g::fp_t::mul(to_mont384(x), to_mont384(y)), fp_from_u32(one)).canonical();
}

// twelve limbs >= p
static bool fp_limbs_ge_p(const uint32_t* x) {
  const uint32_t p[12] = FP_MOD;
  for (int i = 11; i >= 0; i--)
    if (x[i] != p[i]) return x[i] > p[i];
  return true;
}

// w (twelve limbs, below 2^384 < 16 p) reduced below p in place
static void fp_reduce_limbs(uint32_t* w) {
  const uint32_t p[12] = FP_MOD;
  while (fp_limbs_ge_p(w)) {
    uint64_t borrow = 0;
    for (int i = 0; i < 12; i++) {
      const uint64_t d = (uint64_t)w[i] - p[i] - borrow;
      w[i] = (uint32_t)d;
      borrow = (d >> 63) & 1;
    }
  }
}

// p^-1 mod 2^64 (Newton's iteration; each step doubles the correct bits)
static uint64_t fp_inv64() {
  const uint32_t p[12] = FP_MOD;
  const uint64_t p0 = (uint64_t)p[0] | ((uint64_t)p[1] << 32);
  uint64_t inv = 1;
  for (int k = 0; k < 6; k++) inv *= 2 - p0 * inv;
  return inv;
}

// x's 384 bits regrouped into limbs of `bits` bits, least significant
// first (out: at least ceil(384 / bits) limbs, zeroed)
template <class Limb>
static void fp_to_limbs(const c2g::fp_t& x, Limb* out, int bits) {
  for (int bit = 0; bit < 384; bit++)
    if ((x.v[bit / 32] >> (bit % 32)) & 1) out[bit / bits] |= (Limb)1 << (bit % bits);
}

// uniform below p (rejection from 381 random bits)
static c2g::fp_t random_fp(std::mt19937_64& rng) {
  for (;;) {
    uint32_t w[12];
    for (int i = 0; i < 12; i++) w[i] = (uint32_t)rng();
    w[11] &= 0x1fffffffu;
    if (!fp_limbs_ge_p(w)) return fp_from_u32(w);
  }
}

// The library's product, as a functor for product_chains (a probe's own
// functor derives from it and adds its product).
struct lib_mul {
  __device__ __forceinline__ c2g::fp_t operator()(const c2g::fp_t& a, const c2g::fp_t& b) const { return a * b; }
};

// CHAINS independent chains of dependent products a = mul(a, b) per thread
// (iters products in all), operands from y[0..1023], one result per thread
// in x (so that nothing is optimized away).
template <class T, int CHAINS, class Mul>
__device__ __forceinline__ void product_chains(T* x, const T* y, uint32_t iters, Mul mul) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  T a[CHAINS];
  for (int k = 0; k < CHAINS; k++) a[k] = y[(t * 7 + k) & 1023];
  const T b = y[t & 1023];
  for (uint32_t i = 0; i < iters / CHAINS; i++)
#pragma unroll
    for (int k = 0; k < CHAINS; k++) a[k] = mul(a[k], b);
  for (int k = 1; k < CHAINS; k++) a[0] = mul(a[0], a[k]);
  x[t] = a[0];
}

// out[i] = mul(a[i], b[i]) for i < n: the products a probe checks.
template <class Mul, class T>
__global__ void k_check(const T* a, const T* b, T* out, uint32_t n) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) out[t] = Mul{}(a[t], b[t]);
}
