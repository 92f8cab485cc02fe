// affine_batch: how fast can G1 (and G2) bucket additions go in affine
// coordinates with batched inversions, against the library's XYZZ mixed
// additions (docs/cuda.md, "Tools")? The accumulation of the MSM
// runs its IMAD pipe 88 % busy at 8M + 2S per addition; an affine addition
// whose inversion is shared costs 5M + 1S plus its share of the inversion.
// A warp instruction costs the same for 1 active lane as for 32, so the
// batch must be per lane: here each lane owns B independent accumulators
// (affine, in global memory) and adds one point to each per round, with one
// inversion per lane and round (Montgomery's trick, prefix products in
// global memory): by Fermat (f_inv, ~570 products on the IMAD pipe) or,
// with -DAB_INV_GCD=1, by the library's binary extended Euclid
// (fp_inverse in field.cuh, which the MSM now uses: shifts and subtractions
// on the ALU pipe, checked against gnark-crypto by TestHostArithmetic; G2's
// Fp2 inverse goes through the norm). -DAB_MIN_BLOCKS=4 caps the
// kernel at 128 registers (4 warps per scheduler). Points are gathered at
// random from a table of 2^24 distinct points, as the MSM gathers its
// bases. The baseline adds the same number of points into one XYZZ
// accumulator per lane (the library's add_affine, as k_accumulate does).
// For each group a first run compares at equal work (each lane's 2,048
// points to one sum: XYZZ, or batch-affine then an XYZZ merge of the lane's
// partial sums; the two sums compared); for G1 a sweep over (B, K) follows,
// every affine accumulator checked on the device against the XYZZ sum of
// its points. Equal x (doubling, P + (-P)) is left out: the table's points
// are random multiples of G, so it does not occur.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DC2G_FP_MUL_CALL -DC2G_FP2_INLINE \
//     -DC2G_POINT_INLINE -DAB_MIN_BLOCKS=4 -DAB_INV_GCD=1 -I cuda/src -o affine_batch \
//     cuda/tools/affine_batch.cu && ./affine_batch
#include <cstdint>
#include <cstdio>
#include <string>

#include "affine.cuh"
#include "common.cuh"
#include "tool.cuh"

using namespace c2g;

constexpr uint32_t TABLE_LOG = 24;  // gathered table of 2^24 points (1.6 GB)
constexpr uint32_t LANES = 1u << 16, THREADS = 128, BLOCKS = LANES / THREADS;  // lanes, and their launch shape

__host__ __device__ __forceinline__ uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// lane t, accumulator j, round r: the point's index in the table. A random
// start per (t, j), then an odd stride: an accumulator never meets the same
// table entry twice.
__device__ __forceinline__ uint32_t point_of(uint32_t t, uint32_t j, uint32_t r) {
  const uint32_t start = (uint32_t)mix64(((uint64_t)t << 32) | j);
  return (start + r * 0x9E3779B1u) & ((1u << TABLE_LOG) - 1);
}

// The group's generator (G1 over Fp, G2 over Fp2).
template <class F>
__device__ affine_t<F> generator();
template <>
__device__ affine_t<fp_t> generator<fp_t>() {
  const uint32_t x[12] = G1_GEN_X, y[12] = G1_GEN_Y;
  return affine_t<fp_t>{fp_t::from_limbs(x), fp_t::from_limbs(y)};
}
template <>
__device__ affine_t<fp2_t> generator<fp2_t>() {
  const uint32_t x0[12] = G2_GEN_X0, x1[12] = G2_GEN_X1, y0[12] = G2_GEN_Y0, y1[12] = G2_GEN_Y1;
  return affine_t<fp2_t>{fp2_t{fp_t::from_limbs(x0), fp_t::from_limbs(x1)},
                         fp2_t{fp_t::from_limbs(y0), fp_t::from_limbs(y1)}};
}

// table[i] = k_i G for a random 64-bit k_i: distinct points whose sums do
// not meet another entry (an affine addition of equal x would need the
// doubling formula, which this probe leaves out).
template <class F>
__global__ void k_fill(affine_t<F>* table) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (1u << TABLE_LOG)) return;
  table[t] = to_affine(xyzz_t<F>::from_affine(generator<F>()).mul_u64(mix64(t + 1) | 1));
}

// ---- inversion: by Fermat (f_inv, ~570 products on the IMAD pipe) or,
// with -DAB_INV_GCD=1, by the library's binary extended Euclid
// (fp_inverse, field.cuh: shifts and subtractions on the ALU pipe).

#ifndef AB_INV_GCD
#define AB_INV_GCD 0  // 1: the batch inversions by inv_gcd instead of f_inv
#endif

__device__ __forceinline__ fp_t inverse(const fp_t& x) { return AB_INV_GCD ? fp_inverse(x) : f_inv(x); }
// 1/(a + b u) = (a - b u) / (a^2 + b^2)
__device__ __forceinline__ fp2_t inverse(const fp2_t& x) { return x.inverse_by_norm(inverse(x.norm())); }

