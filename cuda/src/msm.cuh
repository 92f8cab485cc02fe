// Multi-scalar multiplication sum_i k_i * P_i over G1 or G2 (affine bases in
// device memory, canonical Fr scalars in device memory).
//
// Plan (docs/cuda.md, "Algorithms"):
//  1. Split the scalars into zeros (skipped), ones and minus ones (their
//     bases are summed directly: one mixed addition each; the minus ones'
//     sum is subtracted) and the rest, keeping index lists. PoRep
//     witnesses are mostly 0, 1 and r - 1 (a 2 KiB partition's aux: 55.5 %
//     zero, 29.7 % one, 13.6 % minus one, 1.2 % other), so the expensive
//     part only sees the remainder.
//  2. Pippenger on the rest, one window at a time: signed c-bit digits
//     (digit in [-2^(c-1), 2^(c-1)], bucket = |digit| - 1, sign applied to
//     the base), a CUB radix sort of (bucket, base index | sign), then the
//     sorted array is cut into equal slices of K points, one thread per
//     slice, whatever the bucket boundaries (every thread of a warp does the
//     same number of mixed additions, so skewed or uneven buckets cost no
//     divergence). A run of one bucket that lies inside a slice is a whole
//     bucket and is stored as its sum; the first and last run of each slice
//     may be shared with neighbouring slices and go to per-slice slots. The
//     slices whose first point lies in one bucket form a contiguous range;
//     a segmented tree sum over aligned power-of-two blocks of slices (one
//     launch per level) lets the per-bucket fix-up add any range in
//     O(log slices) steps, so a bucket holding most of the points (a
//     repeated scalar, the short top window) costs no long serial chain.
//  3. Bucket reduction sum_b (b+1) B_b per window: segments of MSM_RED_L
//     buckets give T_s = sum_j (j+1) B_{sL+j} and R_s = sum_j B_{sL+j}
//     (running sums, one thread each), then T_s + (sL) R_s (a short
//     double-and-add, one thread each) and a tree sum. Windows go from the
//     top down and the Horner steps (2^c acc + window sum) follow, all on a
//     second stream: these kernels have long serial chains, so they run
//     alongside the next windows' sort and accumulation instead of after
//     them. The windows are reduced in groups (every kernel launch covers
//     all the group's windows, so a small MSM's reduction fills the GPU
//     instead of a few SMs per window): the bucket pool holds two groups
//     of G windows' buckets, G as many as MSM_RED_POOL_BYTES allow, and the
//     two groups alternate.
//  2'. Batch-affine accumulation (large tails, C2G_MSM_AFFINE): each
//     bucket's sorted run is cut into chunks of MSM_CHUNK points, and a
//     chunk is summed in affine coordinates, one point per round, where
//     an addition costs 5M + 1S plus a share of one inversion: each lane
//     owns up to MSM_AFFINE_BATCH chunks and inverts the product of their
//     denominators once per round (Montgomery's trick; the inversion by
//     Bernstein-Yang divsteps, branch-free, field.cuh). The chunk sums,
//     sorted by bucket as the points were, then go through step 2's XYZZ
//     slices in place of the points: 1/8 of the mixed additions.
//  2''. Split bases (msm_split, the H MSM of a resident key): with a
//     second copy of the bases Q_i = 2^(c h) P_i, h = ceil(W / 2), the
//     scalar's W signed digits become h digits of 2n points (digit w of
//     scalar i on P_i, digit w + h on Q_i): half the windows, each over
//     twice the points, so the same point additions but half the bucket
//     sets — a wider window (c = 22, 12 windows → 6 of 2^28 entries at
//     2^27 points) costs what a narrower one does over unsplit bases, and
//     the MSM is faster (docs/perf/README.md, "CUDA kernels"). The copy
//     costs the bases' memory once more.
// Accumulators are XYZZ (affine in 2'); every kernel is deterministic in its
// result.
#pragma once
#include <cub/cub.cuh>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "common.cuh"
#include "curve.cuh"

