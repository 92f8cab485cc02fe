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
  out[e] = lo[e & ((1u << TW_LO_BITS) - 1)] * hi[e >> TW_LO_BITS];
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
  const uint64_t tws = 1ull << NTT_MAX_PASS_BITS;
  return sizeof(fr_t) * (half + small + hi_n + tws + 4 * (1ull << COSET_TABLE_BITS)) + 1024;
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
  p += ct;
  tw_small = p;

  fr_t w = fr_host_root_of_unity(ml);
  std::vector<fr_t> lo = host_powers(w, small);
  std::vector<fr_t> hi = host_powers(fr_host_pow(w, small), hi_n);
  fr_t g = fr_host_coset_gen(), gi = fr_host_inv(g);
  std::vector<fr_t> glo = host_powers(g, ct), ghi = host_powers(fr_host_pow(g, ct), ct);
  std::vector<fr_t> gilo = host_powers(gi, ct), gihi = host_powers(fr_host_pow(gi, ct), ct);
  const uint64_t th = 1ull << (NTT_MAX_PASS_BITS - 1);
  const fr_t v = fr_host_root_of_unity(NTT_MAX_PASS_BITS);
  std::vector<fr_t> tws = host_powers(v, th), twsi = host_powers(fr_host_inv(v), th);
  tws.insert(tws.end(), twsi.begin(), twsi.end());
  CK(cudaMemcpyAsync(tw_small, tws.data(), 2 * th * sizeof(fr_t), cudaMemcpyHostToDevice, st));
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
  omega = tw_small = g_lo = g_hi = gi_lo = gi_hi = nullptr;
  max_log = 0;
}

// ---- kernels -------------------------------------------------------------------

__device__ __forceinline__ uint32_t bitrev(uint32_t x, uint32_t bits) { return bits ? __brev(x) >> (32 - bits) : 0; }

__device__ __forceinline__ fr_t coset_pow(const fr_t* lo, const fr_t* hi, uint32_t j) {
  return lo[j & ((1u << COSET_TABLE_BITS) - 1)] * hi[j >> COSET_TABLE_BITS];
}

// Global fr_t loads/stores as two 16-byte accesses (buffers are 32-byte aligned).
__device__ __forceinline__ fr_t ld_fr(const fr_t* p) {
#ifdef __CUDA_ARCH__
  const uint4* q = reinterpret_cast<const uint4*>(p);
  const uint4 a = q[0], b = q[1];
  fr_t r;
  r.v[0] = a.x, r.v[1] = a.y, r.v[2] = a.z, r.v[3] = a.w;
  r.v[4] = b.x, r.v[5] = b.y, r.v[6] = b.z, r.v[7] = b.w;
  return r;
#else
  return *p;
#endif
}
// Read-only table load (non-coherent cache).
__device__ __forceinline__ fr_t ld_fr_ro(const fr_t* p) {
#ifdef __CUDA_ARCH__
  const uint4* q = reinterpret_cast<const uint4*>(p);
  const uint4 a = __ldg(q), b = __ldg(q + 1);
  fr_t r;
  r.v[0] = a.x, r.v[1] = a.y, r.v[2] = a.z, r.v[3] = a.w;
  r.v[4] = b.x, r.v[5] = b.y, r.v[6] = b.z, r.v[7] = b.w;
  return r;
#else
  return *p;
#endif
}
__device__ __forceinline__ void st_fr(fr_t* p, const fr_t& x) {
#ifdef __CUDA_ARCH__
  uint4* q = reinterpret_cast<uint4*>(p);
  q[0] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
  q[1] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
#else
  *p = x;
#endif
}

// Pass geometry. The transform is in place on 2^n elements; a pass covers
// index bits [lo_bit, lo_bit + k). Index i = (h << (lo_bit + k)) | (a << lo_bit) | c:
// row a < K = 2^k, column c < L = 2^lo_bit. With w_M the root of order
// M = 2^(lo_bit + k) (w_M^-1 for the inverse), for every (h, c) the pass runs
// the K-point transform over a with root w_M^L and multiplies element (a, c)
// by the inter-pass twiddle w_M^(c * bitrev_k(a)): DIF (natural a in,
// bit-reversed a out) after the sub-transform, DIT (bit-reversed in, natural
// out) before it. A block holds G = 2^g consecutive columns of one h:
// E = K * G elements.
struct ntt_pass_args {
  fr_t* d;
  const fr_t* omega;  // ntt_tables::omega (w of order 2^max_log)
  const fr_t* tws;    // tw_small, or tw_small + H for the inverse
  uint32_t lo_bit, k, g, max_log;
  uint32_t inverse;
  // Optional (DIT, lo_bit = 0 pass only): input element i (bit-reversed
  // position) times co_scale * g^bitrev_n(i) before the transform.
  const fr_t* co_lo;
  const fr_t* co_hi;
  fr_t co_scale;
  uint32_t log_n;
};

