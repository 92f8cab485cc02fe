// pipes: throughput of the multipliers a field product can use on this GPU
// (docs/cuda.md, "Tools"). Kernels of independent chains of
// 32x32->64-bit integer multiply-adds (IMAD.WIDE.U32, the FMA-heavy pipe
// every Fp/Fr product runs on today), of FP64 fused multiply-adds (DFMA,
// the FP64 pipe), and of both interleaved; prints the rate of each per SM
// and clock, and whether the mix runs as fast as its slower half alone
// (the two pipes overlap) or as their sum (they do not). Also checks on the
// device that two round-toward-zero DFMAs give the exact 104-bit product of
// two 52-bit integers (hi and lo words read from the doubles' mantissas),
// the building block of an FP64 field product.
//
//   nvcc -O3 -arch=sm_90 -o pipes cuda/tools/pipes.cu && ./pipes
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "tool.cuh"

constexpr int CH = 8;  // independent chains per thread and pipe

__device__ __forceinline__ uint64_t mad_wide(uint32_t a, uint32_t b, uint64_t c) {
  uint64_t r;
  asm volatile("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
  return r;
}

// INT: IMAD.WIDE.U32 chains; FP: DFMA chains; ADD: 64-bit integer addition
// chains (IADD3 + IADD3.X pairs: where an FP64 product's column sums would go)
template <bool INT, bool FP, bool ADD = false>
__global__ void k_pipes(uint32_t iters, uint32_t seed, uint64_t* out_i, double* out_d) {
  uint64_t acc[CH], s[CH];
  double d[CH];
  uint32_t m = seed ^ threadIdx.x;
  const double dm = 1.0000001 + (double)(threadIdx.x & 7) * 1e-9;
#pragma unroll
  for (int k = 0; k < CH; k++) {
    acc[k] = seed + k;
    s[k] = seed * (k + 3);
    d[k] = 0.5 + k * 1e-3;
  }
  const uint64_t inc = ((uint64_t)m << 32) | (m * 5u + 1);
  for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < CH; k++) {
      if (INT) acc[k] = mad_wide((uint32_t)acc[k], m + k, acc[k] >> 32);
      if (FP) d[k] = fma(d[k], dm, -0.25);
      if (ADD) s[k] += inc + (s[k] >> 13);
    }
  }
  uint64_t si = 0;
  double sd = 0;
#pragma unroll
  for (int k = 0; k < CH; k++) {
    si += acc[k] + s[k];
    sd += d[k];
  }
  const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (INT || ADD) out_i[t] = si;
  if (FP) out_d[t] = sd;
}

// Exact 52x52-bit product by two DFMAs (round toward zero): hi = a b + 2^104
// keeps the top 52 bits of a b in the mantissa (ulp 2^52); lo = a b - (hi -
// 2^104) + 2^52 is then exact and holds the low 52 bits.
__global__ void k_exact(const uint64_t* a, const uint64_t* b, uint64_t* hi, uint64_t* lo, uint32_t n) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const double c1 = 0x1p104, c2 = 0x1p104 + 0x1p52;
  const double x = (double)a[t], y = (double)b[t];
  const double h = __fma_rz(x, y, c1);
  const double l = __fma_rz(x, y, c2 - h);
  hi[t] = (uint64_t)__double_as_longlong(h) - (uint64_t)__double_as_longlong(c1);
  lo[t] = (uint64_t)__double_as_longlong(l) - (uint64_t)__double_as_longlong(0x1p52);
}

template <bool INT, bool FP, bool ADD = false>
double run(int sms, uint32_t iters, uint64_t* oi, double* od) {
  const int blocks = sms * 8, threads = 256;
  k_pipes<INT, FP, ADD><<<blocks, threads>>>(iters / 8, 1, oi, od);  // warm-up
  return gpu_timer{}([&] { k_pipes<INT, FP, ADD><<<blocks, threads>>>(iters, 7, oi, od); });
}

int main() {
  int dev = 0, sms = 0, clk_khz = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  const uint32_t iters = 1u << 16;
  const uint64_t threads = (uint64_t)sms * 8 * 256;
  uint64_t* oi;
  double* od;
  CK(cudaMalloc(&oi, threads * sizeof(uint64_t)));
  CK(cudaMalloc(&od, threads * sizeof(double)));
  const double ops = (double)threads * iters * CH;  // per pipe
  const double ti = run<true, false>(sms, iters, oi, od);
  const double tf = run<false, true>(sms, iters, oi, od);
  const double tb = run<true, true>(sms, iters, oi, od);
  const double ta = run<false, false, true>(sms, iters, oi, od);
  const double tfa = run<false, true, true>(sms, iters, oi, od);
  const double cyc = 1e-3 * clk_khz * 1e3;  // clocks per ms at the rated clock
  auto rate = [&](double ms) { return ops / (ms * cyc) / sms; };
  printf("device %s, %d SMs, rated clock %.0f MHz\n", prop.name, sms, clk_khz / 1e3);
  printf("%-34s %10s %16s\n", "kernel", "ms", "ops/SM/clock");
  printf("%-34s %10.2f %16.1f\n", "IMAD.WIDE.U32 chains", ti, rate(ti));
  printf("%-34s %10.2f %16.1f\n", "DFMA chains", tf, rate(tf));
  printf("%-34s %10.2f %16.1f (each pipe)\n", "both interleaved", tb, rate(tb));
  printf("overlap: both take %.2f of the slower alone (1.00 = full overlap, %.2f = none)\n",
         tb / (ti > tf ? ti : tf), (ti + tf) / (ti > tf ? ti : tf));
  printf("%-34s %10.2f %16.1f\n", "64-bit add chains (shift + add)", ta, rate(ta));
  printf("%-34s %10.2f %16.1f (each)\n", "DFMA + 64-bit adds interleaved", tfa, rate(tfa));
  printf("overlap: DFMA + adds take %.2f of the slower alone (%.2f = none)\n", tfa / (ta > tf ? ta : tf),
         (ta + tf) / (ta > tf ? ta : tf));

  // exactness of the two-DFMA product on random 52-bit operands (and edges)
  const uint32_t n = 1u << 20;
  uint64_t *a, *b, *hi, *lo;
  CK(cudaMallocManaged(&a, n * 8));
  CK(cudaMallocManaged(&b, n * 8));
  CK(cudaMallocManaged(&hi, n * 8));
  CK(cudaMallocManaged(&lo, n * 8));
  std::mt19937_64 rng(12345);
  const uint64_t mask = (1ull << 52) - 1;
  for (uint32_t i = 0; i < n; i++) {
    a[i] = rng() & mask;
    b[i] = rng() & mask;
  }
  a[0] = b[0] = mask;
  a[1] = 0, b[1] = mask;
  a[2] = 1, b[2] = 1;
  k_exact<<<(n + 255) / 256, 256>>>(a, b, hi, lo, n);
  CK(cudaDeviceSynchronize());
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    const unsigned __int128 p = (unsigned __int128)a[i] * b[i];
    if (hi[i] != (uint64_t)(p >> 52) || lo[i] != (uint64_t)(p & mask)) bad++;
  }
  printf("two-DFMA 52x52-bit products: %u of %u wrong\n", bad, n);
  return bad ? 1 : 0;
}