namespace c2g {

constexpr uint32_t MSM_SLICE_MIN = 8;    // points per accumulation slice (small MSMs)
constexpr uint32_t MSM_SLICE_MAX = 64;   // ... and for large ones
constexpr uint32_t MSM_ONES_CHUNK = 64;  // points per thread when summing the ones
constexpr uint32_t MSM_RED_L = 16;       // buckets per reduction segment (one thread each)
constexpr uint64_t MSM_RED_POOL_BYTES = 512ull << 20;  // the bucket pool (two groups of windows) up to this
constexpr uint32_t MSM_CMIN = 4;
constexpr uint32_t MSM_CMAX = 26;        // the widest window (C2G_MSM_WINDOW_BITS may force it)
constexpr uint32_t MSM_CMODEL_MAX = 22;  // the widest the cost model picks
// Points per batch-affine chunk. A build-time knob for experiments
// (-DC2G_MSM_CHUNK=16 on every unit: the scratch plan depends on it): 8;
// 16 and 32 are slower with divsteps' cheap inversions (docs/perf/README.md,
// "CUDA library defaults against their alternatives").
#ifndef C2G_MSM_CHUNK
#define C2G_MSM_CHUNK 8
#endif
constexpr uint32_t MSM_CHUNK = C2G_MSM_CHUNK;
static_assert(MSM_CHUNK >= 2 && MSM_CHUNK <= 64, "C2G_MSM_CHUNK");
constexpr uint32_t MSM_AFFINE_LANES = 1u << 16;  // lanes of the batch-affine kernel: 4 blocks per SM
constexpr uint32_t MSM_AFFINE_BATCH_MIN = 64;    // chunks per lane (one inversion per lane and round) at least
constexpr uint32_t MSM_AFFINE_BATCH = 256;       // ... and at most
constexpr uint64_t MSM_AFFINE_MIN = 3u << 25;   // auto mode: batch-affine from this many tail points
constexpr uint32_t MSM_AFFINE_RUN_BITS = 8;      // ... with about 2^8 points per bucket at least
constexpr uint32_t CL_THREADS = 256;
constexpr uint32_t CL_ITEMS = 4;
constexpr uint32_t CL_TILE = CL_THREADS * CL_ITEMS;

struct msm_window_plan {
  uint32_t c, W, M;
  uint32_t S;  // reduction segments
};

inline msm_window_plan msm_plan_for(uint32_t c) {
  msm_window_plan p;
  p.c = c;
  p.W = (256 + c - 1) / c;
  p.M = 1u << (c - 1);
  p.S = (p.M + MSM_RED_L - 1) / MSM_RED_L;
  return p;
}

// Windows per reduction group (step 3): as many as half the bucket pool
// holds, at most all of them; C2G_MSM_RED_GROUP (environment, 1 … 64,
// read on each MSM) asks for fewer (1: one window at a time, as before
// the groups).
inline uint32_t msm_red_group(const msm_window_plan& p, uint32_t windows, uint64_t bucket_points) {
  uint64_t g = bucket_points / 2 / p.M;
  const uint32_t forced = (uint32_t)env_int("C2G_MSM_RED_GROUP", 1, 64, 0);
  if (forced && forced < g) g = forced;
  return g < 1 ? 1 : (g < windows ? (uint32_t)g : windows);
}

// Points per accumulation slice for n points: large enough that the
// per-slice fix-up stays a few percent of the work, small enough that the
// grid keeps every SM busy for several waves (about 2^19 slices, more only
// past 2^25 points).
constexpr uint32_t MSM_SLICES_TARGET_BITS = 19;
inline uint32_t msm_slice_for(uint64_t n) {
  uint64_t k = (n + (1u << MSM_SLICES_TARGET_BITS) - 1) >> MSM_SLICES_TARGET_BITS;
  if (k < MSM_SLICE_MIN) k = MSM_SLICE_MIN;
  if (k > MSM_SLICE_MAX) k = MSM_SLICE_MAX;
  return (uint32_t)k;
}

// The most slices of any MSM of at most n_max points (the slice count is not
// monotonic in n: a smaller n may get a smaller K): n/8 up to 2^22 points,
// at most 2^19 up to 2^25, n/64 beyond.
inline uint64_t msm_max_slices(uint64_t n_max) {
  uint64_t m = ceil_div(n_max, MSM_SLICE_MIN);
  if (m > (1u << MSM_SLICES_TARGET_BITS)) m = 1u << MSM_SLICES_TARGET_BITS;
  const uint64_t big = ceil_div(n_max, MSM_SLICE_MAX);
  return big > m ? big : m;
}

// Window size minimizing a simple cost model (in field-multiplication
// units): per window, one mixed addition per point, slice fix-ups, the
// bucket reduction, and a fixed launch overhead.
inline uint32_t msm_choose_c(uint64_t n) {
  double best = 0;
  uint32_t bc = MSM_CMIN;
  const double slices = (double)n / msm_slice_for(n);
  for (uint32_t c = MSM_CMIN; c <= MSM_CMODEL_MAX; c++) {
    msm_window_plan p = msm_plan_for(c);
    double per = 10.0 * n + 28.0 * slices + 42.0 * p.M + 2e5;
    double cost = per * p.W;
    if (c == MSM_CMIN || cost < best) {
      best = cost;
      bc = c;
    }
  }
  return bc;
}

// Tuning knob for benchmarks: C2G_MSM_WINDOW_BITS forces the window of
// every MSM (MSM_CMIN … MSM_CMAX; 0 when unset), read on each call like
// C2G_MSM_AFFINE; scratch is laid out for the value in force when it is
// planned.
inline uint32_t msm_forced_c() { return (uint32_t)env_int("C2G_MSM_WINDOW_BITS", MSM_CMIN, MSM_CMAX, 0); }

// Split bases (2''): the windows of a split MSM at window c (h of the
// plan's W), and the shift of the second copy of the bases, c h bits.
inline uint32_t msm_split_windows(uint32_t c) { return (msm_plan_for(c).W + 1) / 2; }
inline uint32_t msm_split_shift(uint32_t c) { return c * msm_split_windows(c); }
// The window of a split MSM of n points (2n entries): 22 from 2^24 points
// (12 windows → 6 of 2^(c-1) buckets; docs/perf/README.md, "CUDA library
// defaults against their alternatives"),
// the cost model's for 2n below; C2G_MSM_WINDOW_BITS forces it as it does
// every MSM's.
constexpr uint64_t MSM_SPLIT_WIDE_MIN = 1ull << 24;
constexpr uint32_t MSM_SPLIT_C = 22;
inline uint32_t msm_split_c(uint64_t n) {
  const uint32_t forced = msm_forced_c();
  if (forced) return forced;
  return n >= MSM_SPLIT_WIDE_MIN ? MSM_SPLIT_C : msm_choose_c(2 * n);
}

// The split bases of an MSM: bases[0, n) = P, bases[n, 2n) = 2^(c h) P
// for the c it was made for (msm_split_bases).
template <class F>
struct msm_split {
  const affine_t<F>* bases = nullptr;
  uint32_t c = 0;
};

// Whether an MSM whose tail has n points accumulates batch-affine: the
// C2G_MSM_AFFINE environment variable, read on each call: "on" for every
// MSM, "off" for none, unset or "auto" from MSM_AFFINE_MIN tail points, where
// each lane gets a batch large enough to share its inversions and the grid
// still fills the GPU.
inline bool msm_affine_for(uint64_t n) {
  const int mode = env_on_off("C2G_MSM_AFFINE", true);
  return mode < 0 ? n >= MSM_AFFINE_MIN : mode == 1 && n > 0;
}

// The window of a batch-affine MSM of n tail points: the cost model's c,
// made smaller where a bucket would average fewer than about
// 2^MSM_AFFINE_RUN_BITS points (log2 n rounded): each bucket's last chunk
// is partly empty and every chunk sum is one more addition in the merge
// (at 2^27 random points on an H200 the model's c beats the windows one
// narrower and one wider).
inline uint32_t msm_affine_c(uint32_t c, uint64_t n) {
  const uint64_t r = n + n / 2;
  uint32_t lg = 0;
  while (lg < 63 && (2ull << lg) <= r) lg++;  // log2 n, rounded
  const uint32_t most = lg >= MSM_AFFINE_RUN_BITS + MSM_CMIN ? lg + 1 - MSM_AFFINE_RUN_BITS : MSM_CMIN;
  return c < most ? c : most;
}

// Most chunks of n sorted points over M buckets: a bucket of l points
// makes ceil(l / MSM_CHUNK) chunks.
inline uint64_t msm_max_chunks(uint64_t n, uint32_t M) {
  const uint64_t c = ceil_div(n, MSM_CHUNK) + M;
  return c < n ? c : n;
}

// Scalar classes (scalar_class) and their index lists: zeros have none; the
// list of class k is p[k - 1].
constexpr int MSM_CLS_ZERO = 0, MSM_CLS_ONE = 1, MSM_CLS_OTHER = 2, MSM_CLS_MINUS_ONE = 3;
constexpr int MSM_CLASS_LISTS = 3;
struct class_ptrs {
  uint32_t* p[MSM_CLASS_LISTS];
  uint32_t* of(int cls) const { return p[cls - 1]; }
};

// Device memory of one MSM of up to n_max scalars, carved from an arena.
template <class F>
struct msm_scratch {
  using P = xyzz_t<F>;
  uint64_t n_max = 0;
  uint64_t split_entries = 0;  // 2 n_max when laid out for a split MSM (2''), else 0
  uint32_t c_max = 0;
  uint32_t nb = 0;  // classification tiles
  // per class list (MSM_CLS_ONE, MSM_CLS_OTHER, MSM_CLS_MINUS_ONE): indices,
  // per-tile counts, their exclusive sums
  class_ptrs idx, cnt, off;
  uint32_t *keys0, *keys1, *vals0, *vals1;
  uint32_t *bstart, *bend;
  P *buckets, *run_first, *run_last, *ones_sum;
  uint64_t bucket_points = 0;  // entries of buckets: two groups of windows (msm_red_group)
  // batch-affine (affine_ok): per bucket chunk counts and their exclusive
  // sum (M + 1), the chunks' points (MSM_CHUNK rows: row r holds point r
  // of every chunk, as vals entries) and keys, chunk sums, prefix products
  // of the denominators
  bool affine_ok = false;
  uint64_t max_chunks = 0;
  uint32_t *ch_cnt, *ch_off, *ch_vals, *ch_key;
  affine_t<F>* ch_sum;
  F* ch_pref;
  P *segT, *segR, *horner;  // reduction segments, Horner accumulator over the windows
  void* cub_temp;
  size_t cub_bytes = 0;
  uint64_t max_slices = 0;  // entries of run_first (also the ones' partial sums) and run_last

