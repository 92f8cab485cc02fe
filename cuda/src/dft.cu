// The group DFT (dft.cuh): radix-2 decimation in frequency over XYZZ points
// in device memory, then the bit reversal folded into the conversion back to
// affine.
//
// Stage s (half-size h = 2^hb, hb = log_n - 1 - s) pairs i0 = blk*2h + j with
// i1 = i0 + h and writes a + b to i0 and w^(j 2^s) (a - b) to i1. The
// butterflies with j = 0 (twiddle 1) go to a cheap kernel of their own, so
// every lane of the multiplying kernel has a twiddle to apply. A twiddle
// multiplication uses the GLV endomorphism of G1: phi(x, y) = (beta x, y)
// is [lambda] with lambda = x^2 - 1 (x the curve's seed) and r = lambda^2 +
// lambda + 1, so k = k1 lambda + k0 with k0 < lambda and k1 <= lambda + 1,
// both below 2^128, and [k]Q = [k0]Q + [k1]phi(Q): 128 doublings instead of
// 255. Both halves are recoded into signed radix-2^W digits (Booth: each
// digit from W + 1 bits, no carry), read from a table of [1 .. 2^(W-1)]Q
// (phi of an entry is one product), so every lane makes the same doublings
// and additions, whatever its scalar. The table is made affine with one
// inversion (C2G_DFT_AFFINE=on, the default), which turns the additions into
// mixed ones, and the accumulator is then Jacobian: doublings of 2M + 5S and
// mixed additions of 7M + 4S, where XYZZ takes 6M + 3S and 12M + 2S against
// an XYZZ table (C2G_DFT_AFFINE=off). The twiddles' halves are
// computed once per call on the device into a table of n/2 entries, w^e for
// e < n/2; the inverse uses w^(-e) = -w^(n/2 - e).
#include "dft.cuh"

#include <algorithm>
#include <chrono>
#include <vector>

#include "ntt.cuh"