// Baseline: B*K points into one XYZZ accumulator per lane.
template <class F>
__global__ void __launch_bounds__(128) k_xyzz(const affine_t<F>* __restrict__ table, uint32_t B, uint32_t K,
                                              xyzz_t<F>* out) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  xyzz_t<F> acc = xyzz_t<F>::inf();
  for (uint32_t j = 0; j < B; j++)
    for (uint32_t r = 0; r < K; r++) acc.add_affine(ldg_vec(table + point_of(t, j, r)));
  out[t] = acc;
}

// Batch-affine: lane t owns accumulators j < B (ax/ay[j*T + t]); round r
// adds point (t, j, r) to each, one inversion per lane and round.
#ifndef AB_MIN_BLOCKS
#define AB_MIN_BLOCKS 1  // 4: at most 128 registers, 4 warps per scheduler
#endif
template <class F>
__global__ void __launch_bounds__(128, AB_MIN_BLOCKS) k_affine(const affine_t<F>* __restrict__ table, uint32_t B,
                                                               uint32_t K, F* ax, F* ay, F* pf) {
  const uint32_t T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  for (uint32_t j = 0; j < B; j++) {
    const affine_t<F> p = ldg_vec(table + point_of(t, j, 0));
    ax[j * T + t] = p.X;
    ay[j * T + t] = p.Y;
  }
  for (uint32_t r = 1; r < K; r++) {
    F prod = field_consts<F>::one();
    for (uint32_t j = 0; j < B; j++) {
      const F px = ldg_vec(table + point_of(t, j, r)).X;
      prod = prod * (px - ax[j * T + t]);
      pf[j * T + t] = prod;
    }
    F inv = inverse(prod);
    for (uint32_t j = B; j-- > 0;) {
      const affine_t<F> p = ldg_vec(table + point_of(t, j, r));
      const F x1 = ax[j * T + t], y1 = ay[j * T + t];
      const F d = p.X - x1;
      const F dinv = j ? inv * pf[(j - 1) * T + t] : inv;
      inv = inv * d;
      const F l = (p.Y - y1) * dinv;
      const F x3 = l.sqr() - x1 - p.X;
      ay[j * T + t] = l * (x1 - x3) - y1;
      ax[j * T + t] = x3;
    }
  }
}

// The lane's B partial sums merged into one (XYZZ mixed additions): with
// k_affine, the same work as k_xyzz's B*K points per lane.
template <class F>
__global__ void __launch_bounds__(128) k_merge(uint32_t B, const F* ax, const F* ay, xyzz_t<F>* out) {
  const uint32_t T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  xyzz_t<F> acc = xyzz_t<F>::inf();
  for (uint32_t j = 0; j < B; j++) acc.add_affine(affine_t<F>{ax[j * T + t], ay[j * T + t]});
  out[t] = acc;
}

// Lanes whose two XYZZ sums differ (cross-multiplied coordinates).
template <class F>
__global__ void k_same(const xyzz_t<F>* a, const xyzz_t<F>* b, uint32_t* bad) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const xyzz_t<F> p = a[t], q = b[t];
  if (!(p.X * q.ZZ == q.X * p.ZZ) || !(p.Y * q.ZZZ == q.Y * p.ZZZ) || p.is_inf() != q.is_inf()) atomicAdd(bad, 1u);
}

// Each (lane, accumulator) against the XYZZ sum of its K points.
template <class F>
__global__ void k_check(const affine_t<F>* __restrict__ table, uint32_t B, uint32_t K, const F* ax, const F* ay,
                        uint32_t* bad) {
  const uint32_t T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  for (uint32_t j = 0; j < B; j++) {
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t r = 0; r < K; r++) acc.add_affine(table[point_of(t, j, r)]);
    const bool ok = !acc.is_inf() && (acc.X - ax[j * T + t] * acc.ZZ).is_zero() &&
                    (acc.Y - ay[j * T + t] * acc.ZZZ).is_zero();
    if (!ok) atomicAdd(bad, 1u);
  }
}

// The batch-affine kernel's device memory for B accumulators in each of the
// LANES lanes: coordinates and prefix products, freed on scope exit.
template <class F>
struct batch_scratch {
  F *ax = nullptr, *ay = nullptr, *pf = nullptr;
  explicit batch_scratch(uint32_t B) {
    const size_t bytes = (size_t)B * LANES * sizeof(F);
    CK(cudaMalloc(&ax, bytes));
    CK(cudaMalloc(&ay, bytes));
    CK(cudaMalloc(&pf, bytes));
  }
  ~batch_scratch() {
    cudaFree(ax);
    cudaFree(ay);
    cudaFree(pf);
  }
  batch_scratch(const batch_scratch&) = delete;
  batch_scratch& operator=(const batch_scratch&) = delete;
};