  // layout assigns every region; with a.base == nullptr it only sizes them.
  // split_c: room for a split MSM (2'') at that window, 2n entries per
  // window (0: none).
  void layout(arena& a, uint64_t n, uint32_t split_c = 0) {
    n_max = n;
    uint64_t nn = n ? n : 1;
    split_entries = split_c ? 2 * nn : 0;
    const uint64_t ne = split_c ? 2 * nn : nn;  // sorted entries per window
    c_max = msm_choose_c(nn);
    const uint32_t forced = msm_forced_c();
    if (forced > c_max) c_max = forced;
    if (split_c > c_max) c_max = split_c;
    msm_window_plan pm = msm_plan_for(c_max);
    nb = ceil_div_u32(nn, CL_TILE);
    static_assert(MSM_ONES_CHUNK >= MSM_SLICE_MAX, "the ones' partial sums fit in run_first");
    max_slices = msm_max_slices(ne);
    for (int k = 0; k < MSM_CLASS_LISTS; k++) {
      idx.p[k] = a.take_n<uint32_t>(nn);
      cnt.p[k] = a.take_n<uint32_t>(nb + 1);
      off.p[k] = a.take_n<uint32_t>(nb + 1);
    }
    keys0 = a.take_n<uint32_t>(ne);
    keys1 = a.take_n<uint32_t>(ne);
    vals0 = a.take_n<uint32_t>(ne);
    vals1 = a.take_n<uint32_t>(ne);
    bstart = a.take_n<uint32_t>(pm.M);
    bend = a.take_n<uint32_t>(pm.M);
    // two windows' buckets at least, MSM_RED_POOL_BYTES' worth where that
    // is more, but no more than two groups of every window (W M grows with
    // c, so c_max bounds every window the MSM may use)
    const uint64_t all = 2ull * pm.W * pm.M, pool = MSM_RED_POOL_BYTES / sizeof(P);
    bucket_points = all < pool ? all : pool;
    if (bucket_points < 2ull * pm.M) bucket_points = 2ull * pm.M;
    buckets = a.take_n<P>(bucket_points);
    run_first = a.take_n<P>(max_slices);
    run_last = a.take_n<P>(max_slices);
    // a group's segments: G windows of ceil(M / MSM_RED_L) each, at most
    // bucket_points / 2 / MSM_RED_L + G (G <= 64 windows)
    segT = a.take_n<P>(bucket_points / 2 / MSM_RED_L + 64);
    segR = a.take_n<P>(bucket_points / 2 / MSM_RED_L + 64);
    horner = a.take_n<P>(1);
    ones_sum = a.take_n<P>(1);
    affine_ok = msm_affine_for(ne);
    max_chunks = affine_ok ? msm_max_chunks(ne, pm.M) : 0;
    if (affine_ok) {
      ch_cnt = a.take_n<uint32_t>(pm.M + 1);
      ch_off = a.take_n<uint32_t>(pm.M + 1);
      ch_vals = a.take_n<uint32_t>(max_chunks * MSM_CHUNK);
      ch_key = a.take_n<uint32_t>(max_chunks);
      ch_sum = a.take_n<affine_t<F>>(max_chunks);
      ch_pref = a.take_n<F>(max_chunks);
    }
    // CUB temporary storage: the largest of the sort and the scans.
    size_t sort_b = 0, scan_b = 0;
    cub::DoubleBuffer<uint32_t> dk(keys0, keys1), dv(vals0, vals1);
    CK(cub::DeviceRadixSort::SortPairs(nullptr, sort_b, dk, dv, (int)ne, 0, (int)c_max, (cudaStream_t)0));
    CK(cub::DeviceScan::ExclusiveSum(nullptr, scan_b, cnt.p[0], off.p[0], (int)(nb + 1), (cudaStream_t)0));
    cub_bytes = sort_b;
    if (scan_b > cub_bytes) cub_bytes = scan_b;
    if (affine_ok) {
      CK(cub::DeviceScan::ExclusiveSum(nullptr, scan_b, ch_cnt, ch_off, (int)(pm.M + 1), (cudaStream_t)0));
      if (scan_b > cub_bytes) cub_bytes = scan_b;
    }
    cub_temp = a.take(cub_bytes);
  }
};

template <class F>
uint64_t msm_scratch_bytes(uint64_t n, uint32_t split_c = 0) {
  arena a;
  msm_scratch<F> s;
  s.layout(a, n, split_c);
  return a.used + 256;
}

// ---- kernels -----------------------------------------------------------

__global__ void k_fr_from_mont(const fr_t* in, fr_t* out, uint64_t n);

// The class of a canonical scalar: 0, 1, r - 1, or other.
__device__ __forceinline__ int scalar_class(const fr_t& s) {
  const uint32_t m1[8] = FR_MINUS_ONE_CANON;
  uint32_t hi = 0, dm = 0;
#pragma unroll
  for (int i = 1; i < 8; i++) {
    hi |= s.v[i];
    dm |= s.v[i] ^ m1[i];
  }
  if (hi == 0) return s.v[0] == 0 ? MSM_CLS_ZERO : (s.v[0] == 1 ? MSM_CLS_ONE : MSM_CLS_OTHER);
  return dm == 0 && s.v[0] == m1[0] ? MSM_CLS_MINUS_ONE : MSM_CLS_OTHER;
}

__global__ void k_class_count(const fr_t* sc, uint32_t n, class_ptrs cnt);
__global__ void k_class_scatter(const fr_t* sc, uint32_t n, class_ptrs off, class_ptrs idx);
__global__ void k_digits(const fr_t* sc, const uint32_t* idx, uint32_t n, uint32_t c, uint32_t w, uint32_t* keys,
                         uint32_t* vals, uint32_t w2, uint32_t split_off);
__global__ void k_bucket_bounds(const uint32_t* keys, uint32_t n, uint32_t M, uint32_t* bstart, uint32_t* bend);

// Minimum resident blocks of 128 threads per SM asked of ptxas for the
// accumulation kernel (a register cap: 4 means at most 128 registers).
#ifndef C2G_ACC_MIN_BLOCKS
#define C2G_ACC_MIN_BLOCKS 1
#endif
// ... and of the full-addition kernels (slice tree, bucket fix-up, reduction).
#ifndef C2G_RED_MIN_BLOCKS
#define C2G_RED_MIN_BLOCKS 3
#endif

template <class F>
__device__ __forceinline__ affine_t<F> signed_base(const affine_t<F>* __restrict__ bases, uint32_t v) {
  affine_t<F> p = ldg_vec(bases + (v & 0x7fffffffu));
  if (v >> 31) p.Y = p.Y.neg();
  return p;
}

// One thread per slice [t*K, min(t*K + K, n)) of the sorted (keys, vals):
// the run of the bucket holding the slice's first point goes to
// run_first[t], the run holding its last point (when it is another run) to
// run_last[t] (else infinity), and every run in between, which is a whole
// bucket, to buckets[key]. Keys >= M (zero digits) are sorted last and end
// the slice. vals == nullptr: point i is bases[i] (the chunk sums of 2').
template <class F>
__global__ void __launch_bounds__(128, C2G_ACC_MIN_BLOCKS) k_accumulate(const affine_t<F>* __restrict__ bases,
                                                    const uint32_t* __restrict__ keys,
                                                    const uint32_t* __restrict__ vals, uint32_t n, uint32_t K,
                                                    uint32_t M, xyzz_t<F>* buckets, xyzz_t<F>* run_first,
                                                    xyzz_t<F>* run_last) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t s64 = (uint64_t)t * K;
  if (s64 >= n) return;
  const uint32_t s = (uint32_t)s64, e = s64 + K < n ? (uint32_t)(s64 + K) : n;
  uint32_t cur = keys[s];
  if (cur >= M) {
    run_first[t] = xyzz_t<F>::inf();
    run_last[t] = xyzz_t<F>::inf();
    return;
  }
  // One add_affine call per point on every path, so the threads of a warp
  // stay converged on it (a run boundary only flushes and restarts the
  // accumulator at infinity; add_affine of a point to infinity is a copy).
  xyzz_t<F> acc = xyzz_t<F>::inf();
  bool first = true;
  for (uint32_t i = s; i < e; i++) {
    const uint32_t k = keys[i];
    if (k != cur) {
      if (first)
        run_first[t] = acc;
      else
        buckets[cur] = acc;
      first = false;
      cur = k;
      acc = xyzz_t<F>::inf();
    }
    if (k >= M) break;
    acc.add_affine(vals ? signed_base(bases, vals[i]) : ldg_vec(bases + i));
  }
  if (cur >= M) {
    run_last[t] = xyzz_t<F>::inf();
  } else if (first) {
    run_first[t] = acc;
    run_last[t] = xyzz_t<F>::inf();
  } else {
    run_last[t] = acc;
  }
}