namespace c2g {

// lambda = x^2 - 1 = 0xac45a4010001a402_00000000ffffffff
constexpr uint64_t GLV_LAMBDA_LO = 0x00000000ffffffffull;
constexpr uint64_t GLV_LAMBDA_HI = 0xac45a4010001a402ull;

// The GLV halves of one twiddle: k = k1 lambda + k0 (canonical k).
struct glv_scalar {
  uint64_t k0_lo, k0_hi, k1_lo, k1_hi;
};
static_assert(sizeof(glv_scalar) == 32, "glv_scalar");

// k (canonical, < r < 2^255) divided by lambda, bit by bit: the remainder
// stays below 2 lambda < 2^129 before each subtraction and below lambda
// after it, the quotient below 2^128.
C2G_HD glv_scalar glv_split(const fr_t& canon) {
  uint64_t k[4];
  for (int i = 0; i < 4; i++) k[i] = (uint64_t)canon.v[2 * i] | ((uint64_t)canon.v[2 * i + 1] << 32);
  uint64_t r0 = 0, r1 = 0, r2 = 0, q0 = 0, q1 = 0;
  for (int i = 254; i >= 0; i--) {
    r2 = (r2 << 1) | (r1 >> 63);
    r1 = (r1 << 1) | (r0 >> 63);
    r0 = (r0 << 1) | ((k[i >> 6] >> (i & 63)) & 1);
    const bool ge = r2 != 0 || r1 > GLV_LAMBDA_HI || (r1 == GLV_LAMBDA_HI && r0 >= GLV_LAMBDA_LO);
    if (ge) {
      const uint64_t borrow = r0 < GLV_LAMBDA_LO;
      r0 -= GLV_LAMBDA_LO;
      r1 = r1 - GLV_LAMBDA_HI - borrow;
      r2 = 0;
      if (i >= 64)
        q1 |= 1ull << (i - 64);  // i < 128: the quotient is below 2^128
      else
        q0 |= 1ull << i;
    }
  }
  return glv_scalar{r0, r1, q0, q1};
}

// Bits p .. p+5 of the 128-bit (lo, hi), p >= -1 (bit -1 and bits above 127
// are 0).
C2G_HD uint32_t bits6(uint64_t lo, uint64_t hi, int p) {
  if (p < 0) return (uint32_t)(lo << 1) & 63u;
  if (p >= 64) return (uint32_t)(hi >> (p - 64)) & 63u;
  if (p <= 58) return (uint32_t)(lo >> p) & 63u;
  return (uint32_t)((lo >> p) | (hi << (64 - p))) & 63u;
}

// Signed digit i of a 128-bit value in radix 2^W (Booth): -2^(W-1) b_(Wi+W-1)
// + sum_(t < W-1) 2^t b_(Wi+t) + b_(Wi-1), in [-2^(W-1), 2^(W-1)]; the
// digits i < ceil(129 / W) sum (times 2^(Wi)) to the value.
template <int W>
C2G_HD int booth_digit(uint64_t lo, uint64_t hi, int i) {
  static_assert(W >= 2 && W <= 5, "window");
  const uint32_t b = bits6(lo, hi, W * i - 1);  // b_(Wi-1) at bit 0
  const int low = (int)((b >> 1) & ((1u << (W - 1)) - 1)) + (int)(b & 1);
  return low - (int)(((b >> W) & 1) << (W - 1));
}

template <int W>
constexpr int glv_digits() {
  return (129 + W - 1) / W;
}

__device__ __forceinline__ fp_t glv_beta() {
  const uint32_t w[12] = G1_CUBE_ROOT;
  return fp_t::from_limbs(w);
}

// The accumulator of a multiplication with the affine table: Jacobian (x =
// X/Z^2, y = Y/Z^3, infinity Z = 0), whose doubling costs 2M + 5S against
// XYZZ's 6M + 3S, and whose mixed addition 7M + 4S against 8M + 2S.
struct g1_jac {
  fp_t X, Y, Z;
};

// 2p (dbl-2009-l, a = 0). G1 has no point of order 2: Y != 0 unless p = 0.
__device__ __forceinline__ void jac_dbl(g1_jac& p) {
  if (p.Z.is_zero()) return;
  const fp_t A = p.X.sqr(), B = p.Y.sqr(), C = B.sqr();
  const fp_t D = ((p.X + B).sqr() - A - C).dbl();
  const fp_t E = A.dbl() + A, F = E.sqr();
  const fp_t X3 = F - D.dbl();
  const fp_t Y3 = E * (D - X3) - C.dbl().dbl().dbl();
  p.Z = (p.Y * p.Z).dbl();
  p.X = X3;
  p.Y = Y3;
}

// p += a for an affine a (madd-2007-bl), every special case handled.
__device__ __forceinline__ void jac_add_affine(g1_jac& p, const g1_affine& a) {
  if (a.is_inf()) return;
  if (p.Z.is_zero()) {
    p = g1_jac{a.X, a.Y, field_consts<fp_t>::one()};
    return;
  }
  const fp_t Z1Z1 = p.Z.sqr();
  const fp_t U2 = a.X * Z1Z1, S2 = a.Y * (p.Z * Z1Z1);
  const fp_t H = U2 - p.X, R = S2 - p.Y;
  if (H.is_zero()) {
    if (R.is_zero()) {  // p = a
      p = g1_jac{a.X, a.Y, field_consts<fp_t>::one()};
      jac_dbl(p);
    } else {  // p = -a
      p.Z = fp_t::zero();
    }
    return;
  }
  const fp_t HH = H.sqr(), I = HH.dbl().dbl(), J = H * I, r = R.dbl();
  const fp_t V = p.X * I;
  const fp_t X3 = r.sqr() - J - V.dbl();
  const fp_t Y3 = r * (V - X3) - (p.Y * J).dbl();
  p.Z = (p.Z + H).sqr() - Z1Z1 - HH;
  p.X = X3;
  p.Y = Y3;
}

// [k]q for the twiddle k = sc, q in XYZZ.
template <int W, bool AFFINE>
__device__ g1_xyzz glv_mul(const g1_xyzz& q, const glv_scalar& sc) {
  constexpr int T = 1 << (W - 1);
  g1_xyzz tab[T];  // tab[m - 1] = m q
  tab[0] = q;
  for (int m = 2; m <= T; m++) {
    if (m & 1) {
      tab[m - 1] = tab[m - 2];
      tab[m - 1].add(q);
    } else {
      tab[m - 1] = tab[m / 2 - 1].dbl();
    }
  }
  const fp_t beta = glv_beta();
  g1_xyzz acc = g1_xyzz::inf();
  if constexpr (AFFINE) {
    // Montgomery's trick: one inversion of prod ZZ ZZZ for the table
    g1_affine at[T];
    fp_t pref[T];
    fp_t prod = field_consts<fp_t>::one();
    for (int m = 0; m < T; m++) {
      pref[m] = prod;
      const fp_t d = tab[m].ZZ * tab[m].ZZZ;
      if (!d.is_zero()) prod = prod * d;
    }
    fp_t inv = field_inverse(prod);
    for (int m = T - 1; m >= 0; m--) {
      const fp_t d = tab[m].ZZ * tab[m].ZZZ;
      if (d.is_zero()) {
        at[m] = g1_affine{fp_t::zero(), fp_t::zero()};
        continue;
      }
      const fp_t dinv = inv * pref[m];
      inv = inv * d;
      at[m] = g1_affine{tab[m].X * (dinv * tab[m].ZZZ), tab[m].Y * (dinv * tab[m].ZZ)};
    }
    g1_jac j{fp_t::zero(), fp_t::zero(), fp_t::zero()};
    for (int i = glv_digits<W>() - 1; i >= 0; i--) {
      for (int t = 0; t < W; t++) jac_dbl(j);
      const int d0 = booth_digit<W>(sc.k0_lo, sc.k0_hi, i), d1 = booth_digit<W>(sc.k1_lo, sc.k1_hi, i);
      if (d0) {
        const g1_affine p = at[(d0 < 0 ? -d0 : d0) - 1];
        jac_add_affine(j, d0 < 0 ? p.neg() : p);
      }
      if (d1) {
        g1_affine p = at[(d1 < 0 ? -d1 : d1) - 1];
        p.X = p.X * beta;
        jac_add_affine(j, d1 < 0 ? p.neg() : p);
      }
    }
    if (!j.Z.is_zero()) {
      acc.X = j.X;
      acc.Y = j.Y;
      acc.ZZ = j.Z.sqr();
      acc.ZZZ = acc.ZZ * j.Z;
    }
  } else {
    for (int i = glv_digits<W>() - 1; i >= 0; i--) {
      for (int t = 0; t < W; t++) acc = acc.dbl();
      const int d0 = booth_digit<W>(sc.k0_lo, sc.k0_hi, i), d1 = booth_digit<W>(sc.k1_lo, sc.k1_hi, i);
      if (d0) {
        const g1_xyzz p = tab[(d0 < 0 ? -d0 : d0) - 1];
        acc.add(d0 < 0 ? p.neg() : p);
      }
      if (d1) {
        g1_xyzz p = tab[(d1 < 0 ? -d1 : d1) - 1];
        p.X = p.X * beta;
        acc.add(d1 < 0 ? p.neg() : p);
      }
    }
  }
  return acc;
}

// tw[e] = the GLV halves of w^e, e < half, w^e = lo[e mod 2^lo_bits] *
// hi[e >> lo_bits].
__global__ void k_dft_twiddles(glv_scalar* tw, uint64_t half, const fr_t* lo, const fr_t* hi, uint32_t lo_bits) {
  for (uint64_t e = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; e < half; e += (uint64_t)gridDim.x * blockDim.x) {
    const fr_t w = ldg_vec(lo + (e & ((1ull << lo_bits) - 1))) * ldg_vec(hi + (e >> lo_bits));
    tw[e] = glv_split(w.from_mont());
  }
}

__global__ void k_dft_load(const g1_affine* __restrict__ in, g1_xyzz* out, uint64_t m) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < m; i += (uint64_t)gridDim.x * blockDim.x)
    st_vec(out + i, g1_xyzz::from_affine(ldg_vec(in + i)));
}

