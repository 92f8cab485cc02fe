// Pseudo-random test data generated on the device: scalars with a chosen
// share of 0/1 values, and distinct curve points (benchmarks need valid,
// distinct bases of realistic size without hours of host work).
#include "random.cuh"

#include "affine.cuh"

namespace c2g {

__host__ __device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void k_random_fr(fr_t* out, uint64_t n, uint64_t seed, double frac01) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    uint64_t h = splitmix64(seed ^ splitmix64(i));
    fr_t x;
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
    if (u < frac01) {
      if (h & 1) {
        const uint32_t one[8] = FR_ONE;
        x = fr_t::from_limbs(one);
      } else {
        x = fr_t::zero();
      }
    } else {
      for (int k = 0; k < 4; k++) {
        h = splitmix64(h + k);
        x.v[2 * k] = (uint32_t)h;
        x.v[2 * k + 1] = (uint32_t)(h >> 32);
      }
      x.v[7] &= 0x3fffffffu;  // < 2^254 < r: a valid Montgomery representation
    }
    out[i] = x;
  }
}

template <class F>
struct generator;
template <>
struct generator<fp_t> {
  static __device__ affine_t<fp_t> get() {
    const uint32_t x[12] = G1_GEN_X, y[12] = G1_GEN_Y;
    return affine_t<fp_t>{fp_t::from_limbs(x), fp_t::from_limbs(y)};
  }
};
template <>
struct generator<fp2_t> {
  static __device__ affine_t<fp2_t> get() {
    const uint32_t x0[12] = G2_GEN_X0, x1[12] = G2_GEN_X1, y0[12] = G2_GEN_Y0, y1[12] = G2_GEN_Y1;
    return affine_t<fp2_t>{fp2_t{fp_t::from_limbs(x0), fp_t::from_limbs(x1)},
                           fp2_t{fp_t::from_limbs(y0), fp_t::from_limbs(y1)}};
  }
};

// table[i] = k_i * G for a random 64-bit k_i.
template <class F>
__global__ void k_random_table(affine_t<F>* table, uint64_t n, uint64_t seed) {
  uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t k = splitmix64(seed ^ splitmix64(i + 0x1234567ull)) | 1;
  xyzz_t<F> g = xyzz_t<F>::from_affine(generator<F>::get());
  table[i] = to_affine(g.mul_u64(k));
}

constexpr uint32_t RP_BATCH = 8;
constexpr uint32_t RP_T1 = 1024;

// out[i] = t1[i % 1024] + t2[i / 1024], converted with one inversion per
// RP_BATCH points (Montgomery's trick).
template <class F>
__global__ void __launch_bounds__(128) k_random_points(affine_t<F>* out, uint64_t n, const affine_t<F>* t1,
                                                       const affine_t<F>* t2) {
  uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  uint64_t s = t * RP_BATCH;
  if (s >= n) return;
  xyzz_t<F> p[RP_BATCH];
  for (uint32_t k = 0; k < RP_BATCH; k++) {
    uint64_t i = s + k;
    if (i < n) {
      p[k] = xyzz_t<F>::from_affine(t2[i / RP_T1]);
      p[k].add_affine(t1[i % RP_T1]);
    } else {
      p[k] = xyzz_t<F>::inf();
    }
  }
  batch_to_affine(p, out, s, n);
}

void random_fr(fr_t* out, uint64_t n, uint64_t seed, double frac01, cudaStream_t st) {
  if (n == 0) return;
  uint64_t blocks = (n + 255) / 256;
  if (blocks > 65535) blocks = 65535;
  C2G_LAUNCH(k_random_fr, (uint32_t)blocks, 256, 0, st, out, n, seed, frac01);
  CK_LAUNCH("k_random_fr");
}

template <class F>
void random_points(affine_t<F>* out, uint64_t n, uint64_t seed, cudaStream_t st) {
  if (n == 0) return;
  uint64_t n2 = (n + RP_T1 - 1) / RP_T1;
  dev_alloc tabs((RP_T1 + n2) * sizeof(affine_t<F>), st);
  affine_t<F>* t1 = tabs.as<affine_t<F>>();
  affine_t<F>* t2 = t1 + RP_T1;
  C2G_LAUNCH(k_random_table<F>, grid_for(RP_T1, 64), 64, 0, st, t1, RP_T1, splitmix64(seed));
  CK_LAUNCH("k_random_table");
  C2G_LAUNCH(k_random_table<F>, grid_for(n2, 64), 64, 0, st, t2, n2, splitmix64(seed + 1));
  CK_LAUNCH("k_random_table");
  uint64_t threads = (n + RP_BATCH - 1) / RP_BATCH;
  C2G_LAUNCH(k_random_points<F>, grid_for(threads, 128), 128, 0, st, out, n, t1, t2);
  CK_LAUNCH("k_random_points");
  CK(cudaStreamSynchronize(st));
}

template void random_points<fp_t>(affine_t<fp_t>*, uint64_t, uint64_t, cudaStream_t);
template void random_points<fp2_t>(affine_t<fp2_t>*, uint64_t, uint64_t, cudaStream_t);

}  // namespace c2g
