#include "ntt.cuh"
#include <vector>

namespace c2g {

// ---- host Fr helpers -------------------------------------------------------

fr_t fr_host_one() {
  const uint32_t l[8] = FR_ONE;
  return fr_t::from_limbs(l);
}

fr_t fr_host_from_u64(uint64_t v) {
  const uint32_t r2[8] = FR_R2;
  fr_t x = fr_t::zero();
  x.v[0] = (uint32_t)v;
  x.v[1] = (uint32_t)(v >> 32);
  return x * fr_t::from_limbs(r2);
}

bool fr_host_canonical(const fr_t& x) {
  const uint32_t r[8] = FR_MOD;
  for (int i = 7; i >= 0; i--)
    if (x.v[i] != r[i]) return x.v[i] < r[i];
  return false;  // x = r
}

fr_t fr_host_pow(fr_t x, uint64_t e) {
  uint32_t l[2] = {(uint32_t)e, (uint32_t)(e >> 32)};
  return x.pow_limbs(l, 2, fr_host_one());
}

fr_t fr_host_inv(fr_t x) {
  uint32_t e[8] = FR_MOD;
  // r - 2 (r is odd and > 2: only the low limbs borrow)
  uint64_t acc = (uint64_t)e[0] - 2;
  e[0] = (uint32_t)acc;
  uint32_t borrow = (uint32_t)(acc >> 63);
  for (int i = 1; i < 8 && borrow; i++) {
    borrow = e[i] == 0;
    e[i] -= 1;
  }
  return x.pow_limbs(e, 8, fr_host_one());
}

fr_t fr_host_root_of_unity(uint32_t log_n) {
  const uint32_t w[8] = FR_ROOT_2_32;
  fr_t x = fr_t::from_limbs(w);
  for (uint32_t i = log_n; i < 32; i++) x = x.sqr();
  return x;
}

fr_t fr_host_coset_gen() {
  const uint32_t g[8] = FR_COSET_GEN;
  return fr_t::from_limbs(g);
}

// ---- tables ------------------------------------------------------------------

constexpr uint32_t TW_LO_BITS = 13;

__global__ void k_twiddle_expand(fr_t* out, uint64_t n, const fr_t* lo, const fr_t* hi) {
  uint64_t e = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (e >= n) return;
  st_vec(out + e, ldg_vec(lo + (e & ((1u << TW_LO_BITS) - 1))) * ldg_vec(hi + (e >> TW_LO_BITS)));
}

static std::vector<fr_t> host_powers(fr_t base, uint64_t count) {
  std::vector<fr_t> v(count);
  fr_t x = fr_host_one();
  for (uint64_t i = 0; i < count; i++) {
    v[i] = x;
    x = x * base;
  }
  return v;
}

uint64_t ntt_tables::bytes_for(uint32_t max_log) {
  uint64_t half = max_log ? (1ull << (max_log - 1)) : 1;
  uint64_t small = 1ull << TW_LO_BITS;
  uint64_t hi_n = (half + small - 1) / small;
  return sizeof(fr_t) * (half + small + hi_n + 4 * (1ull << COSET_TABLE_BITS)) + 1024;
}

void ntt_tables::build(uint32_t ml, cudaStream_t st) {
  if (ml > NTT_MAX_LOG) throw_invalid(strprintf("ntt: domain 2^%u exceeds 2^%u", ml, NTT_MAX_LOG));
  max_log = ml;
  const uint64_t half = ml ? (1ull << (ml - 1)) : 1;
  const uint64_t small = 1ull << TW_LO_BITS;
  const uint64_t hi_n = (half + small - 1) / small;
  const uint64_t ct = 1ull << COSET_TABLE_BITS;
  CK(cudaMalloc(&mem, bytes_for(ml)));
  fr_t* p = (fr_t*)mem;
  omega = p;
  p += half;
  fr_t* tw_lo = p;
  p += small;
  fr_t* tw_hi = p;
  p += hi_n;
  g_lo = p;
  p += ct;
  g_hi = p;
  p += ct;
  gi_lo = p;
  p += ct;
  gi_hi = p;

  fr_t w = fr_host_root_of_unity(ml);
  std::vector<fr_t> lo = host_powers(w, small);
  std::vector<fr_t> hi = host_powers(fr_host_pow(w, small), hi_n);
  fr_t g = fr_host_coset_gen(), gi = fr_host_inv(g);
  std::vector<fr_t> glo = host_powers(g, ct), ghi = host_powers(fr_host_pow(g, ct), ct);
  std::vector<fr_t> gilo = host_powers(gi, ct), gihi = host_powers(fr_host_pow(gi, ct), ct);
  CK(cudaMemcpyAsync(tw_lo, lo.data(), small * sizeof(fr_t), cudaMemcpyHostToDevice, st));
  CK(cudaMemcpyAsync(tw_hi, hi.data(), hi_n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
  CK(cudaMemcpyAsync(g_lo, glo.data(), ct * sizeof(fr_t), cudaMemcpyHostToDevice, st));
  CK(cudaMemcpyAsync(g_hi, ghi.data(), ct * sizeof(fr_t), cudaMemcpyHostToDevice, st));
  CK(cudaMemcpyAsync(gi_lo, gilo.data(), ct * sizeof(fr_t), cudaMemcpyHostToDevice, st));
  CK(cudaMemcpyAsync(gi_hi, gihi.data(), ct * sizeof(fr_t), cudaMemcpyHostToDevice, st));
  C2G_LAUNCH(k_twiddle_expand, grid_for(half, 256), 256, 0, st, omega, half, tw_lo, tw_hi);
  CK_LAUNCH("k_twiddle_expand");
  CK(cudaStreamSynchronize(st));  // the host vectors die here
}

void ntt_tables::free() {
  if (mem) cudaFree(mem);
  mem = nullptr;
  omega = g_lo = g_hi = gi_lo = gi_hi = nullptr;
  max_log = 0;
}

// ---- kernels -------------------------------------------------------------------

__device__ __forceinline__ uint32_t bitrev(uint32_t x, uint32_t bits) { return bits ? __brev(x) >> (32 - bits) : 0; }

__device__ __forceinline__ fr_t coset_pow(const fr_t* lo, const fr_t* hi, uint32_t j) {
  return ldg_vec(lo + (j & ((1u << COSET_TABLE_BITS) - 1))) * ldg_vec(hi + (j >> COSET_TABLE_BITS));
}

// w^e for an exponent e < 2^max_log (w of order 2^max_log), or w^-e:
// the table holds the first half, w^(e + N/2) = -w^e.
__device__ __forceinline__ fr_t twiddle(const fr_t* __restrict__ tw, uint32_t e, bool inverse, uint32_t tw_half) {
  if (inverse) e = (2 * tw_half - e) & (2 * tw_half - 1);
  if (e < tw_half) return ldg_vec(tw + e);
  return ldg_vec(tw + (e - tw_half)).neg();
}

// Fr elements in shared memory, limb-major (limb j of element p at word
// j*STRIDE + swizzle(p); a compile-time stride keeps the addresses
// immediate offsets): a warp reading one limb of 32 elements touches 32
// consecutive words, one per bank, where 32-byte structs would put 4 threads
// on each bank. The swizzles XOR the low five index bits with a function of
// bits 5-7 so that the strided patterns of the passes stay conflict-free
// too: for data, the lanes of a thread step map to rows with S stage bits
// fixed (M's columns 31, 21, 25 are the one choice that keeps every stage
// offset s and S <= 3 a bijection onto the banks); for the root table, a
// stride of 2^t between lanes.
template <bool ROOTS, uint32_t STRIDE>
struct fr_smem {
  uint32_t* w;
  __device__ __forceinline__ static uint32_t swizzle(uint32_t p) {
    if (ROOTS) return p ^ ((p >> 5) & 31);
    const uint32_t h = p >> 5;
    return p ^ ((h & 1 ? 31u : 0u) ^ (h & 2 ? 21u : 0u) ^ (h & 4 ? 25u : 0u));
  }
  __device__ __forceinline__ fr_t get(uint32_t p) const {
    const uint32_t q = swizzle(p);
    fr_t x;
    C2G_UNROLL for (int j = 0; j < fr_t::N; j++) x.v[j] = w[j * STRIDE + q];
    return x;
  }
  __device__ __forceinline__ void set(uint32_t p, const fr_t& x) const {
    const uint32_t q = swizzle(p);
    C2G_UNROLL for (int j = 0; j < fr_t::N; j++) w[j * STRIDE + q] = x.v[j];
  }
};

// Radix-2 stages s .. s+S-1 of a pass (see k_ntt_pass) on the columns in
// shared memory: each thread loads the 2^S elements of one butterfly group
// (rows differing in bits s .. s+S-1), runs the S stages in registers and
// stores them back. stw holds the pass's small-transform roots. LOW is s ==
// 0: then a butterfly's twiddle index is row mod 2^st = i mod 2^st, known at
// compile time, and the butterflies whose twiddle is 1 skip their product
// (3 of the 12 products of a three-stage step, 1 of 4 of a two-stage one;
// stage 0, whose twiddles are all 1, is skipped in every step).
template <bool DIT, uint32_t S, bool LOW, class Data, class Roots>
__device__ __forceinline__ void ntt_step(Data sm, Roots stw, uint32_t k, uint32_t g, uint32_t s) {
  const uint32_t G = 1u << g;
  const uint32_t units = (1u << (k - S)) << g;
  for (uint32_t u = threadIdx.x; u < units; u += blockDim.x) {
    const uint32_t l = u & (G - 1), q = u >> g;
    const uint32_t r0 = ((q >> s) << (s + S)) | (q & ((1u << s) - 1));
    fr_t x[1u << S];
    C2G_UNROLL for (uint32_t i = 0; i < (1u << S); i++) x[i] = sm.get(((r0 | (i << s)) << g) + l);
    C2G_UNROLL for (uint32_t jj = 0; jj < S; jj++) {
      const uint32_t j = DIT ? jj : S - 1 - jj;  // stage s + j
      const uint32_t st = s + j;
      C2G_UNROLL for (uint32_t i = 0; i < (1u << S); i++) {
        if (i & (1u << j)) continue;
        fr_t& a = x[i];
        fr_t& b = x[i | (1u << j)];
        const uint32_t row = r0 | (i << s);
        const fr_t u0 = a;
        if (st == 0 || (LOW && (i & ((1u << j) - 1)) == 0)) {  // twiddle 1
          a = u0 + b;
          b = u0 - b;
        } else {
          const fr_t w = stw.get((row & ((1u << st) - 1)) << (k - st - 1));
          if (DIT) {
            const fr_t v = b * w;
            a = u0 + v;
            b = u0 - v;
          } else {
            a = u0 + b;
            b = (u0 - b) * w;
          }
        }
      }
    }
    C2G_UNROLL for (uint32_t i = 0; i < (1u << S); i++) sm.set(((r0 | (i << s)) << g) + l, x[i]);
  }
}

// A pass block holds at most 128 threads of 2^step elements, so a pass has
// at most 7 + step stages, and its root table 2^(6 + step) roots.
__host__ __device__ constexpr uint32_t ntt_pass_bits(uint32_t step) { return 7 + step; }
__host__ __device__ constexpr uint32_t ntt_block_elems(uint32_t step) { return 1u << ntt_pass_bits(step); }
__host__ __device__ constexpr uint32_t ntt_roots(uint32_t step) { return ntt_block_elems(step) / 2; }
__host__ __device__ constexpr size_t ntt_pass_smem(uint32_t step) {
  return sizeof(fr_t) * (ntt_block_elems(step) + ntt_roots(step));
}

// One pass: k consecutive radix-2 stages on the index bits [lo_bit, lo_bit +
// k) of a sub-transform of size N = 2^(lo_bit + k) (the bits above were
// handled by earlier passes), for every column of 2^k elements with the
// other bits fixed. A block holds G = 2^g columns with consecutive low bits
// (coalesced loads).
//
// Four-step split of the radix-2 twiddles: for a column with low part c (<
// 2^lo_bit), the stage-s twiddle w_2h^(a·2^lo_bit + c), h = 2^(lo_bit+s),
// factors into w_2^(s+1)^a, a root of the pass's own small transform (a
// shared-memory table of 2^(k-1) entries), times w_2h^c. The second factors
// of all k stages collapse into one product per element: for DIF the pass
// is the small transform on each column followed by element (r, c) times
// w_N^(c·bitrev_k(r)) (k-bit reversal); DIT is its transpose (the same
// diagonal first, then the small transform). So a butterfly reads its
// twiddle from shared memory and an element pays one table read and one
// product per pass, instead of a global table read per butterfly. The
// lowest pass (lo_bit = 0) has no diagonal.
//
// in_scale (DIT's first pass only, which is the lowest) multiplies element
// p of the transform as it is loaded by in_scale.c * g^bitrev(p): the
// coset shift and 1/n between an inverse DIF and a forward coset DIT
// (compute_h), without a pass of its own over memory.
struct ntt_in_scale {
  fr_t c;
  const fr_t* lo = nullptr;  // nullptr: no scaling
  const fr_t* hi = nullptr;
  uint32_t log_n = 0;
};

template <bool DIT, uint32_t STEP>
__global__ void __launch_bounds__(256) k_ntt_pass(fr_t* data, uint32_t lo_bit, uint32_t k, uint32_t g,
                                                  const fr_t* __restrict__ tw, uint32_t max_log, bool inverse,
                                                  ntt_in_scale in_scale) {
  C2G_DYNAMIC_SMEM(uint32_t, smem);
  const uint32_t G = 1u << g;
  const uint32_t nelem = (1u << k) << g;
  const fr_smem<false, ntt_block_elems(STEP)> sm{smem};  // element (row a, column l) at a·G + l
  const fr_smem<true, ntt_roots(STEP)> stw{smem + fr_t::N * ntt_block_elems(STEP)};  // w_K^(+-i), K = 2^k, i < K/2
  const uint32_t tw_half = 1u << (max_log - 1);
  for (uint32_t i = threadIdx.x; i < (1u << k) / 2; i += blockDim.x)
    stw.set(i, twiddle(tw, i << (max_log - k), inverse, tw_half));
  // Global element of (row a, column l). Above the lowest pass, the G
  // columns have consecutive low parts c0 + l (rows 2^lo_bit apart). The
  // lowest pass's columns are whole transforms (rows adjacent), so the block
  // takes G consecutive ones, 2^k apart, and reads each row-wise.
  const uint64_t blk = blockIdx.x;
  uint64_t base;
  uint32_t c0 = 0;
  if (lo_bit) {
    const uint32_t nlo = (1u << lo_bit) >> g;  // blocks along the low bits
    c0 = (uint32_t)(blk % nlo) * G;
    base = ((blk / nlo) << (lo_bit + k)) + c0;
  } else {
    base = blk << (k + g);
  }
  auto index = [&](uint32_t a, uint32_t l) -> uint64_t {
    return lo_bit ? base + ((uint64_t)a << lo_bit) + l : base + ((uint64_t)l << k) + a;
  };
  // thread-consecutive e walks the global memory consecutively
  auto row_of = [&](uint32_t e) { return lo_bit ? e >> g : e & ((1u << k) - 1); };
  auto col_of = [&](uint32_t e) { return lo_bit ? e & (G - 1) : e >> k; };
  // exponent unit of w_N in the table's w
  const uint32_t diag_shift = max_log - lo_bit - k;
  auto diag = [&](uint32_t a, uint32_t l) {
    return twiddle(tw, ((c0 + l) * bitrev(a, k)) << diag_shift, inverse, tw_half);
  };
  for (uint32_t e = threadIdx.x; e < nelem; e += blockDim.x) {
    const uint32_t a = row_of(e), l = col_of(e);
    const uint64_t p = index(a, l);
    fr_t x = ld_vec(data + p);
    if (DIT && lo_bit) x = x * diag(a, l);
    if (DIT && in_scale.lo)
      x = x * (in_scale.c * coset_pow(in_scale.lo, in_scale.hi, bitrev((uint32_t)p, in_scale.log_n)));
    sm.set((a << g) + l, x);
  }
  __syncthreads();
  // Stages STEP at a time, each thread holding 2^STEP elements of one
  // column in registers (a shared-memory round trip and a barrier per STEP
  // stages), fewer for the last step when STEP does not divide k. DIF runs
  // the stages from k-1 down, DIT from 0 up.
  for (uint32_t done = 0; done < k;) {
    const uint32_t left = k - done;
    const uint32_t S = left < STEP ? left : STEP;
    const uint32_t s = DIT ? done : k - done - S;  // the stages s .. s+S-1
    if (STEP >= 3 && S == 3) {
      if (s == 0)
        ntt_step<DIT, 3, true>(sm, stw, k, g, s);
      else
        ntt_step<DIT, 3, false>(sm, stw, k, g, s);
    } else if (S == 2) {
      if (s == 0)
        ntt_step<DIT, 2, true>(sm, stw, k, g, s);
      else
        ntt_step<DIT, 2, false>(sm, stw, k, g, s);
    } else {
      ntt_step<DIT, 1, false>(sm, stw, k, g, s);  // one stage: its twiddles are all 1 only at s == 0 (st == 0)
    }
    done += S;
    __syncthreads();
  }
  for (uint32_t e = threadIdx.x; e < nelem; e += blockDim.x) {
    const uint32_t a = row_of(e), l = col_of(e);
    const fr_t x = sm.get((a << g) + l);
    st_vec(data + index(a, l), !DIT && lo_bit ? x * diag(a, l) : x);
  }
}

// In-place bit reversal by tiles, for log_n >= 2*BR_BITS: index i = (a, m,
// b) with a the top and b the bottom BR_BITS bits goes to (rev b, rev m,
// rev a). A block takes the 2^BR_BITS x 2^BR_BITS tile of one middle value m
// and that of rev m, reads each row-wise (2^BR_BITS consecutive elements),
// transposes both through shared memory and writes each into the other's
// place row-wise: every global access is a run of consecutive elements,
// where the element-wise swap reads and writes one scattered 32-byte
// element per thread (16.9 ms of a 2^27 NTT in ncu, 16 % of DRAM
// bandwidth). Blocks with rev m < m have nothing to do. 16 x 16 tiles, both
// in shared memory at once, beat 32 x 32 tiles transposed one after the
// other (NTT 2^27 forward on an H200).
constexpr uint32_t BR_BITS = 4;
constexpr uint32_t BR_SIDE = 1u << BR_BITS;
constexpr uint32_t BR_PITCH = BR_SIDE + 1;  // padded rows: fewer bank conflicts
constexpr uint32_t BR_TILE_WORDS = BR_SIDE * BR_PITCH;

__global__ void __launch_bounds__(BR_SIDE * BR_SIDE) k_bitrev_tiles(fr_t* d, uint32_t log_n) {
  __shared__ uint32_t tx[fr_t::N * BR_TILE_WORDS];
  __shared__ uint32_t ty[fr_t::N * BR_TILE_WORDS];
  const uint32_t mid_bits = log_n - 2 * BR_BITS;
  const uint32_t m = blockIdx.x, mr = bitrev(m, mid_bits);
  if (mr < m) return;
  const uint32_t a = threadIdx.x >> BR_BITS, b = threadIdx.x & (BR_SIDE - 1);
  auto at = [&](uint32_t hi, uint32_t mid, uint32_t lo) -> fr_t* {
    return d + (((uint64_t)hi << (log_n - BR_BITS)) | ((uint64_t)mid << BR_BITS) | lo);
  };
  const fr_t x = ld_vec(at(a, m, b)), y = ld_vec(at(a, mr, b));
  const uint32_t w = a * BR_PITCH + b;
  C2G_UNROLL for (int j = 0; j < fr_t::N; j++) {
    tx[j * BR_TILE_WORDS + w] = x.v[j];
    ty[j * BR_TILE_WORDS + w] = y.v[j];
  }
  __syncthreads();
  // slot (r, ., c) receives the element (rev c, ., rev r)
  const uint32_t r = a, c = b;
  const uint32_t q = bitrev(c, BR_BITS) * BR_PITCH + bitrev(r, BR_BITS);
  fr_t ox, oy;
  C2G_UNROLL for (int j = 0; j < fr_t::N; j++) {
    ox.v[j] = tx[j * BR_TILE_WORDS + q];
    oy.v[j] = ty[j * BR_TILE_WORDS + q];
  }
  st_vec(at(r, mr, c), ox);
  if (mr != m) st_vec(at(r, m, c), oy);
}

// Element-wise swap, for transforms too small for tiles.
__global__ void k_bitrev_swap(fr_t* d, uint32_t log_n) {
  uint64_t n = 1ull << log_n;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t j = bitrev((uint32_t)i, log_n);
    if (i < j) {
      fr_t x = d[i];
      d[i] = d[j];
      d[j] = x;
    }
  }
}

// d[i] *= scale * g^i (natural order), or scale alone when lo == nullptr.
__global__ void k_scale_natural(fr_t* d, uint64_t n, fr_t scale, const fr_t* lo, const fr_t* hi) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    fr_t x = ld_vec(d + i) * scale;
    if (lo) x = x * coset_pow(lo, hi, (uint32_t)i);
    st_vec(d + i, x);
  }
}