// One level of the segmented tree sum over the slices' first runs: for t a
// multiple of 2d whose first point is in the same bucket as that of t + d,
// P[t] += P[t + d]. After the levels d = 1, 2, 4, ..., P[t] is the sum of
// the first runs of slices [t, t + lowbit(t)) that share t's bucket.
template <class F>
__global__ void __launch_bounds__(128, C2G_RED_MIN_BLOCKS) k_slice_tree(xyzz_t<F>* P, const uint32_t* __restrict__ keys,
                                                                        uint32_t T, uint32_t K, uint32_t d) {
  const uint32_t pairs = (T + 2 * d - 1) / (2 * d);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    const uint64_t t = (uint64_t)i * 2 * d;
    if (t + d >= T || keys[t * K] != keys[(t + d) * K]) continue;
    xyzz_t<F> acc = P[t];
    acc.add(P[t + d]);
    P[t] = acc;
  }
}

// One thread per bucket: completes the buckets k_accumulate left in the
// per-slice slots (those holding a slice's first or last point) and marks
// empty buckets as infinity; buckets inside one slice are already done.
template <class F>
__global__ void __launch_bounds__(128, C2G_RED_MIN_BLOCKS) k_bucket_fixup(const uint32_t* __restrict__ bstart,
                                                      const uint32_t* __restrict__ bend, uint32_t n, uint32_t K,
                                                      uint32_t M, const xyzz_t<F>* __restrict__ run_first,
                                                      const xyzz_t<F>* __restrict__ run_last, xyzz_t<F>* buckets) {
  const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= M) return;
  const uint32_t s = bstart[b], e = bend[b];
  if (e == s) {
    buckets[b] = xyzz_t<F>::inf();
    return;
  }
  const uint32_t t0 = s / K, t1 = (e - 1) / K;
  const uint64_t end0_64 = (uint64_t)t0 * K + K;
  const uint32_t end0 = end0_64 < n ? (uint32_t)end0_64 : n;
  const bool starts_slice = s == t0 * K, ends_slice = e >= end0;
  if (!starts_slice && !ends_slice) return;  // interior run: complete
  // slices [ta, t1] begin inside this bucket; add them block by block
  xyzz_t<F> acc = starts_slice ? xyzz_t<F>::inf() : run_last[t0];
  for (uint32_t t = starts_slice ? t0 : t0 + 1; t <= t1;) {
    acc.add(run_first[t]);
    if (t == 0) break;  // block 0 spans every level: the whole range
    t += t & (0u - t);  // next aligned block (lowbit(t) slices further)
  }
  buckets[b] = acc;
}

// One thread per segment of MSM_RED_L buckets of each of G windows (the
// buckets of window g at B + g M, its S segments at T + g S, R + g S):
// T[s] = sum_j (j+1) B[sL+j] and R[s] = sum_j B[sL+j] (running sums from
// the top).
template <class F>
__global__ void __launch_bounds__(128, C2G_RED_MIN_BLOCKS) k_segment_sums(const xyzz_t<F>* __restrict__ B, uint32_t M,
                                                                          uint32_t S, uint32_t G, xyzz_t<F>* T,
                                                                          xyzz_t<F>* R) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= G * S) return;
  const uint32_t g = i / S, s = i % S;
  const uint32_t lo = s * MSM_RED_L;
  B += (uint64_t)g * M;
  T += (uint64_t)g * S;
  R += (uint64_t)g * S;
  const uint32_t hi = lo + MSM_RED_L < M ? lo + MSM_RED_L : M;
  xyzz_t<F> running = xyzz_t<F>::inf(), acc = xyzz_t<F>::inf();
  for (uint32_t j = hi; j-- > lo;) {
    running.add(B[j]);
    acc.add(running);
  }
  T[s] = acc;
  R[s] = running;
}

// T[s] += (s * MSM_RED_L) R[s]: the segment's weight offset (G windows
// of S segments each).
template <class F>
__global__ void __launch_bounds__(128, C2G_RED_MIN_BLOCKS) k_segment_offsets(xyzz_t<F>* T, const xyzz_t<F>* R,
                                                                             uint32_t S, uint32_t G) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t s = i % S;
  if (s == 0 || i >= G * S) return;
  xyzz_t<F> acc = T[i];
  acc.add(R[i].mul_u64((uint64_t)s * MSM_RED_L));
  T[i] = acc;
}

// Horner steps over G windows, the top one first (window sums at wsum[g
// S]): acc = 2^c acc + window sum, starting from the first window's sum
// when first.
template <class F>
__global__ void k_horner_steps(xyzz_t<F>* acc, const xyzz_t<F>* wsum, uint32_t S, uint32_t G, uint32_t c,
                               bool first) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  xyzz_t<F> a = first ? wsum[0] : *acc;
  for (uint32_t g = first ? 1 : 0; g < G; g++) {
    for (uint32_t k = 0; k < c; k++) a = a.dbl();
    a.add(wsum[(uint64_t)g * S]);
  }
  *acc = a;
}

// *out = *a + *b (b may be null).
template <class F>
__global__ void k_add_to(const xyzz_t<F>* a, const xyzz_t<F>* b, xyzz_t<F>* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  xyzz_t<F> r = *a;
  if (b) r.add(*b);
  *out = r.canonical();  // an MSM's result: canonical coordinates
}

