// fp30: a prototype of the BLS12-381 Fp Montgomery product without carry
// chains (docs/cuda.md, "Tools"), measured against the
// library's own product (mont<FpParams>, 12 limbs of 32 bits, CIOS with
// madc chains) in the same binary.
//
// Why: the batch-affine kernel of the H MSM waits mostly on fixed-latency
// dependencies (ncu); the guess was the product's madc
// chains (each instruction waiting for the carry of the one before) with
// only four warps per scheduler at 128 registers. The answer (H200, nvcc
// 13.0): the library's product alone, in dependent chains at that shape,
// keeps the FMA-heavy pipe 90 % busy, so there is no latency to win back,
// and this product, with more instructions, runs at 0.71x.
//
// Representation: 13 limbs of 30 bits (390 bits), Montgomery form with
// R = 2^390, values below 2p. Each limb product a_j b_i (< 2^60) goes into
// its own 64-bit column accumulator with one mad.wide.u32 (IMAD.WIDE.U32
// with a 64-bit addend): no carry flag, so the 13 products of a row are
// independent instructions. Word-by-word Montgomery (CIOS order): row i adds
// a b_i, then m p with m = t_0 (-p^-1) mod 2^30, which clears t_0's low 30
// bits; t_0 >> 30 moves into t_1 and the frame shifts down one word. A
// column holds at most 2 products per row, so after row 5 every column is
// normalized once in parallel (low 30 bits plus the high part of the
// column below: no chain), leaving room for the 14 products of rows 6..12
// (14 * 2^60 < 2^64). Two more parallel passes at the end give limbs below
// 2^30 + 17, which are valid inputs (products stay below 2^60 + 2^35).
// The cost: 338 limb products instead of the library's 144 + 144; ptxas
// 11.8 emits them as IMAD.WIDE.U32 into zero and sums the
// columns with three-input IADD3 (341 IMAD.WIDE and 367 IADD3 in
// k_check), ~900 instructions per product against the library's 768.
//
// The check compares 2^16 random products (and edge operands), then each
// result times b again (limbs above 30 bits as inputs), with the
// library's host arithmetic (mont<FpParams>, the code TestHostArithmetic
// checks against gnark-crypto): got * 2^390 must equal a * b modulo p.
// The timing runs chains of dependent products, one or two per thread, in
// two shapes: 4 blocks of 128 threads per SM at most 128 registers (the
// batch-affine kernel's shape: 4 warps per scheduler) and 8 blocks of 256
// (16 warps per scheduler, where latency is hidden anyway).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DC2G_FP_MUL_CALL -I cuda/src \
//     -Xptxas -v -o fp30 cuda/tools/fp30.cu && ./fp30
//   FP30_ONCE=1 ncu --clock-control none -k regex:k_chain_lat -c 4 --metrics ... ./fp30
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "field.cuh"
#include "fp_probe.cuh"
#include "tool.cuh"

using c2g::fp_t;

constexpr int L = 13;
constexpr uint32_t M30 = (1u << 30) - 1;

struct fp30 {
  uint32_t v[L];
};

__constant__ uint32_t d_p30[L];  // p's 30-bit limbs
__constant__ uint32_t d_pinv30;  // -p^-1 mod 2^30

__device__ __forceinline__ uint64_t madw(uint32_t a, uint32_t b, uint64_t c) {
  uint64_t d;
  asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(d) : "r"(a), "r"(b), "l"(c));
  return d;
}

// One parallel normalization: t_j = (t_j mod 2^30) + floor(t_{j-1} / 2^30),
// every column at once (no chain). The value is unchanged when t_12 <
// 2^30 (its high part is dropped). H holds the high parts: uint64_t for
// columns up to 2^64 (high parts up to 2^34), uint32_t when every column
// is below 2^62.
template <class H>
__device__ __forceinline__ void pnorm(uint64_t* t) {
  H h[L];
#pragma unroll
  for (int j = 0; j < L; j++) h[j] = (H)(t[j] >> 30);
#pragma unroll
  for (int j = L - 1; j > 0; j--) t[j] = (t[j] & M30) + (uint64_t)h[j - 1];
  t[0] &= M30;
}