constexpr uint32_t NTT_TWS_BITS = NTT_MAX_PASS_BITS;
#ifndef C2G_NTT_BLOCK_BITS
#define C2G_NTT_BLOCK_BITS 11
#endif
// log2 of the elements a pass block holds (K * G), and its threads (8
// elements each). Smaller values are for exercising the pass logic in tests.
constexpr uint32_t NTT_BLOCK_BITS = C2G_NTT_BLOCK_BITS;
constexpr uint32_t NTT_THREADS = (1u << NTT_BLOCK_BITS) >> 3;
static_assert(NTT_BLOCK_BITS >= 4 && NTT_BLOCK_BITS <= NTT_MAX_PASS_BITS, "NTT_BLOCK_BITS");

// w^e for w of order 2^max_log (inverse: w^-e), from omega[0, 2^(max_log-1)).
__device__ __forceinline__ fr_t omega_pow(const fr_t* omega, uint32_t e, uint32_t max_log, bool inverse) {
  const uint32_t full = 1u << max_log, half = full >> 1;
  if (inverse) e = (full - e) & (full - 1);
  if (e < half) return ld_fr_ro(omega + e);
  return ld_fr_ro(omega + (e - half)).neg();  // w^(N/2) = -1
}

// Shared memory holds the block's E elements limb-major (limb i of element
// p at sm[i * E + swz(p)], p = (a << g) | l); the XOR swizzle of the low five
// bits makes every round's warp access hit 32 distinct banks.
__device__ __forceinline__ uint32_t ntt_swz(uint32_t p) {
  return p ^ (((p >> 5) & 1) * 31u) ^ (((p >> 6) & 1) * 21u) ^ (((p >> 7) & 1) * 25u);
}
__device__ __forceinline__ fr_t ld_sm(const uint32_t* sm, uint32_t E, uint32_t p) {
  fr_t r;
  C2G_UNROLL for (int i = 0; i < 8; i++) r.v[i] = sm[i * E + p];
  return r;
}
__device__ __forceinline__ void st_sm(uint32_t* sm, uint32_t E, uint32_t p, const fr_t& x) {
  C2G_UNROLL for (int i = 0; i < 8; i++) sm[i * E + p] = x.v[i];
}

// One round: the R radix-2 stages s0 .. s0+R-1 of the K-point transform,
// in registers. A thread takes the 2^R rows a0 | (j << s0) of one column l
// (a0 has zero bits [s0, s0+R)). Stage s pairs rows a, a | 2^s (bit s of a
// clear) with the twiddle u^(a mod 2^s), u = tws[2^(BITS-1-s)] of order
// 2^(s+1); the product is skipped where that exponent is 0 in every thread
// (s0 = 0 and the low bits of j zero). The first round reads global memory
// (DIT: times the inter-pass twiddle), the last writes it (DIF: times the
// inter-pass twiddle); the others go through shared memory.
template <bool DIT, int R>
__device__ __forceinline__ void ntt_round(const ntt_pass_args& p, uint32_t* sm, uint64_t base, uint32_t col0, uint32_t s0,
                                          bool first, bool last) {
  constexpr uint32_t NJ = 1u << R;
  const uint32_t g = p.g, G = 1u << g, E = 1u << (p.k + g);
  const uint32_t groups = E >> R;
  const uint32_t s0mask = (1u << s0) - 1;
  const bool tw_in = DIT && first && p.lo_bit != 0, tw_out = !DIT && last && p.lo_bit != 0;
  const bool co_in = DIT && first && p.co_lo != nullptr;
  const uint32_t tw_shift = p.max_log - p.lo_bit - p.k;
  for (uint32_t gid = threadIdx.x; gid < groups; gid += blockDim.x) {
    const uint32_t l = gid & (G - 1), q = gid >> g;
    const uint32_t a0 = ((q >> s0) << (s0 + R)) | (q & s0mask);
    fr_t x[NJ];
    C2G_UNROLL for (uint32_t j = 0; j < NJ; j++) {
      const uint32_t a = a0 | (j << s0);
      if (first) {
        const uint64_t i = base + ((uint64_t)a << p.lo_bit) + l;
        x[j] = ld_fr(p.d + i);
        if (co_in) x[j] = x[j] * p.co_scale * coset_pow(p.co_lo, p.co_hi, bitrev((uint32_t)i, p.log_n));
        if (tw_in) x[j] = x[j] * omega_pow(p.omega, ((col0 + l) * bitrev(a, p.k)) << tw_shift, p.max_log, p.inverse);
      } else {
        x[j] = ld_sm(sm, E, ntt_swz((a << g) | l));
      }
    }
    C2G_UNROLL for (uint32_t bb = 0; bb < (uint32_t)R; bb++) {
      const uint32_t b = DIT ? bb : R - 1 - bb;
      const uint32_t s = s0 + b, h = 1u << b;
      C2G_UNROLL for (uint32_t jj = 0; jj < NJ / 2; jj++) {
        const uint32_t j = ((jj >> b) << (b + 1)) | (jj & (h - 1)), j1 = j | h;
        // row of x[j] mod 2^s (a0's bits [s0, s) are zero)
        const uint32_t e = (q & s0mask) | ((j & (h - 1)) << s0);
        const bool no_mul = s0 == 0 && (j & (h - 1)) == 0;  // e == 0: twiddle 1 (all of stage 0)
        if (DIT) {
          fr_t y = x[j1];
          if (!no_mul) y = y * ld_fr_ro(p.tws + (e << (NTT_TWS_BITS - 1 - s)));
          x[j1] = x[j] - y;
          x[j] = x[j] + y;
        } else {
          fr_t u = x[j], v = x[j1];
          x[j] = u + v;
          x[j1] = u - v;
          if (!no_mul) x[j1] = x[j1] * ld_fr_ro(p.tws + (e << (NTT_TWS_BITS - 1 - s)));
        }
      }
    }
    C2G_UNROLL for (uint32_t j = 0; j < NJ; j++) {
      const uint32_t a = a0 | (j << s0);
      if (last) {
        fr_t y = x[j];
        if (tw_out) y = y * omega_pow(p.omega, ((col0 + l) * bitrev(a, p.k)) << tw_shift, p.max_log, p.inverse);
        st_fr(p.d + base + ((uint64_t)a << p.lo_bit) + l, y);
      } else {
        st_sm(sm, E, ntt_swz((a << g) | l), x[j]);
      }
    }
  }
}