// out[j] = canonical((in[p] * g^-j - sub[p]) * scale), j = bitrev(p): the
// last step of compute_h (in: the coset inverse's output, sub: c's
// coefficients, both bit-reversed and times n).
__device__ __forceinline__ fr_t h_coefficient(const fr_t& x, const fr_t& sub, const fr_t& scale, const fr_t* lo,
                                              const fr_t* hi, uint32_t j) {
  return ((x * coset_pow(lo, hi, j) - sub) * scale).from_mont();
}

__global__ void k_h_finish(const fr_t* in, const fr_t* sub, fr_t* out, uint32_t log_n, fr_t scale, const fr_t* lo,
                           const fr_t* hi) {
  uint64_t n = 1ull << log_n;
  for (uint64_t p = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; p < n; p += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t j = bitrev((uint32_t)p, log_n);
    st_vec(out + j, h_coefficient(ldg_vec(in + p), ldg_vec(sub + p), scale, lo, hi, j));
  }
}

// k_h_finish by tiles (log_n >= 2*BR_BITS; out must alias neither input): a
// block reads the 16 x 16 tiles of one middle index of in and sub row-wise,
// transposes them in shared memory and writes the result row-wise into the
// tile of the reversed middle index (see k_bitrev_tiles), instead of one
// scattered write per element.
__global__ void __launch_bounds__(BR_SIDE * BR_SIDE) k_h_finish_tiles(const fr_t* __restrict__ in,
                                                                     const fr_t* __restrict__ sub,
                                                                     fr_t* __restrict__ out, uint32_t log_n,
                                                                     fr_t scale, const fr_t* lo, const fr_t* hi) {
  __shared__ uint32_t tx[fr_t::N * BR_TILE_WORDS];
  __shared__ uint32_t ts[fr_t::N * BR_TILE_WORDS];
  const uint32_t mid_bits = log_n - 2 * BR_BITS;
  const uint32_t m = blockIdx.x, mr = bitrev(m, mid_bits);
  const uint32_t a = threadIdx.x >> BR_BITS, b = threadIdx.x & (BR_SIDE - 1);
  auto index = [&](uint32_t hi_bits, uint32_t mid, uint32_t lo_bits) {
    return ((uint64_t)hi_bits << (log_n - BR_BITS)) | ((uint64_t)mid << BR_BITS) | lo_bits;
  };
  const uint64_t src = index(a, m, b);
  const fr_t x = ldg_vec(in + src), s = ldg_vec(sub + src);
  C2G_UNROLL for (int j = 0; j < fr_t::N; j++) {
    tx[j * BR_TILE_WORDS + a * BR_PITCH + b] = x.v[j];
    ts[j * BR_TILE_WORDS + a * BR_PITCH + b] = s.v[j];
  }
  __syncthreads();
  // destination (r, rev m, c) = bitrev of the source (rev c, m, rev r)
  const uint32_t r = a, c = b;
  const uint32_t q = bitrev(c, BR_BITS) * BR_PITCH + bitrev(r, BR_BITS);
  fr_t y, z;
  C2G_UNROLL for (int j = 0; j < fr_t::N; j++) {
    y.v[j] = tx[j * BR_TILE_WORDS + q];
    z.v[j] = ts[j * BR_TILE_WORDS + q];
  }
  const uint64_t dst = index(r, mr, c);
  st_vec(out + dst, h_coefficient(y, z, scale, lo, hi, (uint32_t)dst));
}