// Batch-affine alone over (B, K) pairs, every accumulator checked; the
// same B at two K gives the rate of the rounds alone (the first point of
// every accumulator is a load, not an addition). base: the XYZZ run's ms
// for 2^27 additions.
template <class F>
void sweep_shapes(const affine_t<F>* table, double base, uint32_t* bad) {
  gpu_timer timed;
  const uint32_t shapes[][2] = {{64, 33}, {256, 8}, {256, 3}, {256, 17}, {1024, 3}, {1024, 9}, {2048, 3}, {2048, 5}};
  double prev_ms = 0, prev_adds = 0;
  uint32_t prev_b = 0;
  for (const auto& sh : shapes) {
    const uint32_t B = sh[0], K = sh[1];
    batch_scratch<F> sc(B);
    const double ms = timed([&] { k_affine<F><<<BLOCKS, THREADS>>>(table, B, K, sc.ax, sc.ay, sc.pf); });
    *bad = 0;
    k_check<F><<<BLOCKS, THREADS>>>(table, B, K, sc.ax, sc.ay, bad);
    CK(cudaDeviceSynchronize());
    const double adds = (double)LANES * B * (K - 1);
    char what[64];
    snprintf(what, sizeof what, "batch-affine, B = %u per lane, %u rounds", B, K - 1);
    printf("%-44s %10.2f %16.2f   %u of %u sums wrong\n", what, ms, adds / ms / 1e6, *bad, LANES * B);
    if (B == prev_b)
      printf("%-44s %10s %16.2f   (%.2fx the XYZZ rate)\n", "  ... the extra rounds alone", "",
             (adds - prev_adds) / (ms - prev_ms) / 1e6, (adds - prev_adds) / (ms - prev_ms) / ((double)(1u << 27) / base));
    prev_b = B, prev_ms = ms, prev_adds = adds;
  }
}


// Times and checks the additions of one group (sweep: also the (B, K) table).
template <class F>
void run(const char* name, bool sweep) {
  affine_t<F>* table;
  CK(cudaMalloc(&table, (1ull << TABLE_LOG) * sizeof(affine_t<F>)));
  k_fill<F><<<(1u << TABLE_LOG) / 128, 128>>>(table);
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());

  gpu_timer timed;
  xyzz_t<F>* out;
  CK(cudaMalloc(&out, LANES * sizeof(xyzz_t<F>)));
  uint32_t* bad;
  CK(cudaMallocManaged(&bad, sizeof(uint32_t)));
  printf("%-44s %10s %16s\n", (std::string(name) + " additions (2^16 lanes, random gathers)").c_str(), "ms", "G additions/s");
  // the baseline: 2^27 additions (one window of the H MSM), 2,048 per lane
  k_xyzz<F><<<BLOCKS, THREADS>>>(table, 64, 4, out);  // warm-up
  const double base = timed([&] { k_xyzz<F><<<BLOCKS, THREADS>>>(table, 64, 32, out); });
  printf("%-44s %10.2f %16.2f\n", "XYZZ mixed additions (library)", base, (double)(1u << 27) / base / 1e6);
  // batch-affine: B accumulators per lane, K points each (K - 1 additions)
  // Equal work: B*K points per lane summed to one point, by XYZZ additions,
  // or by B batch-affine accumulators of K points each and then their
  // merge; both sums compared. (256, 8) is one 2^27-point window, as the H
  // MSM has it; (1024, 8), four windows' worth per pass (G1 only).
  const uint32_t equal[][2] = {{256, 8}, {1024, 8}};
  for (const auto& eq : equal) {
    const uint32_t B = eq[0], K = eq[1];
    if (B > 256 && !sweep) break;
    batch_scratch<F> sc(B);
    xyzz_t<F>* out2;
    CK(cudaMalloc(&out2, LANES * sizeof(xyzz_t<F>)));
    const double tx = timed([&] { k_xyzz<F><<<BLOCKS, THREADS>>>(table, B, K, out); });
    const double ta = timed([&] { k_affine<F><<<BLOCKS, THREADS>>>(table, B, K, sc.ax, sc.ay, sc.pf); });
    const double tm = timed([&] { k_merge<F><<<BLOCKS, THREADS>>>(B, sc.ax, sc.ay, out2); });
    *bad = 0;
    k_same<F><<<BLOCKS, THREADS>>>(out, out2, bad);
    CK(cudaDeviceSynchronize());
    char what[64];
    snprintf(what, sizeof what, "%u points per lane, XYZZ", B * K);
    printf("%-44s %10.2f\n", what, tx);
    snprintf(what, sizeof what, "%u points per lane, batch-affine + merge", B * K);
    printf("%-44s %10.2f   (%.2f + merge %.2f; %.2fx; %u of %u lane sums differ)\n", what, ta + tm, ta, tm,
           tx / (ta + tm), *bad, LANES);
    CK(cudaFree(out2));
  }
  if (sweep) sweep_shapes<F>(table, base, bad);
  CK(cudaFree(table));
  CK(cudaFree(out));
  CK(cudaFree(bad));
}
int main() {
  run<fp_t>("G1", true);
  run<fp2_t>("G2", false);
  return 0;
}