__device__ __forceinline__ fp30 mul30(const fp30& a, const fp30& b) {
  uint64_t t[L];
#pragma unroll
  for (int j = 0; j < L; j++) t[j] = 0;
#pragma unroll
  for (int i = 0; i < L; i++) {
    const uint32_t bi = b.v[i];
#pragma unroll
    for (int j = 0; j < L; j++) t[j] = madw(a.v[j], bi, t[j]);
    const uint32_t m = ((uint32_t)t[0] * d_pinv30) & M30;
#pragma unroll
    for (int j = 0; j < L; j++) t[j] = madw(m, d_p30[j], t[j]);
    const uint64_t c = t[0] >> 30;  // t_0 = 0 mod 2^30
#pragma unroll
    for (int j = 0; j < L - 1; j++) t[j] = t[j + 1];
    t[L - 1] = 0;
    t[0] += c;
    if (i == 5) pnorm<uint64_t>(t);  // t_12 = 0 here
  }
  pnorm<uint64_t>(t);  // t_12 < 2^22: the value is below 2p < 2^382
  pnorm<uint32_t>(t);  // columns < 2^30 + 2^34: high parts < 2^5
  fp30 r;
#pragma unroll
  for (int j = 0; j < L; j++) r.v[j] = (uint32_t)t[j];
  return r;
}

// Both products under one name for product_chains.
struct probe_mul : lib_mul {
  using lib_mul::operator();
  __device__ __forceinline__ fp30 operator()(const fp30& a, const fp30& b) const { return mul30(a, b); }
};

// Chains of products (fp_probe.cuh) in two shapes: LAT the batch-affine
// kernel's (128 threads, 4 blocks per SM, at most 128 registers), WIDE
// 256 threads.
template <class T, int CHAINS>
__global__ void __launch_bounds__(128, 4) k_chain_lat(T* x, const T* y, uint32_t iters) {
  product_chains<T, CHAINS>(x, y, iters, probe_mul{});
}
template <class T, int CHAINS>
__global__ void __launch_bounds__(256) k_chain_wide(T* x, const T* y, uint32_t iters) {
  product_chains<T, CHAINS>(x, y, iters, probe_mul{});
}

// ---- host: conversions through the library's 32-bit-limb arithmetic ----