// a[i] *= b[i]
__global__ void k_mul_pointwise(fr_t* a, const fr_t* b, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    st_vec(a + i, ld_vec(a + i) * ldg_vec(b + i));
}

// b[i] = canonical(a[i] b[i]) (out of Montgomery form).
__global__ void k_mul_pointwise_canonical(const fr_t* a, fr_t* b, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    st_vec(b + i, (ldg_vec(a + i) * ld_vec(b + i)).from_mont());
}

// ---- drivers ---------------------------------------------------------------------

static dim3 elementwise_grid(uint64_t n) {
  uint64_t b = (n + 255) / 256;
  if (b > 132 * 64) b = 132 * 64;
  if (b == 0) b = 1;
  return dim3((uint32_t)b);
}

static void check_tables(uint32_t log_n, const ntt_tables& t) {
  if (log_n > t.max_log) throw error(C2G_ERR_INTERNAL, 0, strprintf("ntt: tables built for 2^%u, need 2^%u", t.max_log, log_n));
}

// Stages per thread step for a pass of k stages: three (eight elements per
// thread, a barrier per three stages) where k >= 9, else two (four elements:
// fewer registers, more resident blocks; faster for the shorter passes).
// C2G_NTT_STEP=2 or 3 forces one for every pass (benchmarks; read per call).
static uint32_t ntt_step_bits(uint32_t k) {
  const uint32_t forced = (uint32_t)env_int("C2G_NTT_STEP", 2, 3, 0);
  if (forced == 2 && k <= ntt_pass_bits(2)) return 2;
  if (forced) return 3;
  return k >= 9 ? 3 : 2;
}

