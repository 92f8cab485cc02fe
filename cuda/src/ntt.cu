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

__device__ __forceinline__ fr_t twiddle(const fr_t* __restrict__ tw, uint32_t e, bool inverse, uint32_t tw_half) {
  if (!inverse || e == 0) return tw[e];
  return tw[tw_half - e].neg();  // w^-e = -w^(N/2 - e)
}

__device__ __forceinline__ uint32_t bitrev(uint32_t x, uint32_t bits) { return bits ? __brev(x) >> (32 - bits) : 0; }

__device__ __forceinline__ fr_t coset_pow(const fr_t* lo, const fr_t* hi, uint32_t j) {
  return lo[j & ((1u << COSET_TABLE_BITS) - 1)] * hi[j >> COSET_TABLE_BITS];
}

// k consecutive radix-2 stages on the index bits [lo_bit, lo_bit + k), for
// every group of 2^k elements with the other bits fixed. A block holds G =
// 2^g groups with consecutive low bits (coalesced loads).
template <bool DIT>
__global__ void __launch_bounds__(256) k_ntt_pass(fr_t* data, uint32_t log_n, uint32_t lo_bit, uint32_t k, uint32_t g,
                                                  const fr_t* __restrict__ tw, uint32_t tw_shift, uint32_t tw_half,
                                                  bool inverse) {
  C2G_DYNAMIC_SMEM(fr_t, sm);
  const uint32_t G = 1u << g;
  const uint32_t nelem = (1u << k) << g;
  const uint32_t nlo = (1u << lo_bit) >> g;  // blocks along the low bits
  const uint64_t blk = blockIdx.x;
  const uint64_t lo_blk = blk % nlo, hi = blk / nlo;
  const uint64_t base = (hi << (lo_bit + k)) + lo_blk * G;
  for (uint32_t e = threadIdx.x; e < nelem; e += blockDim.x) {
    uint32_t a = e >> g, l = e & (G - 1);
    sm[e] = data[base + ((uint64_t)a << lo_bit) + l];
  }
  __syncthreads();
  // twiddle of the stage-s butterfly whose lower element is row a0 of column l
  auto twid = [&](uint32_t s, uint32_t a0, uint32_t l) {
    // position of a0 inside its butterfly block of 2h, h = 2^(lo_bit + s)
    const uint64_t gi0 = base + ((uint64_t)a0 << lo_bit) + l;
    const uint32_t j = (uint32_t)(gi0 & ((1ull << (lo_bit + s)) - 1));
    const uint32_t e = (j << (log_n - lo_bit - s - 1)) << tw_shift;
    return twiddle(tw, e, inverse, tw_half);
  };
  auto bfly = [&](fr_t& x, fr_t& y, const fr_t& w) {
    const fr_t u = x;
    if (DIT) {
      const fr_t v = y * w;
      x = u + v;
      y = u - v;
    } else {
      x = u + y;
      y = (u - y) * w;
    }
  };
  // Stages two at a time (four elements per thread: half the barriers and
  // shared-memory round trips of one stage at a time), a last single stage
  // when k is odd. DIF runs the stages from k-1 down, DIT from 0 up.
  for (uint32_t done = 0; done < k;) {
    if (k - done >= 2) {
      const uint32_t s = DIT ? done : k - done - 2;  // the pair (s, s+1)
      const uint32_t units = (1u << (k - 2)) << g;
      for (uint32_t u = threadIdx.x; u < units; u += blockDim.x) {
        const uint32_t l = u & (G - 1), q = u >> g;
        const uint32_t r00 = ((q >> s) << (s + 2)) | (q & ((1u << s) - 1));
        const uint32_t r01 = r00 | (1u << s), r10 = r00 | (2u << s), r11 = r00 | (3u << s);
        fr_t x00 = sm[(r00 << g) + l], x01 = sm[(r01 << g) + l], x10 = sm[(r10 << g) + l], x11 = sm[(r11 << g) + l];
        if (DIT) {
          bfly(x00, x01, twid(s, r00, l));
          bfly(x10, x11, twid(s, r10, l));
          bfly(x00, x10, twid(s + 1, r00, l));
          bfly(x01, x11, twid(s + 1, r01, l));
        } else {
          bfly(x00, x10, twid(s + 1, r00, l));
          bfly(x01, x11, twid(s + 1, r01, l));
          bfly(x00, x01, twid(s, r00, l));
          bfly(x10, x11, twid(s, r10, l));
        }
        sm[(r00 << g) + l] = x00;
        sm[(r01 << g) + l] = x01;
        sm[(r10 << g) + l] = x10;
        sm[(r11 << g) + l] = x11;
      }
      done += 2;
    } else {
      const uint32_t s = DIT ? done : k - done - 1;
      const uint32_t units = (1u << (k - 1)) << g;
      for (uint32_t u = threadIdx.x; u < units; u += blockDim.x) {
        const uint32_t l = u & (G - 1), q = u >> g;
        const uint32_t a0 = ((q >> s) << (s + 1)) | (q & ((1u << s) - 1));
        const uint32_t a1 = a0 | (1u << s);
        fr_t x = sm[(a0 << g) + l], y = sm[(a1 << g) + l];
        bfly(x, y, twid(s, a0, l));
        sm[(a0 << g) + l] = x;
        sm[(a1 << g) + l] = y;
      }
      done += 1;
    }
    __syncthreads();
  }
  for (uint32_t e = threadIdx.x; e < nelem; e += blockDim.x) {
    uint32_t a = e >> g, l2 = e & (G - 1);
    data[base + ((uint64_t)a << lo_bit) + l2] = sm[e];
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

// Bit-reversed coefficients: d[p] *= scale * g^bitrev(p).
__global__ void k_scale_bitrev(fr_t* d, uint32_t log_n, fr_t scale, const fr_t* lo, const fr_t* hi) {
  uint64_t n = 1ull << log_n;
  for (uint64_t p = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; p < n; p += (uint64_t)gridDim.x * blockDim.x) {
    d[p] = d[p] * scale * coset_pow(lo, hi, bitrev((uint32_t)p, log_n));
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

template <bool DIT>
static void ntt_passes(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st) {
  check_tables(log_n, t);
  if (log_n == 0) return;
  const uint32_t passes = (log_n + NTT_MAX_PASS_BITS - 1) / NTT_MAX_PASS_BITS;
  const uint32_t tw_shift = t.max_log - log_n;
  const uint32_t tw_half = 1u << (t.max_log - 1);
  uint32_t done = 0;
  for (uint32_t p = 0; p < passes; p++) {
    // near-equal pass sizes
    uint32_t k = (log_n - done) / (passes - p);
    if ((log_n - done) % (passes - p)) k++;
    const uint32_t lo_bit = DIT ? done : log_n - done - k;
    uint32_t g = 0;
    while (g < lo_bit && ((1u << (k - 1)) << (g + 1)) <= 512) g++;
    const uint32_t threads = (k >= 2 ? 1u << (k - 2) : 1u) << g;  // four elements each
    const uint64_t blocks = (1ull << log_n) >> (k + g);
    const size_t smem = sizeof(fr_t) * ((size_t)1 << (k + g));
    C2G_LAUNCH_SYNC(k_ntt_pass<DIT>, dim3((uint32_t)blocks), threads, smem, st, d, log_n, lo_bit, k, g, t.omega, tw_shift, tw_half,
                                                                   inverse);
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
    C2G_LAUNCH(k_scale_bitrev, elementwise_grid(n), 256, 0, st, v[i], log_n, ninv, t.g_lo, t.g_hi);
    CK_LAUNCH("k_scale_bitrev");
    ntt_dit(v[i], log_n, false, t, st);  // coset evaluations, natural order
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