// The butterflies of stage hb whose twiddle is 1 (j = 0): t < n / 2h.
__global__ void k_dft_trivial(g1_xyzz* d, uint64_t count, uint32_t hb) {
  for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < count; t += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t i0 = t << (hb + 1), i1 = i0 + (1ull << hb);
    const g1_xyzz a = ld_vec(d + i0), b = ld_vec(d + i1);
    g1_xyzz s = a, r = a;
    s.add(b);
    r.add(b.neg());
    st_vec(d + i0, s);
    st_vec(d + i1, r);
  }
}

// The butterflies t0 .. t0+count-1 of stage hb (hb >= 1) whose twiddle is
// not 1: butterfly t is j = 1 + t mod (h - 1) of group t / (h - 1), its
// twiddle w^(j 2^s), s = log_n - 1 - hb.
// Blocks of 128 threads per multiprocessor the compiler plans registers
// for (build-time, -DC2G_DFT_MIN_BLOCKS=n: at most 65536 / (128 n) each).
#ifndef C2G_DFT_MIN_BLOCKS
#define C2G_DFT_MIN_BLOCKS 1
#endif

template <int W, bool AFFINE>
__global__ void __launch_bounds__(128, C2G_DFT_MIN_BLOCKS) k_dft_twiddled(g1_xyzz* d, uint32_t log_n, uint32_t hb, uint64_t t0,
                                                      uint64_t count, const glv_scalar* __restrict__ tw, bool inverse) {
  const uint64_t hm1 = (1ull << hb) - 1, half = 1ull << (log_n - 1);
  const uint32_t s = log_n - 1 - hb;
  for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < count; k += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t t = t0 + k;
    const uint64_t grp = t / hm1, j = 1 + (t - grp * hm1);
    const uint64_t i0 = (grp << (hb + 1)) | j, i1 = i0 + (1ull << hb);
    const g1_xyzz a = ld_vec(d + i0), b = ld_vec(d + i1);
    g1_xyzz s0 = a, r = a;
    s0.add(b);
    r.add(b.neg());
    uint64_t e = j << s;
    if (inverse) {  // w^-e = -w^(n/2 - e)
      e = half - e;
      r = r.neg();
    }
    st_vec(d + i0, s0);
    st_vec(d + i1, glv_mul<W, AFFINE>(r, tw[e]));
  }
}