// Stages per pass: at most 9 (10 above 2^27): 2^27 = 9 + 9 + 9.
// C2G_NTT_PASS_BITS=7…10 overrides (tests and benchmarks; read per call).
static uint32_t ntt_max_pass_bits(uint32_t log_n) {
  return (uint32_t)env_int("C2G_NTT_PASS_BITS", 7, (int)ntt_pass_bits(3), log_n > 27 ? ntt_pass_bits(3) : ntt_pass_bits(2));
}

template <bool DIT>
static void ntt_passes(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st,
                       ntt_in_scale in_scale = ntt_in_scale{}) {
  check_tables(log_n, t);
  if (log_n == 0) return;
  const uint32_t pass_bits = ntt_max_pass_bits(log_n);
  const uint32_t passes = (log_n + pass_bits - 1) / pass_bits;
  uint32_t done = 0;
  for (uint32_t p = 0; p < passes; p++) {
    // near-equal pass sizes
    uint32_t k = (log_n - done) / (passes - p);
    if ((log_n - done) % (passes - p)) k++;
    const uint32_t step = ntt_step_bits(k);
    const uint32_t lo_bit = DIT ? done : log_n - done - k;
    const uint32_t S = k < step ? k : step;
    // columns per block: up to 128 threads of 2^S elements (at most
    // ntt_block_elems(step)); the lowest pass groups whole transforms
    const uint32_t g_max = lo_bit ? lo_bit : log_n - k;
    uint32_t g = 0;
    while (g < g_max && (1u << (k + g + 1)) <= ntt_block_elems(S)) g++;
    const uint32_t threads = (1u << (k - S)) << g;
    const uint64_t blocks = (1ull << log_n) >> (k + g);
    const size_t smem = ntt_pass_smem(step);
    auto* k_pass = step == 3 ? k_ntt_pass<DIT, 3> : k_ntt_pass<DIT, 2>;
    C2G_LAUNCH_SYNC(k_pass, dim3((uint32_t)blocks), threads, smem, st, d, lo_bit, k, g, t.omega, t.max_log, inverse,
                    p == 0 ? in_scale : ntt_in_scale{});
    CK_LAUNCH("k_ntt_pass");
    done += k;
  }
}

