// fp52: a prototype of the BLS12-381 Fp Montgomery product on the FP64 pipe
// (docs/cuda.md, "Tools"), measured against the library's own
// product (mont<FpParams>, 12 limbs of 32 bits on IMAD) in the same binary.
//
// Representation: 8 limbs of 52 bits (416 bits), Montgomery form with
// R = 2^416; an element is any value below 2^395 congruent to x R (inputs
// below 2p give results below 2p: (ab + M p)/R < p + ab/R). Each 52x52-bit
// limb product is two round-toward-zero DFMAs: hi = a b + 2^104 holds
// floor(a b / 2^52) in its mantissa, lo = a b + (2^104 + 2^52 - hi) holds
// a b mod 2^52 above 2^52; both are read as integers from the doubles' bits
// and summed into 64-bit column accumulators (fewer than 2^57: no carry
// handling inside a column). The reduction is word by word in radix 2^52
// (m = t p' mod 2^52, the low half of another two-DFMA product), then the
// columns are normalized into 52-bit limbs.
//
// The check compares 2^16 random products (and edge operands) with the
// library's host arithmetic (mont<FpParams>, the code TestHostArithmetic
// checks against gnark-crypto); FP52_HOST=1 runs the same algorithm on the
// host instead, with exact integer limb products (no GPU needed). The
// timing runs chains of dependent products, one or two per thread, for
// both products, and one chain of each per thread (do the pipes add up?).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DC2G_FP_MUL_CALL -I cuda/src \
//     -o fp52 cuda/tools/fp52.cu && ./fp52
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "field.cuh"
#include "fp_probe.cuh"
#include "tool.cuh"


using c2g::fp_t;

constexpr int L = 8;
constexpr uint64_t M52 = (1ull << 52) - 1;
constexpr uint64_t K_HI = 0x4670000000000000ull;  // bits of 2^104
constexpr uint64_t K_LO = 0x4330000000000000ull;  // bits of 2^52

struct fp52 {
  uint64_t v[L];
};

__constant__ double d_p[L];   // p's limbs as doubles
__constant__ double d_pinv;   // -p^-1 mod 2^52 as a double
[[maybe_unused]] static double h_p[L], h_pinv;  // the same for the host check of the algorithm

__host__ __device__ __forceinline__ double to_d(uint64_t x) {  // x < 2^52, exact
#ifdef __CUDA_ARCH__
  return __longlong_as_double((long long)(x | K_LO)) - 0x1p52;
#else
  return (double)x;
#endif
}

// (hi, lo) of x y for integer-valued doubles below 2^52: hi = floor(x y /
// 2^52), lo = x y mod 2^52 (the host computes them exactly with integers).
__host__ __device__ __forceinline__ void prod52(double x, double y, uint64_t& hi, uint64_t& lo) {
#ifdef __CUDA_ARCH__
  const double h = __fma_rz(x, y, 0x1p104);
  const double l = __fma_rz(x, y, (0x1p104 + 0x1p52) - h);
  hi = (uint64_t)__double_as_longlong(h) - K_HI;
  lo = (uint64_t)__double_as_longlong(l) - K_LO;
#else
  const unsigned __int128 p = (unsigned __int128)(uint64_t)x * (uint64_t)y;
  hi = (uint64_t)(p >> 52);
  lo = (uint64_t)p & M52;
#endif
}

__host__ __device__ __forceinline__ double p_limb(int j) {
#ifdef __CUDA_ARCH__
  return d_p[j];
#else
  return h_p[j];
#endif
}
__host__ __device__ __forceinline__ double p_inv() {
#ifdef __CUDA_ARCH__
  return d_pinv;
#else
  return h_pinv;
#endif
}