// The input scaled before the stages: d[i] = [c x^i] d[i] for i0 <= i <
// i0 + count, x^i = lo[i mod 2^lo_bits] * hi[i >> lo_bits] (Montgomery).
template <int W, bool AFFINE>
__global__ void __launch_bounds__(128, C2G_DFT_MIN_BLOCKS) k_dft_scale(g1_xyzz* d, uint64_t i0, uint64_t count,
                                                                      const fr_t* __restrict__ lo,
                                                                      const fr_t* __restrict__ hi, uint32_t lo_bits,
                                                                      fr_t c) {
  for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < count; k += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t i = i0 + k;
    const fr_t f = c * ldg_vec(lo + (i & ((1ull << lo_bits) - 1))) * ldg_vec(hi + (i >> lo_bits));
    st_vec(d + i, glv_mul<W, AFFINE>(ld_vec(d + i), glv_split(f.from_mont())));
  }
}

constexpr uint32_t DFT_STORE_BATCH = 8;  // points per inversion on the way out

// out[k] = affine d[bitrev(off + k)], k < m, canonical; one inversion per
// DFT_STORE_BATCH points.
__global__ void __launch_bounds__(128) k_dft_store(const g1_xyzz* __restrict__ d, uint32_t log_n, uint64_t off,
                                                   uint64_t m, g1_affine* out) {
  const uint64_t first = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) * DFT_STORE_BATCH;
  if (first >= m) return;
  g1_xyzz p[DFT_STORE_BATCH];
  fp_t pref[DFT_STORE_BATCH];
  fp_t prod = field_consts<fp_t>::one();
  for (uint32_t k = 0; k < DFT_STORE_BATCH; k++) {
    p[k] = g1_xyzz::inf();
    if (first + k < m) {
      const uint32_t idx = (uint32_t)(off + first + k);
      p[k] = ldg_vec(d + (log_n ? __brev(idx) >> (32 - log_n) : 0));
    }
    pref[k] = prod;
    const fp_t z = p[k].ZZ * p[k].ZZZ;
    if (!z.is_zero()) prod = prod * z;
  }
  fp_t inv = field_inverse(prod);
  for (int k = DFT_STORE_BATCH - 1; k >= 0; k--) {
    const fp_t z = p[k].ZZ * p[k].ZZZ;
    g1_affine a{fp_t::zero(), fp_t::zero()};
    if (!z.is_zero()) {
      const fp_t zinv = inv * pref[k];
      inv = inv * z;
      a = g1_affine{p[k].X * (zinv * p[k].ZZZ), p[k].Y * (zinv * p[k].ZZ)}.canonical();
    }
    if (first + k < m) st_vec(out + first + k, a);
  }
}

