// Curve-independent MSM kernels: scalar conversion, classification, signed
// digits and bucket bounds.
#include "digits.cuh"
#include "msm.cuh"

namespace c2g {

__global__ void k_fr_from_mont(const fr_t* in, fr_t* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    out[i] = ldg_vec(in + i).from_mont();
}

__global__ void __launch_bounds__(CL_THREADS) k_class_count(const fr_t* sc, uint32_t n, uint32_t* cnt1,
                                                            uint32_t* cnt2) {
  __shared__ uint32_t s1, s2;
  if (threadIdx.x == 0) s1 = s2 = 0;
  __syncthreads();
  uint32_t c1 = 0, c2 = 0;
  uint64_t base = (uint64_t)blockIdx.x * CL_TILE;
  for (uint32_t k = 0; k < CL_ITEMS; k++) {
    uint64_t i = base + k * CL_THREADS + threadIdx.x;
    if (i < n) {
      int cl = scalar_class(ldg_vec(sc + i));
      c1 += cl == 1;
      c2 += cl == 2;
    }
  }
  c1 = __reduce_add_sync(0xffffffffu, c1);
  c2 = __reduce_add_sync(0xffffffffu, c2);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&s1, c1);
    atomicAdd(&s2, c2);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    cnt1[blockIdx.x] = s1;
    cnt2[blockIdx.x] = s2;
  }
}

// Order-preserving scatter of the indices of ones and of other non-zero
// scalars; off1/off2 are the exclusive sums of the per-tile counts.
__global__ void __launch_bounds__(CL_THREADS) k_class_scatter(const fr_t* sc, uint32_t n, const uint32_t* off1,
                                                              const uint32_t* off2, uint32_t* idx1, uint32_t* idx2) {
  __shared__ uint32_t w1[CL_THREADS / 32], w2[CL_THREADS / 32];
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t lt = (1u << lane) - 1;
  uint32_t r1 = off1[blockIdx.x], r2 = off2[blockIdx.x];
  uint64_t base = (uint64_t)blockIdx.x * CL_TILE;
  for (uint32_t k = 0; k < CL_ITEMS; k++) {
    uint64_t i = base + k * CL_THREADS + threadIdx.x;
    int cl = i < n ? scalar_class(ldg_vec(sc + i)) : 0;
    uint32_t b1 = __ballot_sync(0xffffffffu, cl == 1);
    uint32_t b2 = __ballot_sync(0xffffffffu, cl == 2);
    if (lane == 0) {
      w1[warp] = __popc(b1);
      w2[warp] = __popc(b2);
    }
    __syncthreads();
    uint32_t p1 = 0, p2 = 0, t1 = 0, t2 = 0;
    for (uint32_t v = 0; v < CL_THREADS / 32; v++) {
      if (v < warp) {
        p1 += w1[v];
        p2 += w2[v];
      }
      t1 += w1[v];
      t2 += w2[v];
    }
    if (cl == 1) idx1[r1 + p1 + __popc(b1 & lt)] = (uint32_t)i;
    if (cl == 2) idx2[r2 + p2 + __popc(b2 & lt)] = (uint32_t)i;
    r1 += t1;
    r2 += t2;
    __syncthreads();
  }
}

// Signed digit of window w of scalar idx[j]: key = |digit| - 1 (or the
// sentinel M = 2^(c-1) for a zero digit, sorted last), val = base index with
// the sign in bit 31.
__global__ void k_digits(const fr_t* sc, const uint32_t* idx, uint32_t n, uint32_t c, uint32_t w, uint32_t* keys,
                         uint32_t* vals) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  uint32_t i = idx ? idx[j] : j;
  fr_t s = ldg_vec(sc + i);
  const int32_t d = signed_digit(s.v, c, w);
  if (d == 0) {
    keys[j] = 1u << (c - 1);
    vals[j] = i;
  } else {
    keys[j] = (uint32_t)(d < 0 ? -d : d) - 1;
    vals[j] = i | (d < 0 ? 0x80000000u : 0u);
  }
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