__host__ __device__ __forceinline__ fp52 mul52(const fp52& a, const fp52& b) {
  double ad[L], bd[L];
#pragma unroll
  for (int i = 0; i < L; i++) {
    ad[i] = to_d(a.v[i]);
    bd[i] = to_d(b.v[i]);
  }
  uint64_t c[2 * L + 1];
#pragma unroll
  for (int k = 0; k <= 2 * L; k++) c[k] = 0;
#pragma unroll
  for (int i = 0; i < L; i++) {
#pragma unroll
    for (int j = 0; j < L; j++) {
      uint64_t h, l;
      prod52(ad[i], bd[j], h, l);
      c[i + j] += l;
      c[i + j + 1] += h;
    }
  }
#pragma unroll
  for (int i = 0; i < L; i++) {
    const uint64_t t = c[i] & M52;
    c[i + 1] += c[i] >> 52;
    uint64_t mh, m;
    prod52(to_d(t), p_inv(), mh, m);
    const double md = to_d(m);
    uint64_t h, l;
    prod52(md, p_limb(0), h, l);
    c[i + 1] += h + ((t + l) >> 52);  // t + l is 0 or 2^52
#pragma unroll
    for (int j = 1; j < L; j++) {
      prod52(md, p_limb(j), h, l);
      c[i + j] += l;
      c[i + j + 1] += h;
    }
  }
  fp52 r;
#pragma unroll
  for (int k = L; k < 2 * L; k++) {
    c[k + 1] += c[k] >> 52;
    r.v[k - L] = c[k] & M52;
  }
  return r;
}

// Both products under one name for product_chains.
struct probe_mul : lib_mul {
  using lib_mul::operator();
  __device__ __forceinline__ fp52 operator()(const fp52& a, const fp52& b) const { return mul52(a, b); }
};

// Chains of products (fp_probe.cuh) of the library's product or fp52's.
template <class T, int CHAINS>
__global__ void k_chain(T* x, const T* y, uint32_t iters) {
  product_chains<T, CHAINS>(x, y, iters, probe_mul{});
}

// One chain on each multiplier per thread (IMAD: the library's product,
// FP64: fp52), iters products in all: whether the two pipes add up.
__global__ void k_mixed(fp_t* x32, const fp_t* y32, fp52* x52, const fp52* y52, uint32_t iters) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  fp_t a = y32[(t * 7) & 1023];
  const fp_t b = y32[t & 1023];
  fp52 c = y52[(t * 7 + 1) & 1023];
  const fp52 d = y52[t & 1023];
  for (uint32_t i = 0; i < iters / 2; i++) {
    a = a * b;
    c = mul52(c, d);
  }
  x32[t] = a;
  x52[t] = c;
}

// ---- host: conversions through the library's 32-bit-limb arithmetic ----

