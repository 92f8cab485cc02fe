// Curve-independent MSM kernels: scalar conversion, classification, signed
// digits and bucket bounds.
#include "digits.cuh"
#include "msm.cuh"

namespace c2g {

__global__ void k_fr_from_mont(const fr_t* in, fr_t* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    out[i] = ldg_vec(in + i).from_mont();
}

// Per tile of CL_TILE scalars: how many fall in each listed class.
__global__ void __launch_bounds__(CL_THREADS) k_class_count(const fr_t* sc, uint32_t n, class_ptrs cnt) {
  __shared__ uint32_t sh[MSM_CLASS_LISTS];
  if (threadIdx.x < MSM_CLASS_LISTS) sh[threadIdx.x] = 0;
  __syncthreads();
  uint32_t c[MSM_CLASS_LISTS] = {};
  uint64_t base = (uint64_t)blockIdx.x * CL_TILE;
  for (uint32_t k = 0; k < CL_ITEMS; k++) {
    uint64_t i = base + k * CL_THREADS + threadIdx.x;
    if (i < n) {
      const int cl = scalar_class(ldg_vec(sc + i));
      for (int l = 0; l < MSM_CLASS_LISTS; l++) c[l] += cl == l + 1;
    }
  }
  for (int l = 0; l < MSM_CLASS_LISTS; l++) {
    c[l] = __reduce_add_sync(0xffffffffu, c[l]);
    if ((threadIdx.x & 31) == 0) atomicAdd(&sh[l], c[l]);
  }
  __syncthreads();
  if (threadIdx.x < MSM_CLASS_LISTS) cnt.p[threadIdx.x][blockIdx.x] = sh[threadIdx.x];
}

// Order-preserving scatter of the scalars' indices into their class's list;
// off holds the exclusive sums of the per-tile counts.
__global__ void __launch_bounds__(CL_THREADS) k_class_scatter(const fr_t* sc, uint32_t n, class_ptrs off,
                                                              class_ptrs idx) {
  __shared__ uint32_t wc[MSM_CLASS_LISTS][CL_THREADS / 32];
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t lt = (1u << lane) - 1;
  uint32_t r[MSM_CLASS_LISTS];
  for (int l = 0; l < MSM_CLASS_LISTS; l++) r[l] = off.p[l][blockIdx.x];
  uint64_t base = (uint64_t)blockIdx.x * CL_TILE;
  for (uint32_t k = 0; k < CL_ITEMS; k++) {
    uint64_t i = base + k * CL_THREADS + threadIdx.x;
    const int cl = i < n ? scalar_class(ldg_vec(sc + i)) : MSM_CLS_ZERO;
    uint32_t bal[MSM_CLASS_LISTS];
    for (int l = 0; l < MSM_CLASS_LISTS; l++) {
      bal[l] = __ballot_sync(0xffffffffu, cl == l + 1);
      if (lane == 0) wc[l][warp] = __popc(bal[l]);
    }
    __syncthreads();
    for (int l = 0; l < MSM_CLASS_LISTS; l++) {
      uint32_t before = 0, all = 0;
      for (uint32_t v = 0; v < CL_THREADS / 32; v++) {
        if (v < warp) before += wc[l][v];
        all += wc[l][v];
      }
      if (cl == l + 1) idx.p[l][r[l] + before + __popc(bal[l] & lt)] = (uint32_t)i;
      r[l] += all;
    }
    __syncthreads();
  }
}

// The sort entry of signed digit d on base b: key = |d| - 1 (or the
// sentinel M = 2^(c-1) for a zero digit, sorted last), val = b with the
// sign in bit 31.
__device__ __forceinline__ void digit_entry(int32_t d, uint32_t b, uint32_t c, uint32_t* key, uint32_t* val) {
  if (d == 0) {
    *key = 1u << (c - 1);
    *val = b;
  } else {
    *key = (uint32_t)(d < 0 ? -d : d) - 1;
    *val = b | (d < 0 ? 0x80000000u : 0u);
  }
}

// Entry j: window w of scalar idx[j] on base idx[j]; on split bases
// (split_off = n_all, the second copy's offset) also entry n + j: window
// w2 of the same scalar on base split_off + idx[j] — one read of the
// scalar for both (k_digits is memory-bound).
__global__ void k_digits(const fr_t* sc, const uint32_t* idx, uint32_t n, uint32_t c, uint32_t w, uint32_t* keys,
                         uint32_t* vals, uint32_t w2, uint32_t split_off) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  uint32_t i = idx ? idx[j] : j;
  fr_t s = ldg_vec(sc + i);
  digit_entry(signed_digit(s.v, c, w), i, c, keys + j, vals + j);
  if (split_off) digit_entry(signed_digit(s.v, c, w2), i + split_off, c, keys + n + j, vals + n + j);
}

__global__ void k_bucket_bounds(const uint32_t* keys, uint32_t n, uint32_t M, uint32_t* bstart, uint32_t* bend) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t k = keys[i];
  if (k >= M) return;
  if (i == 0 || keys[i - 1] != k) bstart[k] = i;
  if (i == n - 1 || keys[i + 1] != k) bend[k] = i + 1;
}

// cnt[b] = the chunks of bucket b (ceil(l / MSM_CHUNK) for its l points);
// cnt[M] = 0, so the exclusive sum's entry M is the total.
__global__ void k_chunk_counts(const uint32_t* bstart, const uint32_t* bend, uint32_t M, uint32_t* cnt) {
  uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > M) return;
  cnt[b] = b < M ? (bend[b] - bstart[b] + MSM_CHUNK - 1) / MSM_CHUNK : 0;
}

// Point o of bucket k's sorted run is point o % MSM_CHUNK of the bucket's
// chunk o / MSM_CHUNK, chunk j = off[k] + o / MSM_CHUNK: cvals[(o %
// MSM_CHUNK) total + j] = its vals entry, ckey[j] = k. Keys >= M (zero
// digits, sorted last) belong to no chunk.
__global__ void k_chunk_scatter(const uint32_t* keys, const uint32_t* vals, uint32_t n, uint32_t M,
                                const uint32_t* bstart, const uint32_t* off, uint32_t total, uint32_t* cvals,
                                uint32_t* ckey) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t k = keys[i];
  if (k >= M) return;
  const uint32_t o = i - bstart[k], j = off[k] + o / MSM_CHUNK, r = o % MSM_CHUNK;
  cvals[(uint64_t)r * total + j] = vals[i];
  if (r == 0) ckey[j] = k;
}

}  // namespace c2g