void ntt_dif(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st) {
  ntt_passes<false>(d, log_n, inverse, t, st);
}
void ntt_dit(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st) {
  ntt_passes<true>(d, log_n, inverse, t, st);
}

void ntt_natural(fr_t* d, uint32_t log_n, bool inverse, bool coset, const ntt_tables& t, cudaStream_t st) {
  check_tables(log_n, t);
  const uint64_t n = 1ull << log_n;
  if (!inverse && coset) {
    C2G_LAUNCH(k_scale_natural, elementwise_grid(n), 256, 0, st, d, n, fr_host_one(), t.g_lo, t.g_hi);
    CK_LAUNCH("k_scale_natural");
  }
  ntt_dif(d, log_n, inverse, t, st);
  if (log_n >= 2 * BR_BITS) {
    C2G_LAUNCH_SYNC(k_bitrev_tiles, dim3(1u << (log_n - 2 * BR_BITS)), BR_SIDE * BR_SIDE, 0, st, d, log_n);
    CK_LAUNCH("k_bitrev_tiles");
  } else {
    C2G_LAUNCH(k_bitrev_swap, elementwise_grid(n), 256, 0, st, d, log_n);
    CK_LAUNCH("k_bitrev_swap");
  }
  if (inverse) {
    fr_t ninv = fr_host_inv(fr_host_from_u64(n));
    C2G_LAUNCH(k_scale_natural, elementwise_grid(n), 256, 0, st, d, n, ninv, coset ? t.gi_lo : nullptr, coset ? t.gi_hi : nullptr);
    CK_LAUNCH("k_scale_natural");
  }
}