// x 2^416 mod p for a canonical x
static fp_t to_mont416(const fp_t& x) {
  uint32_t two32[12] = {0, 1};
  return fp_t::mul(to_mont384(x), to_mont384(fp_from_u32(two32))).canonical();
}
// canonical 12-limb value of an fp52 limb vector (below 2^384), reduced mod p
static fp_t from52(const fp52& a) {
  uint32_t w[13] = {0};
  for (int i = 0; i < L; i++)
    for (int b = 0; b < 52; b++)
      if ((a.v[i] >> b) & 1) {
        const int bit = 52 * i + b;
        w[bit / 32] |= 1u << (bit % 32);
      }
  if (w[12]) return fp_t::zero();  // out of range: reported as a mismatch below
  fp_reduce_limbs(w);
  return fp_from_u32(w);
}
static fp52 to52(const fp_t& x) {
  fp52 r = {};
  fp_to_limbs(x, r.v, 52);
  return r;
}
int main() {
  // constants: p's 52-bit limbs and -p^-1 mod 2^52
  const uint32_t p32[12] = FP_MOD;
  const fp52 p52 = to52(fp_from_u32(p32));
  double hp[L];
  for (int i = 0; i < L; i++) hp[i] = (double)p52.v[i];
  const double pinv = (double)((0 - fp_inv64()) & M52);
  for (int i = 0; i < L; i++) h_p[i] = hp[i];
  h_pinv = pinv;
  if (getenv("FP52_HOST")) {  // check the algorithm on the host only (exact integer limb products)
    std::mt19937_64 r(7);
    uint32_t bad = 0, n = 20000;
    for (uint32_t i = 0; i < n; i++) {
      const fp_t x = random_fp(r), y = random_fp(r);
      const fp_t ab = fp_mul_plain(x, y);
      const fp_t want = to_mont416(ab), got = from52(mul52(to52(to_mont416(x)), to52(to_mont416(y))));
      for (int k = 0; k < 12; k++)
        if (got.v[k] != want.v[k]) {
          bad++;
          break;
        }
    }
    printf("host: %u of %u wrong\n", bad, n);
    return bad ? 1 : 0;
  }
  CK(cudaMemcpyToSymbol(d_p, hp, sizeof hp));
  CK(cudaMemcpyToSymbol(d_pinv, &pinv, sizeof pinv));

  // correctness: products of random elements below 2p (and edges) against
  // the library's product, compared as canonical values
  const uint32_t n = 1u << 16;
  std::mt19937_64 rng(2026);
  fp52 *a, *b, *o;
  CK(cudaMallocManaged(&a, n * sizeof(fp52)));
  CK(cudaMallocManaged(&b, n * sizeof(fp52)));
  CK(cudaMallocManaged(&o, n * sizeof(fp52)));
  std::vector<fp_t> xa(n), xb(n);
  for (uint32_t i = 0; i < n; i++) {
    xa[i] = random_fp(rng);
    xb[i] = random_fp(rng);
    if (i == 0) xa[i] = xb[i] = fp_t::zero();
    if (i == 1) {
      const uint32_t m1[12] = FP_MINUS_ONE_CANON;
      xa[i] = xb[i] = fp_from_u32(m1);
    }
    fp52 ua = to52(to_mont416(xa[i])), ub = to52(to_mont416(xb[i]));
    if (i & 1) {  // odd: the first operand as x R + p (inputs up to 2p)
      uint64_t carry = 0;
      for (int k = 0; k < L; k++) {
        const uint64_t s = ua.v[k] + p52.v[k] + carry;
        ua.v[k] = s & M52;
        carry = s >> 52;
      }
    }
    a[i] = ua;
    b[i] = ub;
  }
  k_check<probe_mul><<<n / 256, 256>>>(a, b, o, n);
  CK(cudaDeviceSynchronize());
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    // expected: (a b mod p) 2^416 mod p; a b mod p = from_mont(a 2^384 * b 2^384)
    const fp_t ab = fp_mul_plain(xa[i], xb[i]);
    const fp_t want = to_mont416(ab);
    const fp_t got = from52(o[i]);
    bool same = true;
    for (int k = 0; k < 12; k++) same &= got.v[k] == want.v[k];
    if (!same && bad++ < 3) printf("mismatch at %u\n", i);
  }
  printf("fp52 products: %u of %u wrong\n", bad, n);

  // throughput: chains of dependent products, 8 blocks of 256 per SM
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const uint32_t threads = sms * 8 * 256, iters = 4096;
  fp52 *x52, *y52;
  fp_t *x32, *y32;
  CK(cudaMalloc(&x52, threads * sizeof(fp52)));
  CK(cudaMalloc(&x32, threads * sizeof(fp_t)));
  CK(cudaMallocManaged(&y52, 1024 * sizeof(fp52)));
  CK(cudaMallocManaged(&y32, 1024 * sizeof(fp_t)));
  for (int i = 0; i < 1024; i++) {
    y52[i] = a[i];
    y32[i] = to_mont384(xa[i]);
  }
  gpu_timer timer;
  auto time = [&](auto launch) {
    launch(iters / 8);  // warm-up
    return timer([&] { launch(iters); });
  };
  const double prods = (double)threads * iters;
  printf("%-44s %10s %14s\n", "Fp product (chains per thread)", "ms", "G products/s");
  double best32 = 1e30, best52 = 1e30;
  auto row = [&](const char* what, double ms, double& best) {
    printf("%-44s %10.2f %14.1f\n", what, ms, prods / ms / 1e6);
    if (ms < best) best = ms;
  };
  row("library (12 x 32-bit limbs, IMAD), 1", time([&](uint32_t it) { k_chain<fp_t, 1><<<threads / 256, 256>>>(x32, y32, it); }), best32);
  row("library (12 x 32-bit limbs, IMAD), 2", time([&](uint32_t it) { k_chain<fp_t, 2><<<threads / 256, 256>>>(x32, y32, it); }), best32);
  row("fp52 (8 x 52-bit limbs, DFMA), 1", time([&](uint32_t it) { k_chain<fp52, 1><<<threads / 256, 256>>>(x52, y52, it); }), best52);
  row("fp52 (8 x 52-bit limbs, DFMA), 2", time([&](uint32_t it) { k_chain<fp52, 2><<<threads / 256, 256>>>(x52, y52, it); }), best52);
  printf("fp52 / library speed (best of each): %.2fx\n", best32 / best52);
  double mixed = 1e30;
  row("one chain on each: library + fp52", time([&](uint32_t it) { k_mixed<<<threads / 256, 256>>>(x32, y32, x52, y52, it); }), mixed);
  printf("both multipliers / library alone: %.2fx\n", best32 / mixed);
  return bad ? 1 : 0;
}