// One step of a tree sum of `groups` arrays of cnt points each (stride
// apart): data[g][i] += data[g][i + half] for i < cnt - half.
template <class F>
__global__ void __launch_bounds__(128) k_tree_step(xyzz_t<F>* data, uint32_t stride, uint32_t groups, uint32_t cnt,
                                                   uint32_t half) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t per = cnt - half;
  if (t >= groups * per) return;
  uint32_t g = t / per, i = t % per;
  xyzz_t<F>* d = data + (uint64_t)g * stride;
  xyzz_t<F> acc = d[i];
  acc.add(d[i + half]);
  d[i] = acc;
}

template <class F>
__global__ void __launch_bounds__(128) k_sum_indexed(const affine_t<F>* __restrict__ bases,
                                                     const uint32_t* __restrict__ idx, uint32_t n, xyzz_t<F>* out) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t s = (uint64_t)t * MSM_ONES_CHUNK;
  if (s >= n) return;
  uint64_t e64 = s + MSM_ONES_CHUNK;
  uint32_t e = (uint32_t)(e64 < n ? e64 : n);
  xyzz_t<F> acc = xyzz_t<F>::inf();
  for (uint32_t i = (uint32_t)s; i < e; i++) acc.add_affine(ldg_vec(bases + idx[i]));
  out[t] = acc;
}

// *acc = (has_acc ? *acc : infinity) + (negate ? -*x : *x).
template <class F>
__global__ void k_add_signed(xyzz_t<F>* acc, const xyzz_t<F>* x, bool has_acc, bool negate) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  xyzz_t<F> r = has_acc ? *acc : xyzz_t<F>::inf();
  r.add(negate ? x->neg() : *x);
  *acc = r;
}

template <class F>
__global__ void k_set_inf(xyzz_t<F>* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = xyzz_t<F>::inf();
}

// ---- batch-affine accumulation (2') ---------------------------------------

__global__ void k_chunk_counts(const uint32_t* bstart, const uint32_t* bend, uint32_t M, uint32_t* cnt);
__global__ void k_chunk_scatter(const uint32_t* keys, const uint32_t* vals, uint32_t n, uint32_t M,
                                const uint32_t* bstart, const uint32_t* off, uint32_t total, uint32_t* cvals,
                                uint32_t* ckey);
constexpr uint32_t MSM_NO_POINT = 0xffffffffu;  // a chunk's missing point (cvals)

// Minimum resident blocks of 128 threads per SM asked of ptxas for the
// batch-affine kernel: 4 = at most 128 registers, 4 warps per scheduler
// (the kernel also waits on memory; the best of the probed settings).
#ifndef C2G_AFF_MIN_BLOCKS
#define C2G_AFF_MIN_BLOCKS 4
#endif

// The denominator d of acc + p in affine coordinates, and which sum it is:
// 0 the chord (d = x_p - x_acc), 1 the tangent (p = acc: d = 2 y_acc),
// 2 p (acc at infinity), 3 acc (p at infinity), 4 infinity (p = -acc, or a
// tangent at y = 0, which points of prime order never have). d = 1 for
// 2..4, so no denominator in a lane's product is zero. Infinity is told by
// x = 0 alone: (0, 0) encodes it, and the curve points with x = 0 (y^2 =
// b) have order 3, so none lies in the prime-order groups of the bases
// and their sums. Only the chord and infinity need y; the forward pass
// (affine_step_den) reads x alone and gets the same d whenever y is not
// needed, else calls this.
template <class F>
__device__ __forceinline__ int affine_step_kind(const affine_t<F>& acc, const affine_t<F>& p, F& d) {
  d = p.X - acc.X;
  const bool pinf = p.X.is_zero(), ainf = acc.X.is_zero();
  if (!pinf && !ainf && !d.is_zero()) return 0;
  const F one = field_consts<F>::one();
  if (pinf) {
    d = one;
    return 3;
  }
  if (ainf) {
    d = one;
    return 2;
  }
  const F y2 = acc.Y.dbl();
  if ((p.Y - acc.Y).is_zero() && !y2.is_zero()) {
    d = y2;
    return 1;
  }
  d = one;
  return 4;
}

// The denominator of acc + p from the x coordinates (affine_step_kind's d),
// reading the y coordinates only when the x coordinates are equal.
template <class F>
__device__ __forceinline__ F affine_step_den(const affine_t<F>* acc, const affine_t<F>* __restrict__ bases,
                                             uint32_t v) {
  const F ax = ld_vec(&acc->X), px = ldg_vec(&bases[v & 0x7fffffffu].X);
  const F d = px - ax;
  if (!px.is_zero() && !ax.is_zero() && !d.is_zero()) return d;
  F dd;
  affine_step_kind(ld_vec(acc), signed_base(bases, v), dd);
  return dd;
}

// Lane t owns the chunks j = i T + t (j < total; T lanes, at most B
// chunks each). Chunk j holds the points cvals[r total + j], r <
// MSM_CHUNK (MSM_NO_POINT where the bucket ran out: only its first is
// sure). sum[j] starts as the chunk's first point; round r adds point r of
// every chunk that has one, with one inversion per lane: the prefix
// products of the denominators go to pref (forward), then each 1/d is
// peeled off the inverse of the whole product (backward). The next
// chunk's point index is read one step ahead: what is left waiting is the
// gather of the base itself.
template <class F>
__global__ void __launch_bounds__(128, C2G_AFF_MIN_BLOCKS)
    k_affine_chunks(const affine_t<F>* __restrict__ bases, const uint32_t* __restrict__ cvals, uint32_t total,
                    uint32_t B, affine_t<F>* sum, F* pref) {
  const uint32_t T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total) return;
  uint32_t mine = (total - t + T - 1) / T;  // this lane's chunks: i < mine
  if (mine > B) mine = B;
  // the chunks' first points, four at a time: their index and base loads
  // in flight together (one at a time, each would wait for its two
  // dependent loads, a visible share of the kernel's stall samples)
  for (uint32_t i = 0; i < mine; i += 4) {
    uint32_t v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) v[k] = i + k < mine ? cvals[(i + k) * T + t] : 0;
    affine_t<F> p[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (i + k < mine) p[k] = signed_base(bases, v[k]);
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (i + k < mine) st_vec(sum + (i + k) * T + t, p[k]);
  }
  for (uint32_t r = 1; r < MSM_CHUNK; r++) {
    const uint32_t* row = cvals + (uint64_t)r * total;
    F prod = field_consts<F>::one();
    for (uint32_t i = 0, v = row[t]; i < mine; i++) {
      const uint32_t j = i * T + t;
      const uint32_t next = i + 1 < mine ? row[j + T] : MSM_NO_POINT;
      if (v != MSM_NO_POINT) prod = prod * affine_step_den(sum + j, bases, v);
      st_vec(pref + j, prod);
      v = next;
    }
    F inv = field_inverse(prod);
    uint32_t v = row[(mine - 1) * T + t];
    for (uint32_t i = mine; i-- > 0;) {
      const uint32_t j = i * T + t;
      const uint32_t next = i > 0 ? row[j - T] : MSM_NO_POINT;
      if (v != MSM_NO_POINT) {
        const affine_t<F> a = ld_vec(sum + j), p = signed_base(bases, v);
        F d;
        const int kind = affine_step_kind(a, p, d);
        const F dinv = i ? inv * ld_vec(pref + j - T) : inv;
        inv = inv * d;
        if (kind <= 1) {
          F num = p.Y - a.Y;
          if (kind == 1) {
            const F x2 = a.X.sqr();
            num = x2.dbl() + x2;
          }
          const F l = num * dinv;
          const F x3 = l.sqr() - a.X - p.X;
          st_vec(sum + j, affine_t<F>{x3, l * (a.X - x3) - a.Y});
        } else if (kind == 2) {
          st_vec(sum + j, p);
        } else if (kind == 4) {
          st_vec(sum + j, affine_t<F>{F::zero(), F::zero()});
        }
      }
      v = next;
    }
  }
}