// h = (A B - C) / Z with six NTTs of size n instead of the usual seven (no
// coset transform of C). A B = P_lo + x^n P_hi (P_lo, P_hi of degree < n),
// and x^n = g^n on the coset g<w>, so the coset evaluations of A B are
// those of R = P_lo + g^n P_hi, a polynomial of degree < n that one coset
// inverse recovers. Then A B - C = Z P_hi + (P_lo + P_hi - C) and
// R - C = (g^n - 1) P_hi + (P_lo + P_hi - C) give h = (R - C) / (g^n - 1)
// coefficient by coefficient: exactly what (A B - C) / (g^n - 1) on the
// coset, transformed back, gives, for any a, b, c (when a b = c on the
// domain, P_lo + P_hi = C and h = P_hi).
// a and b (domain evaluations) -> their coset evaluations, natural order:
// the four NTTs both H forms start with.
static void coset_evaluations(fr_t* a, fr_t* b, uint32_t log_n, const ntt_tables& t, cudaStream_t st) {
  const fr_t ninv = fr_host_inv(fr_host_from_u64(1ull << log_n));
  // coefficient p (bit-reversed order) of the inverse transform, times n,
  // scaled by 1/n and g^bitrev(p) as the coset transform loads it
  const ntt_in_scale to_coset{ninv, t.g_lo, t.g_hi, log_n};
  for (fr_t* v : {a, b}) {
    ntt_dif(v, log_n, true, t, st);  // evaluations -> coefficients (bit-reversed, times n)
    ntt_passes<true>(v, log_n, false, t, st, to_coset);  // coset evaluations, natural order
  }
}