// One pass (see ntt_pass_args). The K-point transform runs in rounds of up
// to three stages on the windows [3w, 3w + 3) of the row bits: ascending
// for DIT, descending (stages within a round too) for DIF.
template <bool DIT>
__global__ void __launch_bounds__(NTT_THREADS, 2) k_ntt_pass(ntt_pass_args p) {
  C2G_DYNAMIC_SMEM(uint32_t, sm);
  const uint32_t nlo = (1u << p.lo_bit) >> p.g;  // blocks along the columns
  const uint32_t lo_blk = blockIdx.x % nlo, hi = blockIdx.x / nlo;
  const uint32_t col0 = lo_blk << p.g;
  const uint64_t base = ((uint64_t)hi << (p.lo_bit + p.k)) + col0;
  const uint32_t nr = (p.k + 2) / 3;
  for (uint32_t r = 0; r < nr; r++) {
    const uint32_t w = DIT ? r : nr - 1 - r;
    const uint32_t s0 = 3 * w, R = p.k - s0 < 3 ? p.k - s0 : 3;
    const bool first = r == 0, last = r + 1 == nr;
    if (!first) __syncthreads();
    if (R == 3) ntt_round<DIT, 3>(p, sm, base, col0, s0, first, last);
    else if (R == 2) ntt_round<DIT, 2>(p, sm, base, col0, s0, first, last);
    else ntt_round<DIT, 1>(p, sm, base, col0, s0, first, last);
  }
}

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
    fr_t x = d[i] * scale;
    if (lo) x = x * coset_pow(lo, hi, (uint32_t)i);
    d[i] = x;
  }
}

// out[j] = canonical(in[p] * scale * g^-j), j = bitrev(p).
__global__ void k_h_finish(const fr_t* in, fr_t* out, uint32_t log_n, fr_t scale, const fr_t* lo, const fr_t* hi) {
  uint64_t n = 1ull << log_n;
  for (uint64_t p = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; p < n; p += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t j = bitrev((uint32_t)p, log_n);
    out[j] = (in[p] * scale * coset_pow(lo, hi, j)).from_mont();
  }
}

// a[i] = (a[i] * b[i] - c[i]) * zinv
__global__ void k_h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, uint64_t n, fr_t zinv) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    a[i] = (a[i] * b[i] - c[i]) * zinv;
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

struct ntt_pass_plan {
  uint32_t lo_bit, k, g;
};