// ---- host driver ---------------------------------------------------------

struct msm_info {
  uint64_t n_zero = 0, n_one = 0, n_minus_one = 0, n_other = 0;
  uint32_t window_bits = 0;
  bool batch_affine = false;  // the tail accumulated batch-affine (2')
  bool split = false;         // ... on split bases (2'')
};

template <class F>
void tree_sum(xyzz_t<F>* data, uint32_t stride, uint32_t groups, uint32_t cnt, cudaStream_t st) {
  while (cnt > 1) {
    uint32_t half = (cnt + 1) / 2;
    uint64_t threads = (uint64_t)groups * (cnt - half);
    C2G_LAUNCH(k_tree_step<F>, grid_for(threads, 128), 128, 0, st, data, stride, groups, cnt, half);
    CK_LAUNCH("k_tree_step");
    cnt = half;
  }
}

// bucket_reduce folds the window sums sum_b (b+1) B[g M + b] (b < M) of G
// consecutive windows, the top one first, into the Horner accumulator
// s.horner (see the plan at the top), on stream st.
template <class F>
void bucket_reduce(msm_scratch<F>& s, const xyzz_t<F>* B, uint32_t M, uint32_t G, uint32_t c, bool first,
                   cudaStream_t st) {
  const uint32_t S = ceil_div_u32(M, MSM_RED_L);
  const uint64_t threads = (uint64_t)G * S;
  C2G_LAUNCH(k_segment_sums<F>, grid_for(threads, 128), 128, 0, st, B, M, S, G, s.segT, s.segR);
  CK_LAUNCH("k_segment_sums");
  C2G_LAUNCH(k_segment_offsets<F>, grid_for(threads, 128), 128, 0, st, s.segT, s.segR, S, G);
  CK_LAUNCH("k_segment_offsets");
  tree_sum<F>(s.segT, S, G, S, st);
  C2G_LAUNCH(k_horner_steps<F>, 1, 1, 0, st, s.horner, s.segT, S, G, c, first);
  CK_LAUNCH("k_horner_steps");
}

// The reduction stream of one msm_run and its events, released on every
// exit path.
struct msm_side_stream {
  cudaStream_t rs = nullptr;
  cudaEvent_t filled[2] = {nullptr, nullptr}, reduced[2] = {nullptr, nullptr};
  msm_side_stream() {
    try {
      CK(cudaStreamCreateWithFlags(&rs, cudaStreamNonBlocking));
      for (int i = 0; i < 2; i++) {
        CK(cudaEventCreateWithFlags(&filled[i], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&reduced[i], cudaEventDisableTiming));
      }
    } catch (...) {
      release();  // a throwing constructor gets no destructor call
      throw;
    }
  }
  ~msm_side_stream() { release(); }
  void release() {
    // Unwinding from an error: the caller's scratch may be reused or freed
    // next, so wait for the kernels still queued here (on success the main
    // stream has already been ordered after them).
    if (rs && std::uncaught_exceptions() > 0) cudaStreamSynchronize(rs);
    for (int i = 0; i < 2; i++) {
      if (filled[i]) cudaEventDestroy(filled[i]);
      if (reduced[i]) cudaEventDestroy(reduced[i]);
    }
    if (rs) cudaStreamDestroy(rs);
    rs = nullptr;
    filled[0] = filled[1] = reduced[0] = reduced[1] = nullptr;
  }
  msm_side_stream(const msm_side_stream&) = delete;
  msm_side_stream& operator=(const msm_side_stream&) = delete;
};