void compute_h(fr_t* a, fr_t* b, fr_t* c, uint32_t log_n, const ntt_tables& t, fr_t* h_out, cudaStream_t st) {
  check_tables(log_n, t);
  if (h_out == a || h_out == c) throw error(C2G_ERR_INTERNAL, 0, "compute_h: h_out aliases a or c");
  const uint64_t n = 1ull << log_n;
  const fr_t ninv = fr_host_inv(fr_host_from_u64(n));
  coset_evaluations(a, b, log_n, t, st);
  ntt_dif(c, log_n, true, t, st);  // n C, bit-reversed
  C2G_LAUNCH(k_mul_pointwise, elementwise_grid(n), 256, 0, st, a, b, n);
  CK_LAUNCH("k_mul_pointwise");
  ntt_dif(a, log_n, true, t, st);  // n R_i g^i, bit-reversed
  // Z(g w^i) = g^n - 1 on the whole coset
  const fr_t scale = ninv * fr_host_inv(fr_host_pow(fr_host_coset_gen(), n) - fr_host_one());
  if (log_n >= 2 * BR_BITS) {
    C2G_LAUNCH_SYNC(k_h_finish_tiles, dim3(1u << (log_n - 2 * BR_BITS)), BR_SIDE * BR_SIDE, 0, st, a, c, h_out,
                    log_n, scale, t.gi_lo, t.gi_hi);
    CK_LAUNCH("k_h_finish_tiles");
  } else {
    C2G_LAUNCH(k_h_finish, elementwise_grid(n), 256, 0, st, a, c, h_out, log_n, scale, t.gi_lo, t.gi_hi);
    CK_LAUNCH("k_h_finish");
  }
}

// The coset-Lagrange form's H scalars (ntt.cuh): the first four of
// compute_h's six NTTs, then the pointwise product out of Montgomery form.
// On the coset that product is (g^n - 1) h + C when a b = c on the domain
// (compute_h's comment), which the key's H, L and input terms turn into
// h(tau) Z(tau) / delta (c2g.h, C2G_H_COSET_LAGRANGE). Where a b != c the
// proof fails verification: what "when" does not give, the proof does not
// claim.
void compute_coset_products(fr_t* a, fr_t* b, uint32_t log_n, const ntt_tables& t, cudaStream_t st) {
  check_tables(log_n, t);
  const uint64_t n = 1ull << log_n;
  coset_evaluations(a, b, log_n, t, st);
  C2G_LAUNCH(k_mul_pointwise_canonical, elementwise_grid(n), 256, 0, st, a, b, n);
  CK_LAUNCH("k_mul_pointwise_canonical");
}

}  // namespace c2g