// Passes in ascending bit order (DIT order; DIF runs them in reverse). The
// pass on the lowest bits (contiguous rows) takes up to NTT_BLOCK_BITS bits;
// the others take near-equal shares of at most NTT_BLOCK_BITS - 3 bits so a
// block holds G >= 8 columns (256-byte rows), G = 2^(NTT_BLOCK_BITS - k).
static uint32_t ntt_plan(uint32_t log_n, ntt_pass_plan* out) {
  uint32_t np = 0;
  const uint32_t k0 = log_n < NTT_BLOCK_BITS ? log_n : NTT_BLOCK_BITS;
  out[np++] = ntt_pass_plan{0, k0, 0};
  uint32_t rest = log_n - k0, lo = k0;
  const uint32_t m = (rest + NTT_BLOCK_BITS - 4) / (NTT_BLOCK_BITS - 3);
  for (uint32_t i = 0; i < m; i++) {
    const uint32_t k = (rest + (m - i) - 1) / (m - i);
    const uint32_t g = NTT_BLOCK_BITS - k < lo ? NTT_BLOCK_BITS - k : lo;
    out[np++] = ntt_pass_plan{lo, k, g};
    lo += k;
    rest -= k;
  }
  return np;
}

template <bool DIT>
static void ntt_passes(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st,
                       const fr_t* co_lo = nullptr, const fr_t* co_hi = nullptr, fr_t co_scale = fr_t::zero()) {
  check_tables(log_n, t);
  if (log_n == 0) return;
  if ((uintptr_t)d & 15) throw_invalid("ntt: data must be 16-byte aligned");
  ntt_pass_plan plan[NTT_MAX_LOG + 1];
  const uint32_t np = ntt_plan(log_n, plan);
  for (uint32_t i = 0; i < np; i++) {
    const ntt_pass_plan& pp = plan[DIT ? i : np - 1 - i];
    ntt_pass_args a;
    a.d = d;
    a.omega = t.omega;
    a.tws = t.tw_small + (inverse ? (1u << (NTT_MAX_PASS_BITS - 1)) : 0);
    a.lo_bit = pp.lo_bit;
    a.k = pp.k;
    a.g = pp.g;
    a.max_log = t.max_log;
    a.inverse = inverse;
    a.co_lo = pp.lo_bit == 0 ? co_lo : nullptr;
    a.co_hi = co_hi;
    a.co_scale = co_scale;
    a.log_n = log_n;
    const uint32_t ebits = pp.k + pp.g;
    const uint32_t threads = ebits >= 3 ? (1u << ebits) >> 3 : 1;
    const uint64_t blocks = (1ull << log_n) >> ebits;
    const size_t smem = pp.k > 3 ? sizeof(fr_t) << ebits : 0;  // one round: registers only
#if !defined(C2G_EMULATOR)
    if (smem > 48 * 1024) CK(cudaFuncSetAttribute(k_ntt_pass<DIT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
#endif
    C2G_LAUNCH_SYNC(k_ntt_pass<DIT>, dim3((uint32_t)blocks), threads, smem, st, a);
    CK_LAUNCH("k_ntt_pass");
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
  C2G_LAUNCH(k_bitrev_swap, elementwise_grid(n), 256, 0, st, d, log_n);
  CK_LAUNCH("k_bitrev_swap");
  if (inverse) {
    fr_t ninv = fr_host_inv(fr_host_from_u64(n));
    C2G_LAUNCH(k_scale_natural, elementwise_grid(n), 256, 0, st, d, n, ninv, coset ? t.gi_lo : nullptr, coset ? t.gi_hi : nullptr);
    CK_LAUNCH("k_scale_natural");
  }
}

void compute_h(fr_t* a, fr_t* b, fr_t* c, uint32_t log_n, const ntt_tables& t, fr_t* h_out, cudaStream_t st) {
  check_tables(log_n, t);
  const uint64_t n = 1ull << log_n;
  const fr_t ninv = fr_host_inv(fr_host_from_u64(n));
  fr_t* v[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    ntt_dif(v[i], log_n, true, t, st);  // evaluations -> coefficients (bit-reversed, times n)
    // coefficient j times g^j / n (fused into the first DIT pass), then coset evaluations, natural order
    ntt_passes<true>(v[i], log_n, false, t, st, t.g_lo, t.g_hi, ninv);
  }
  // Z(g w^i) = g^n - 1 on the whole coset
  fr_t zinv = fr_host_inv(fr_host_pow(fr_host_coset_gen(), n) - fr_host_one());
  C2G_LAUNCH(k_h_pointwise, elementwise_grid(n), 256, 0, st, a, b, c, n, zinv);
  CK_LAUNCH("k_h_pointwise");
  ntt_dif(a, log_n, true, t, st);
  C2G_LAUNCH(k_h_finish, elementwise_grid(n), 256, 0, st, a, h_out, log_n, ninv, t.gi_lo, t.gi_hi);
  CK_LAUNCH("k_h_finish");
}

}  // namespace c2g