// affine_chunks runs step 2' on the sorted (keys, vals) of one window
// (bucket bounds in s.bstart / s.bend): chunk points, keys and bucket
// offsets into s.ch_*, the chunk sums into s.ch_sum. Returns the number of
// chunks (it synchronizes st to learn it).
template <class F>
uint32_t affine_chunks(msm_scratch<F>& s, const affine_t<F>* bases, const uint32_t* keys, const uint32_t* vals,
                       uint32_t n, uint32_t M, cudaStream_t st) {
  C2G_LAUNCH(k_chunk_counts, grid_for(M + 1, 256), 256, 0, st, s.bstart, s.bend, M, s.ch_cnt);
  CK_LAUNCH("k_chunk_counts");
  size_t tb = s.cub_bytes;
  CK(cub::DeviceScan::ExclusiveSum(s.cub_temp, tb, s.ch_cnt, s.ch_off, (int)(M + 1), st));
  uint32_t total = 0;
  CK(cudaMemcpyAsync(&total, s.ch_off + M, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
  CK(cudaStreamSynchronize(st));
  if (total > s.max_chunks) throw error(C2G_ERR_INTERNAL, 0, "msm: chunk scratch too small");
  if (total == 0) return 0;
  CK(cudaMemsetAsync(s.ch_vals, 0xff, (size_t)total * MSM_CHUNK * sizeof(uint32_t), st));  // MSM_NO_POINT
  C2G_LAUNCH(k_chunk_scatter, grid_for(n, 256), 256, 0, st, keys, vals, n, M, s.bstart, s.ch_off, total, s.ch_vals,
             s.ch_key);
  CK_LAUNCH("k_chunk_scatter");
  // T lanes (a multiple of the block): MSM_AFFINE_LANES, fewer when that
  // would leave a lane fewer than MSM_AFFINE_BATCH_MIN chunks, more when it
  // would give one more than MSM_AFFINE_BATCH
  uint64_t T64 = MSM_AFFINE_LANES;
  if ((uint64_t)total < T64 * MSM_AFFINE_BATCH_MIN) T64 = ceil_div(total, MSM_AFFINE_BATCH_MIN);
  if ((uint64_t)total > T64 * MSM_AFFINE_BATCH) T64 = ceil_div(total, MSM_AFFINE_BATCH);
  const uint32_t T = (uint32_t)(ceil_div(T64, 128) * 128);
  const uint32_t B = ceil_div_u32(total, T);
  C2G_LAUNCH(k_affine_chunks<F>, T / 128, 128, 0, st, bases, s.ch_vals, total, B, s.ch_sum, s.ch_pref);
  CK_LAUNCH("k_affine_chunks");
  return total;
}

// msm_run computes out = sum sc[i] * bases[i] for i < n. sc holds canonical
// (non-Montgomery) scalars. s must have been laid out for at least n. The
// call synchronizes `st` once to learn the class counts, and once per
// window when the tail accumulates batch-affine (the chunk count). split
// (optional: split->bases holds 2n points, s laid out for its c) runs the
// tail on split bases (2'') when every scalar is in it, as the H MSM's are.
template <class F>
void msm_run(const affine_t<F>* bases, const fr_t* sc, uint64_t n, msm_scratch<F>& s, xyzz_t<F>* out,
             cudaStream_t st, msm_info* info, const cancel_flag* cancel, const msm_split<F>* split = nullptr) {
  using P = xyzz_t<F>;
  if (n > s.n_max) throw error(C2G_ERR_INTERNAL, 0, "msm scratch too small");
  if (n >= (1ull << 31)) throw_invalid("msm: more than 2^31 - 1 points");
  if (n == 0) {
    C2G_LAUNCH(k_set_inf<F>, 1, 1, 0, st, out);
    CK_LAUNCH("k_set_inf");
    if (info) *info = msm_info{};
    return;
  }
  const uint32_t n32 = (uint32_t)n;
  const uint32_t nb = ceil_div_u32(n, CL_TILE);
  // 1. classify
  uint32_t counts[MSM_CLASS_LISTS];
  for (int k = 0; k < MSM_CLASS_LISTS; k++) CK(cudaMemsetAsync(s.cnt.p[k] + nb, 0, sizeof(uint32_t), st));
  C2G_LAUNCH_SYNC(k_class_count, nb, CL_THREADS, 0, st, sc, n32, s.cnt);
  CK_LAUNCH("k_class_count");
  for (int k = 0; k < MSM_CLASS_LISTS; k++) {
    size_t tb = s.cub_bytes;
    CK(cub::DeviceScan::ExclusiveSum(s.cub_temp, tb, s.cnt.p[k], s.off.p[k], (int)(nb + 1), st));
  }
  C2G_LAUNCH_SYNC(k_class_scatter, nb, CL_THREADS, 0, st, sc, n32, s.off, s.idx);
  CK_LAUNCH("k_class_scatter");
  for (int k = 0; k < MSM_CLASS_LISTS; k++)
    CK(cudaMemcpyAsync(&counts[k], s.off.p[k] + nb, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
  CK(cudaStreamSynchronize(st));
  const uint32_t n1 = counts[MSM_CLS_ONE - 1], n2 = counts[MSM_CLS_OTHER - 1], n3 = counts[MSM_CLS_MINUS_ONE - 1];
  if (info) {
    info->n_one = n1;
    info->n_minus_one = n3;
    info->n_other = n2;
    info->n_zero = n - n1 - n2 - n3;
  }
  if (cancel) cancel->check();

  // 2. the ones and the minus ones: plain sums of their bases, the second
  // subtracted (ones_sum = sum of the ones - sum of the minus ones)
  const P* extra = nullptr;
  const uint32_t* plain_idx[2] = {s.idx.of(MSM_CLS_ONE), s.idx.of(MSM_CLS_MINUS_ONE)};
  const uint32_t plain_n[2] = {n1, n3};
  for (int k = 0; k < 2; k++) {
    if (plain_n[k] == 0) continue;
    uint32_t parts = ceil_div_u32(plain_n[k], MSM_ONES_CHUNK);
    C2G_LAUNCH(k_sum_indexed<F>, grid_for(parts, 128), 128, 0, st, bases, plain_idx[k], plain_n[k], s.run_first);
    CK_LAUNCH("k_sum_indexed");
    tree_sum<F>(s.run_first, 0, 1, parts, st);
    C2G_LAUNCH(k_add_signed<F>, 1, 1, 0, st, s.ones_sum, s.run_first, extra != nullptr, k == 1);
    CK_LAUNCH("k_add_signed");
    extra = s.ones_sum;
  }
  if (n2 == 0) {
    if (extra) {
      C2G_LAUNCH(k_add_to<F>, 1, 1, 0, st, extra, (const P*)nullptr, out);
      CK_LAUNCH("k_add_to");
    } else {
      C2G_LAUNCH(k_set_inf<F>, 1, 1, 0, st, out);
      CK_LAUNCH("k_set_inf");
    }
    return;
  }

  // 3. Pippenger on the rest: ne sorted entries per window, n2 of them
  // (the class list's), or 2 n2 on split bases (2''), every scalar twice,
  // when the tail is most of the MSM (as the H MSM's is)
  const bool all_tail = n2 == n32;
  const bool use_split = split && split->bases && 2ull * n2 >= n && s.split_entries >= 2ull * n2 &&
                         split->c <= s.c_max && 2ull * n < (1ull << 31);  // base indices below bit 31 (the sign)
  const affine_t<F>* const tb_bases = use_split ? split->bases : bases;
  const uint32_t ne = use_split ? 2 * n2 : n2;
  const bool affine = s.affine_ok && msm_affine_for(ne);
  if (info) info->batch_affine = affine;
  const uint32_t forced = msm_forced_c();
  uint32_t c = forced ? forced : msm_choose_c(n2);
  if (affine && !forced) c = msm_affine_c(c, n2);
  if (use_split) c = split->c;
  if (c > s.c_max) c = s.c_max;
  const msm_window_plan p = msm_plan_for(c);
  const uint32_t nw = use_split ? msm_split_windows(c) : p.W;  // windows run
  if (info) {
    info->window_bits = c;
    info->split = use_split;
  }
  const uint32_t K = msm_slice_for(ne);
  const uint32_t slices = ceil_div_u32(ne, K);
  if (slices > s.max_slices) throw error(C2G_ERR_INTERNAL, 0, "msm: slice scratch too small");
  msm_side_stream side;
  const uint32_t G = msm_red_group(p, nw, s.bucket_points);
  for (uint32_t wi = 0; wi < nw; wi++) {
    if (cancel) cancel->check();
    const uint32_t w = nw - 1 - wi;  // top window first (Horner order)
    // window wi's buckets: slot wi % G of group wi / G, in half b of the pool
    const uint32_t grp = wi / G, slot = wi % G, b = grp & 1;
    xyzz_t<F>* const half = s.buckets + (uint64_t)b * G * p.M;
    xyzz_t<F>* const buckets = half + (uint64_t)slot * p.M;
    // every scalar in the tail (the H MSM): the class list is 0 … n - 1
    const uint32_t* didx = all_tail ? nullptr : s.idx.of(MSM_CLS_OTHER);
    // on split bases also digit w + nw of every scalar, on the second copy
    // (bases n … 2n - 1), as entries n2 … 2 n2 - 1
    C2G_LAUNCH(k_digits, grid_for(n2, 256), 256, 0, st, sc, didx, n2, c, w, s.keys0, s.vals0, w + nw,
               use_split ? n32 : 0u);
    CK_LAUNCH("k_digits");
    cub::DoubleBuffer<uint32_t> dk(s.keys0, s.keys1), dv(s.vals0, s.vals1);
    size_t tb = s.cub_bytes;
    CK(cub::DeviceRadixSort::SortPairs(s.cub_temp, tb, dk, dv, (int)ne, 0, (int)c, st));
    const uint32_t* keys = dk.Current();
    const uint32_t* vals = dv.Current();
    CK(cudaMemsetAsync(s.bstart, 0, sizeof(uint32_t) * p.M, st));
    CK(cudaMemsetAsync(s.bend, 0, sizeof(uint32_t) * p.M, st));
    C2G_LAUNCH(k_bucket_bounds, grid_for(ne, 256), 256, 0, st, keys, ne, p.M, s.bstart, s.bend);
    CK_LAUNCH("k_bucket_bounds");
    // the XYZZ slices (2) run over the sorted points, or over the chunk
    // sums of the batch-affine step (2') with their own bucket bounds
    const affine_t<F>* xb = tb_bases;
    const uint32_t *xkeys = keys, *xvals = vals, *xstart = s.bstart, *xend = s.bend;
    uint32_t xn = ne, xK = K, xslices = slices;
    if (affine) {
      xn = affine_chunks<F>(s, tb_bases, keys, vals, ne, p.M, st);
      xb = s.ch_sum, xkeys = s.ch_key, xvals = nullptr, xstart = s.ch_off, xend = s.ch_off + 1;
      xK = msm_slice_for(xn), xslices = ceil_div_u32(xn, xK);
    }
    if (grp >= 2 && slot == 0) CK(cudaStreamWaitEvent(st, side.reduced[b], 0));  // half b reduced: free again
    if (xslices > 0) {
      C2G_LAUNCH(k_accumulate<F>, grid_for(xslices, 128), 128, 0, st, xb, xkeys, xvals, xn, xK, p.M, buckets,
                 s.run_first, s.run_last);
      CK_LAUNCH("k_accumulate");
    }
    dim3 tg = grid_for(xslices / 2 + 1, 128);
    if (tg.x > 132 * 8) tg.x = 132 * 8;
    for (uint32_t d = 1; d < xslices; d *= 2) {
      C2G_LAUNCH(k_slice_tree<F>, tg, 128, 0, st, s.run_first, xkeys, xslices, xK, d);
      CK_LAUNCH("k_slice_tree");
    }
    C2G_LAUNCH(k_bucket_fixup<F>, grid_for(p.M, 128), 128, 0, st, xstart, xend, xn, xK, p.M, s.run_first,
               s.run_last, buckets);
    CK_LAUNCH("k_bucket_fixup");
    if (slot + 1 < G && wi + 1 < nw) continue;  // the group is not full yet
    CK(cudaEventRecord(side.filled[b], st));
    CK(cudaStreamWaitEvent(side.rs, side.filled[b], 0));
    bucket_reduce<F>(s, half, p.M, slot + 1, c, grp == 0, side.rs);
    CK(cudaEventRecord(side.reduced[b], side.rs));
  }
  // the last group's reduction is the side stream's last work
  CK(cudaStreamWaitEvent(st, side.reduced[((nw - 1) / G) & 1], 0));
  C2G_LAUNCH(k_add_to<F>, 1, 1, 0, st, s.horner, extra, out);
  CK_LAUNCH("k_add_to");
}

// msm_streamed is msm_run for bases in page-locked host memory: the bases
// are copied in chunks of `chunk` points into two staging buffers on the
// copy stream cst, overlapped with the MSM of the previous chunk on st; the
// chunk sums (chunk_out, one per chunk) are added at the end. ev holds four
// events (ready0, ready1, free0, free1).
template <class F>
void msm_streamed(const affine_t<F>* host_bases, const fr_t* sc, uint64_t n, msm_scratch<F>& s,
                  affine_t<F>* stage0, affine_t<F>* stage1, uint64_t chunk, xyzz_t<F>* chunk_out, xyzz_t<F>* out,
                  cudaStream_t st, cudaStream_t cst, cudaEvent_t* ev, msm_info* info, const cancel_flag* cancel) {
  if (n == 0) {
    C2G_LAUNCH(k_set_inf<F>, 1, 1, 0, st, out);
    CK_LAUNCH("k_set_inf");
    if (info) *info = msm_info{};
    return;
  }
  const uint64_t chunks = ceil_div(n, chunk);
  affine_t<F>* stage[2] = {stage0, stage1};
  auto issue_copy = [&](uint64_t k) {
    uint64_t off = k * chunk, len = (n - off < chunk) ? n - off : chunk;
    CK(cudaStreamWaitEvent(cst, ev[2 + (k & 1)], 0));
    CK(cudaMemcpyAsync(stage[k & 1], host_bases + off, len * sizeof(affine_t<F>), cudaMemcpyHostToDevice, cst));
    CK(cudaEventRecord(ev[k & 1], cst));
  };
  // both staging buffers start free
  CK(cudaEventRecord(ev[2], st));
  CK(cudaEventRecord(ev[3], st));
  issue_copy(0);
  msm_info total{};
  for (uint64_t k = 0; k < chunks; k++) {
    if (k + 1 < chunks) issue_copy(k + 1);
    uint64_t off = k * chunk, len = (n - off < chunk) ? n - off : chunk;
    CK(cudaStreamWaitEvent(st, ev[k & 1], 0));
    msm_info ci{};
    msm_run<F>(stage[k & 1], sc + off, len, s, chunk_out + k, st, &ci, cancel);
    CK(cudaEventRecord(ev[2 + (k & 1)], st));
    total.n_zero += ci.n_zero;
    total.n_one += ci.n_one;
    total.n_minus_one += ci.n_minus_one;
    total.n_other += ci.n_other;
    if (ci.window_bits > total.window_bits) total.window_bits = ci.window_bits;
    total.batch_affine = total.batch_affine || ci.batch_affine;
  }
  tree_sum<F>(chunk_out, 0, 1, (uint32_t)chunks, st);
  C2G_LAUNCH(k_add_to<F>, 1, 1, 0, st, chunk_out, (const xyzz_t<F>*)nullptr, out);
  CK_LAUNCH("k_add_to");
  if (info) *info = total;
}

extern template void msm_run<fp_t>(const affine_t<fp_t>*, const fr_t*, uint64_t, msm_scratch<fp_t>&, xyzz_t<fp_t>*,
                                   cudaStream_t, msm_info*, const cancel_flag*, const msm_split<fp_t>*);
extern template void msm_run<fp2_t>(const affine_t<fp2_t>*, const fr_t*, uint64_t, msm_scratch<fp2_t>&,
                                    xyzz_t<fp2_t>*, cudaStream_t, msm_info*, const cancel_flag*,
                                    const msm_split<fp2_t>*);
extern template void msm_streamed<fp_t>(const affine_t<fp_t>*, const fr_t*, uint64_t, msm_scratch<fp_t>&,
                                        affine_t<fp_t>*, affine_t<fp_t>*, uint64_t, xyzz_t<fp_t>*, xyzz_t<fp_t>*,
                                        cudaStream_t, cudaStream_t, cudaEvent_t*, msm_info*, const cancel_flag*);
extern template void msm_streamed<fp2_t>(const affine_t<fp2_t>*, const fr_t*, uint64_t, msm_scratch<fp2_t>&,
                                         affine_t<fp2_t>*, affine_t<fp2_t>*, uint64_t, xyzz_t<fp2_t>*,
                                         xyzz_t<fp2_t>*, cudaStream_t, cudaStream_t, cudaEvent_t*, msm_info*,
                                         const cancel_flag*);

}  // namespace c2g