static fp_t to_mont390(const fp_t& x) {  // x 2^390 mod p for a canonical x
  const uint32_t sixty_four[12] = {64};
  return fp_t::mul(to_mont384(x), to_mont384(fp_from_u32(sixty_four))).canonical();
}
// canonical value of a limb vector whose limbs may exceed 30 bits (below
// 2^384 in all), reduced mod p; out of range gives all ones (a mismatch)
static fp_t from30(const fp30& a) {
  uint32_t w[14] = {0};
  for (int i = 0; i < L; i++) {  // add a_i 2^(30 i)
    const int bit = 30 * i, k = bit / 32, s = bit % 32;
    unsigned __int128 add = (unsigned __int128)a.v[i] << s;
    for (int q = k; q < 14 && add; q++) {
      const unsigned __int128 sum = (unsigned __int128)w[q] + (uint32_t)add;
      w[q] = (uint32_t)sum;
      add = (add >> 32) + (sum >> 32);
    }
  }
  if (w[12] || w[13]) {
    fp_t bad;
    for (int i = 0; i < 12; i++) bad.v[i] = 0xffffffffu;
    return bad;
  }
  fp_reduce_limbs(w);
  return fp_from_u32(w);
}
static fp30 to30(const fp_t& x) {
  fp30 r = {};
  fp_to_limbs(x, r.v, 30);
  return r;
}
int main() {
  const uint32_t p32[12] = FP_MOD;
  const fp30 p30 = to30(fp_from_u32(p32));
  const uint32_t pinv30 = (uint32_t)(0 - fp_inv64()) & M30;
  CK(cudaMemcpyToSymbol(d_p30, p30.v, sizeof p30.v));
  CK(cudaMemcpyToSymbol(d_pinv30, &pinv30, sizeof pinv30));

  // correctness: random elements below p (and edges), the first operand of
  // odd pairs plus p (inputs up to 2p), against the library's product; then
  // the outputs (limbs up to 2^30 + 16) multiplied by b again
  const uint32_t n = 1u << 16;
  std::mt19937_64 rng(2026);
  fp30 *a, *b, *o;
  CK(cudaMallocManaged(&a, n * sizeof(fp30)));
  CK(cudaMallocManaged(&b, n * sizeof(fp30)));
  CK(cudaMallocManaged(&o, n * sizeof(fp30)));
  std::vector<fp_t> xa(n), xb(n);
  const uint32_t m1[12] = FP_MINUS_ONE_CANON;
  for (uint32_t i = 0; i < n; i++) {
    xa[i] = random_fp(rng);
    xb[i] = random_fp(rng);
    if (i == 0) xa[i] = xb[i] = fp_t::zero();
    if (i == 1 || i == 2) xa[i] = xb[i] = fp_from_u32(m1);
    fp30 ua = to30(to_mont390(xa[i])), ub = to30(to_mont390(xb[i]));
    if (i & 1) {  // x R + p
      uint32_t carry = 0;
      for (int k = 0; k < L; k++) {
        const uint32_t s = ua.v[k] + p30.v[k] + carry;
        ua.v[k] = s & M30;
        carry = s >> 30;
      }
    }
    a[i] = ua;
    b[i] = ub;
  }
  fp30* o2;
  CK(cudaMallocManaged(&o2, n * sizeof(fp30)));
  k_check<probe_mul><<<n / 256, 256>>>(a, b, o, n);
  CK(cudaDeviceSynchronize());
  k_check<probe_mul><<<n / 256, 256>>>(o, b, o2, n);
  CK(cudaDeviceSynchronize());
  uint32_t bad = 0, over = 0;
  for (uint32_t i = 0; i < n; i++) {
    const fp_t ab = fp_mul_plain(xa[i], xb[i]), abb = fp_mul_plain(ab, xb[i]);
    const fp_t want[2] = {to_mont390(ab), to_mont390(abb)};
    const fp30* out[2] = {o, o2};
    for (int r = 0; r < 2; r++) {
      const fp_t got = from30(out[r][i]);
      for (int k = 0; k < L; k++) over += out[r][i].v[k] > M30 + 17;
      bool same = true;
      for (int k = 0; k < 12; k++) same &= got.v[k] == want[r].v[k];
      if (!same && bad++ < 3) printf("mismatch at %u (pass %d)\n", i, r);
    }
  }
  printf("fp30 products: %u of %u wrong, %u limbs above 2^30 + 17\n", bad, 2 * n, over);

  // chained inputs: the outputs themselves (redundant limbs) fed back
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const uint32_t iters = 4096;
  const uint32_t wide = sms * 8 * 256, lat = sms * 4 * 128;
  fp30 *x30, *y30;
  fp_t *x32, *y32;
  CK(cudaMalloc(&x30, wide * sizeof(fp30)));
  CK(cudaMalloc(&x32, wide * sizeof(fp_t)));
  CK(cudaMallocManaged(&y30, 1024 * sizeof(fp30)));
  CK(cudaMallocManaged(&y32, 1024 * sizeof(fp_t)));
  for (int i = 0; i < 1024; i++) {
    y30[i] = o[i];  // product outputs: limbs up to 2^30 + 16
    y32[i] = to_mont384(xa[i]);
  }
  gpu_timer timer;
  const bool once = getenv("FP30_ONCE") != nullptr;  // one launch per kernel (for ncu -k regex:k_chain_lat -c 4)
  auto time = [&](auto launch) {
    if (once) return timer([&] { launch(iters); });
    launch(iters / 8);  // warm-up
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
      const double ms = timer([&] { launch(iters); });
      if (ms < best) best = ms;
    }
    return best;
  };
  printf("%-56s %9s %13s\n", "Fp product (shape, chains per thread)", "ms", "G products/s");
  auto row = [&](const char* what, uint32_t threads, double ms) {
    printf("%-56s %9.2f %13.1f\n", what, ms, (double)threads * iters / ms / 1e6);
    return ms;
  };
  const double l1 = row("library, 4 x 128 per SM (<= 128 regs), 1", lat,
                        time([&](uint32_t it) { k_chain_lat<fp_t, 1><<<lat / 128, 128>>>(x32, y32, it); }));
  const double l2 = row("library, 4 x 128 per SM (<= 128 regs), 2", lat,
                        time([&](uint32_t it) { k_chain_lat<fp_t, 2><<<lat / 128, 128>>>(x32, y32, it); }));
  const double f1 = row("fp30,    4 x 128 per SM (<= 128 regs), 1", lat,
                        time([&](uint32_t it) { k_chain_lat<fp30, 1><<<lat / 128, 128>>>(x30, y30, it); }));
  const double f2 = row("fp30,    4 x 128 per SM (<= 128 regs), 2", lat,
                        time([&](uint32_t it) { k_chain_lat<fp30, 2><<<lat / 128, 128>>>(x30, y30, it); }));
  const double w1 = row("library, 8 x 256 per SM, 1", wide,
                        time([&](uint32_t it) { k_chain_wide<fp_t, 1><<<wide / 256, 256>>>(x32, y32, it); }));
  const double v1 = row("fp30,    8 x 256 per SM, 1", wide,
                        time([&](uint32_t it) { k_chain_wide<fp30, 1><<<wide / 256, 256>>>(x30, y30, it); }));
  printf("fp30 / library speed: 4x128 one chain %.2fx, two chains %.2fx; 8x256 %.2fx\n", l1 / f1, l2 / f2, w1 / v1);
  return bad || over ? 1 : 0;
}