namespace {

constexpr uint64_t DFT_CHUNK = 1ull << 22;   // points per staging round trip
constexpr uint64_t DFT_LAUNCH = 1ull << 21;  // multiplying butterflies per launch (and cancellation check)

dim3 dft_grid(uint64_t n, uint32_t threads) {
  uint64_t b = ceil_div(n, threads);
  if (b > (1ull << 20)) b = 1ull << 20;
  if (b == 0) b = 1;
  return dim3((uint32_t)b);
}

// Launches in flight one behind the host: after queueing launch k the host
// waits for launch k - 1, counts its work and reads the cancel flag, so the
// device always has the next launch queued.
struct dft_pacer {
  cudaStream_t st;
  c2g_dft_control* ctl;
  cudaEvent_t ev[2] = {nullptr, nullptr};
  uint64_t work[2] = {0, 0};
  uint64_t k = 0, done = 0;
  dft_pacer(cudaStream_t s, c2g_dft_control* c) : st(s), ctl(c) {
    CK(cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming));
  }
  ~dft_pacer() {
    for (auto e : ev)
      if (e) cudaEventDestroy(e);
  }
  void account(uint64_t w) {
    done += w;
    if (ctl) __atomic_store_n(&ctl->done, done, __ATOMIC_RELAXED);
  }
  void check() const {
    if (ctl && __atomic_load_n(&ctl->cancel, __ATOMIC_RELAXED) != 0)
      throw error(C2G_ERR_CANCELLED, 0, "dft: cancelled");
  }
  void launched(uint64_t w) {
    CK(cudaEventRecord(ev[k & 1], st));
    work[k & 1] = w;
    if (k > 0) {
      CK(cudaEventSynchronize(ev[(k - 1) & 1]));
      account(work[(k - 1) & 1]);
      check();
    }
    k++;
  }
  void finish() {
    CK(cudaStreamSynchronize(st));
    if (k > 0) account(work[(k - 1) & 1]);
    k = 0;
  }
};

template <int W, bool AFFINE>
void launch_twiddled(g1_xyzz* d, uint32_t log_n, uint32_t hb, uint64_t t0, uint64_t count, const glv_scalar* tw,
                     bool inverse, cudaStream_t st) {
  auto* k = k_dft_twiddled<W, AFFINE>;
  C2G_LAUNCH(k, dft_grid(count, 128), 128, 0, st, d, log_n, hb, t0, count, tw, inverse);
  CK_LAUNCH("k_dft_twiddled");
}

template <int W, bool AFFINE>
void launch_scale(g1_xyzz* d, uint64_t i0, uint64_t count, const fr_t* lo, const fr_t* hi, uint32_t lo_bits,
                  const fr_t& c, cudaStream_t st) {
  auto* k = k_dft_scale<W, AFFINE>;
  C2G_LAUNCH(k, dft_grid(count, 128), 128, 0, st, d, i0, count, lo, hi, lo_bits, c);
  CK_LAUNCH("k_dft_scale");
}

// The powers of base as two tables whose products give base^e, e < 2^lo_bits
// * hi_n: lo[e mod 2^lo_bits] * hi[e >> lo_bits]; lo first, then hi.
std::vector<fr_t> split_powers(const fr_t& base, uint32_t lo_bits, uint64_t hi_n) {
  std::vector<fr_t> host((1ull << lo_bits) + hi_n);
  fr_t x = fr_host_one();
  for (uint64_t i = 0; i < (1ull << lo_bits); i++, x = x * base) host[i] = x;
  const fr_t step = x;  // base^(2^lo_bits)
  x = fr_host_one();
  for (uint64_t i = 0; i < hi_n; i++, x = x * step) host[(1ull << lo_bits) + i] = x;
  return host;
}

}  // namespace

void dft_g1(g1_affine* points, uint32_t log_n, bool inverse, const fr_t* scale, c2g_dft_control* ctl,
            c2g_dft_stats* stats) {
  const auto t_start = std::chrono::steady_clock::now();
  if (log_n > DFT_MAX_LOG) throw_invalid(strprintf("dft: 2^%u points exceed the largest domain 2^%u", log_n, DFT_MAX_LOG));
  if (!points) throw_invalid("dft: nil points");
  const int window = env_int("C2G_DFT_WINDOW", 4, 5, 4);
  const bool affine = env_on_off("C2G_DFT_AFFINE", false) != 0;
  const uint64_t n = 1ull << log_n, half = n / 2;
  // scalar multiplications: every butterfly of every stage but the j = 0 ones
  uint64_t muls = 0;
  for (uint32_t hb = 1; hb < log_n; hb++) muls += (n >> (hb + 1)) * ((1ull << hb) - 1);
  const uint64_t scale_muls = scale ? n : 0;
  if (ctl) {
    __atomic_store_n(&ctl->total, muls + scale_muls, __ATOMIC_RELAXED);
    __atomic_store_n(&ctl->done, (uint64_t)0, __ATOMIC_RELAXED);
  }
  if (stats) {
    memset(stats, 0, sizeof(*stats));
    stats->window_bits = (uint32_t)window;
    stats->affine_table = affine ? 1 : 0;
  }
  if (log_n == 0 && !scale) return;  // one point: its own transform

  stream_guard sg;
  cudaStream_t st = sg.s;
  const uint64_t chunk = std::min(n, DFT_CHUNK);
  const uint32_t lo_bits = log_n ? std::min<uint32_t>(13, log_n - 1) : 0;
  const uint64_t hi_n = log_n ? half >> lo_bits : 0;
  const uint32_t slo_bits = std::min<uint32_t>(13, log_n);  // the scale's powers x^i, i < n
  const uint64_t shi_n = scale ? n >> slo_bits : 0;
  dev_alloc pts(n * sizeof(g1_xyzz), st), tw(std::max<uint64_t>(half, 1) * sizeof(glv_scalar), st),
      stage(chunk * sizeof(g1_affine), st), powers(((1ull << lo_bits) + hi_n) * sizeof(fr_t), st),
      spowers(scale ? ((1ull << slo_bits) + shi_n) * sizeof(fr_t) : sizeof(fr_t), st);

  // twiddles: w^e = lo[e mod 2^lo_bits] hi[e >> lo_bits]
  if (log_n > 0) {
    const std::vector<fr_t> host = split_powers(fr_host_root_of_unity(log_n), lo_bits, hi_n);
    fr_t* pw = powers.as<fr_t>();
    CK(cudaMemcpyAsync(pw, host.data(), host.size() * sizeof(fr_t), cudaMemcpyHostToDevice, st));
    C2G_LAUNCH(k_dft_twiddles, dft_grid(half, 256), 256, 0, st, tw.as<glv_scalar>(), half, pw, pw + (1ull << lo_bits),
               lo_bits);
    CK_LAUNCH("k_dft_twiddles");
    CK(cudaStreamSynchronize(st));  // the host powers die here
  }

  g1_xyzz* d = pts.as<g1_xyzz>();
  g1_affine* sb = stage.as<g1_affine>();
  for (uint64_t off = 0; off < n; off += chunk) {
    const uint64_t m = std::min(chunk, n - off);
    CK(cudaMemcpyAsync(sb, points + off, m * sizeof(g1_affine), cudaMemcpyHostToDevice, st));
    C2G_LAUNCH(k_dft_load, dft_grid(m, 256), 256, 0, st, sb, d + off, m);
    CK_LAUNCH("k_dft_load");
  }

  event_pair ep;
  ep.start(st);
  dft_pacer pacer(st, ctl);
  if (scale) {  // in_i = [c x^i] in_i
    const std::vector<fr_t> host = split_powers(scale[1], slo_bits, shi_n);
    fr_t* sp = spowers.as<fr_t>();
    CK(cudaMemcpyAsync(sp, host.data(), host.size() * sizeof(fr_t), cudaMemcpyHostToDevice, st));
    for (uint64_t i0 = 0; i0 < n; i0 += DFT_LAUNCH) {
      const uint64_t c = std::min(DFT_LAUNCH, n - i0);
      if (window == 5)
        affine ? launch_scale<5, true>(d, i0, c, sp, sp + (1ull << slo_bits), slo_bits, scale[0], st)
               : launch_scale<5, false>(d, i0, c, sp, sp + (1ull << slo_bits), slo_bits, scale[0], st);
      else
        affine ? launch_scale<4, true>(d, i0, c, sp, sp + (1ull << slo_bits), slo_bits, scale[0], st)
               : launch_scale<4, false>(d, i0, c, sp, sp + (1ull << slo_bits), slo_bits, scale[0], st);
      pacer.launched(c);
    }
    CK(cudaStreamSynchronize(st));  // the host powers die here
  }
  for (uint32_t s = 0; s < log_n; s++) {
    const uint32_t hb = log_n - 1 - s;
    const uint64_t groups = n >> (hb + 1);
    C2G_LAUNCH(k_dft_trivial, dft_grid(groups, 256), 256, 0, st, d, groups, hb);
    CK_LAUNCH("k_dft_trivial");
    const uint64_t count = groups * ((1ull << hb) - 1);
    for (uint64_t t0 = 0; t0 < count; t0 += DFT_LAUNCH) {
      const uint64_t c = std::min(DFT_LAUNCH, count - t0);
      const glv_scalar* twp = tw.as<glv_scalar>();
      if (window == 5)
        affine ? launch_twiddled<5, true>(d, log_n, hb, t0, c, twp, inverse, st)
               : launch_twiddled<5, false>(d, log_n, hb, t0, c, twp, inverse, st);
      else
        affine ? launch_twiddled<4, true>(d, log_n, hb, t0, c, twp, inverse, st)
               : launch_twiddled<4, false>(d, log_n, hb, t0, c, twp, inverse, st);
      pacer.launched(c);
    }
  }
  ep.stop(st);
  pacer.finish();
  pacer.check();

  for (uint64_t off = 0; off < n; off += chunk) {
    const uint64_t m = std::min(chunk, n - off);
    C2G_LAUNCH(k_dft_store, dft_grid(ceil_div(m, DFT_STORE_BATCH), 128), 128, 0, st, d, log_n, off, m, sb);
    CK_LAUNCH("k_dft_store");
    CK(cudaMemcpyAsync(points + off, sb, m * sizeof(g1_affine), cudaMemcpyDeviceToHost, st));
  }
  CK(cudaStreamSynchronize(st));
  if (stats) {
    stats->ms_stages = ep.ms();
    stats->scalar_muls = muls;
    stats->scale_muls = scale_muls;
    stats->ms = (float)std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
  }
}

}  // namespace c2g
