// Montgomery prime fields for BLS12-381: Fp (381-bit, 12x32-bit limbs) and
// Fr (255-bit, 8x32-bit limbs), and the quadratic extension Fp2 = Fp[u]/(u^2+1).
//
// Representation: exactly gnark-crypto's in-memory fp.Element / fr.Element:
// Montgomery form (x*R mod p, R = 2^384 resp. 2^256), little-endian limbs.
// A [6]uint64 little-endian is the same bytes as [12]uint32 little-endian, so
// gnark slices upload as raw memory. Fr values are kept fully reduced (< r);
// Fp values lie in [0, 2p) inside the device (FpParams::lazy: a product
// skips its final subtraction) and leave it reduced (mont::canonical: MSM
// results, affine conversions, the self-test's outputs).
#pragma once
#include "arith.cuh"

#if defined(__CUDACC__)
#define C2G_UNROLL _Pragma("unroll")
#else
#define C2G_UNROLL
#endif

#define FP_MOD { 0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau }
#define FP_MOD2 { 0xffff5556u, 0x73fdffffu, 0x62a7ffffu, 0x3d57fffdu, 0xed61ec48u, 0xce61a541u, 0xe70a257eu, 0xc8ee9709u, 0x869759aeu, 0x96374f6cu, 0x72ffcd34u, 0x340223d4u }
#define FP_ONE { 0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu, 0x53c758bau, 0x5f489857u, 0x70525745u, 0x77ce5853u, 0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u }
#define FP_R3 { 0xd94ca1e0u, 0xed48ac6bu, 0x03a7adf8u, 0x315f831eu, 0x615e29ddu, 0x9a53352au, 0x921e1761u, 0x34c04e5eu, 0x65724728u, 0x2512d435u, 0x91755d4du, 0x0aa63460u }
#define FP_R2 { 0x1c341746u, 0xf4df1f34u, 0x09d104f1u, 0x0a76e6a6u, 0x4c95b6d5u, 0x8de5476cu, 0x939d83c0u, 0x67eb88a9u, 0xb519952du, 0x9a793e85u, 0x92cae3aau, 0x11988fe5u }
#define FP_M0INV 0xfffcfffdu
#define FP_MINUS_ONE_CANON { 0xffffaaaau, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau }
#define FR_MOD { 0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u }
#define FR_ONE { 0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau, 0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u }
// r - 1 in Montgomery form: r - R
#define FR_MINUS_ONE { 0x00000003u, 0xfffffffdu, 0xfffb13fcu, 0xfb38ec08u, 0x1ce5880fu, 0x99ad8818u, 0x7cd877d8u, 0x5bc8f5f9u }
// 2 in Montgomery form: 2R (below r)
#define FR_TWO { 0xfffffffcu, 0x00000003u, 0x00069004u, 0xb1096ff4u, 0xd9789feau, 0x33189fdfu, 0x598a0adfu, 0x304962b3u }
#define FR_R2 { 0xf3f29c6du, 0xc999e990u, 0x87925c23u, 0x2b6cedcbu, 0x7254398fu, 0x05d31496u, 0x9f59ff11u, 0x0748d9d9u }
#define FR_M0INV 0xffffffffu
#define FR_MINUS_ONE_CANON { 0x00000000u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u }
#define FR_ROOT_2_32 { 0x5f0e466au, 0xb9b58d8cu, 0x1819d7ecu, 0x5b1b4c80u, 0x52a31e64u, 0x0af53ae3u, 0x19e9b27bu, 0x5bf3addau }
#define FR_COSET_GEN { 0xfffffff1u, 0x0000000eu, 0x00189c0fu, 0x17e363d3u, 0x6f8457b0u, 0xff9c5787u, 0x8fc5a8c4u, 0x35133220u }
#define FR_COSET_GEN_INV { 0xdb6db6dcu, 0xdb6db6dau, 0xdb6cc6dau, 0xe6b5824au, 0x05810db9u, 0xf8b356e0u, 0x60ec4796u, 0x66d0f1e6u }
// gnark-crypto's thirdRootOneG1 (Montgomery): phi(x, y) = (w x, y) is [x^2 - 1] on G1
#define G1_CUBE_ROOT { 0x8671f071u, 0xcd03c9e4u, 0x1fcda5d2u, 0x5dab2246u, 0xd3851b95u, 0x587042afu, 0x01bacb9eu, 0x8eb60ebeu, 0x83d050d2u, 0x03f97d6eu, 0x54638741u, 0x18f02065u }
#define G1_GEN_X { 0xfd530c16u, 0x5cb38790u, 0x9976fff5u, 0x7817fc67u, 0x143ba1c1u, 0x154f95c7u, 0xf3d0e747u, 0xf0ae6acdu, 0x21dbf440u, 0xedce6eccu, 0x9e0bfb75u, 0x12017741u }
#define G1_GEN_Y { 0x0ce72271u, 0xbaac93d5u, 0x7918fd8eu, 0x8c22631au, 0x570725ceu, 0xdd595f13u, 0x50405194u, 0x51ac5829u, 0xad0059c0u, 0x0e1c8c3fu, 0x5008a26au, 0x0bbc3efcu }
#define G2_GEN_X0 { 0x02940a10u, 0xf5f28fa2u, 0x87b4961au, 0xb3f5fb26u, 0x3e2ae580u, 0xa1a893b5u, 0x1a3caee9u, 0x9894999du, 0x1863366bu, 0x6f67b763u, 0x4350bcd7u, 0x05819192u }
#define G2_GEN_X1 { 0x9e23f606u, 0xa5a9c075u, 0xbccd60c3u, 0xaaa0c59du, 0xe2867806u, 0x3bb17e18u, 0x8541b367u, 0x1b1ab6ccu, 0xf2158547u, 0xc2b6ed0eu, 0x7360edf3u, 0x11922a09u }
#define G2_GEN_Y0 { 0x60494c4au, 0x4c730af8u, 0x5e369c5au, 0x597cfa1fu, 0xaa0a635au, 0xe7e6856cu, 0x6e0d495fu, 0xbbefb5e9u, 0xf0ef25a2u, 0x07d3a975u, 0x7e80dae5u, 0x0083fd8eu }
#define G2_GEN_Y1 { 0xdf64b05du, 0xadc0fc92u, 0x2b1461dcu, 0x18aa270au, 0x3be4eba0u, 0x86adac6au, 0xc93da33au, 0x79495c4eu, 0xa43ccaedu, 0xe7175850u, 0x63de1bf2u, 0x0b2bc2a1u }

namespace c2g {

#if defined(__CUDACC__)
static __constant__ uint32_t d_fp_mod[12] = FP_MOD;
static __constant__ uint32_t d_fp_mod2[12] = FP_MOD2;
static __constant__ uint32_t d_fr_mod[8] = FR_MOD;
static __constant__ uint32_t d_fr_m0inv = FR_M0INV;
#endif
static const uint32_t h_fp_mod[12] = FP_MOD;
static const uint32_t h_fp_mod2[12] = FP_MOD2;
static const uint32_t h_fr_mod[8] = FR_MOD;

// C2G_FP_MUL_CALL / C2G_FR_MUL_CALL (per compilation unit) make the device
// product of that field one out-of-line function: a kernel that inlines
// many products otherwise outgrows the instruction cache.
#if defined(C2G_FP_MUL_CALL)
#define C2G_FP_CALL true
#else
#define C2G_FP_CALL false
#endif
#if defined(C2G_FR_MUL_CALL)
#define C2G_FR_CALL true
#else
#define C2G_FR_CALL false
#endif

struct FpParams {
  static constexpr int N = 12;
  static constexpr bool call_mul = C2G_FP_CALL;
  static constexpr bool sqr_rows = true;  // p < 2^(32N-2): mont::sqr_rows applies
  // Values are kept in [0, 2p) (4p < 2^(32N)): products skip their final
  // subtraction; see mont.
  static constexpr bool lazy = true;
  static C2G_HD uint32_t m0inv() { return FP_M0INV; }  // -p^-1 mod 2^32
  static C2G_HD uint32_t mod(int i) {
#ifdef __CUDA_ARCH__
    return d_fp_mod[i];
#else
    return h_fp_mod[i];
#endif
  }
  static C2G_HD uint32_t bound(int i) {  // 2p: the representation's bound
#ifdef __CUDA_ARCH__
    return d_fp_mod2[i];
#else
    return h_fp_mod2[i];
#endif
  }
};

struct FrParams {
  static constexpr int N = 8;
  static constexpr bool call_mul = C2G_FR_CALL;
  static constexpr bool sqr_rows = false;  // r > 2^254: squares are products
  static constexpr bool lazy = false;      // 4r > 2^256: values stay < r
  // -p^-1 mod 2^32, read from constant memory on the device: with the
  // literal 0xffffffff the compiler negates t[0] instead of multiplying,
  // and ptxas then no longer fuses the product chains into 64-bit
  // multiply-adds (IMAD.WIDE.U32.X): 432 instead of 376 SASS instructions
  // per product on sm_90, 8,134 instead of 7,142 in the three-stage NTT pass.
  static C2G_HD uint32_t m0inv() {
#ifdef __CUDA_ARCH__
    return d_fr_m0inv;
#else
    return FR_M0INV;
#endif
  }
  static C2G_HD uint32_t mod(int i) {
#ifdef __CUDA_ARCH__
    return d_fr_mod[i];
#else
    return h_fr_mod[i];
#endif
  }
  static C2G_HD uint32_t bound(int i) { return mod(i); }
};

template <class P>
struct mont;
#if defined(__CUDACC__)
template <class P>
__device__ __noinline__ mont<P> mont_mul_call(mont<P> a, mont<P> b);
template <class P>
__device__ __noinline__ mont<P> mont_sqr_call(mont<P> a);
#endif

// mont<P> is an element of the prime field P in Montgomery form.
template <class P>
struct mont {
  static constexpr int N = P::N;
  uint32_t v[N];

  static C2G_HD mont zero() {
    mont r;
    C2G_UNROLL for (int i = 0; i < N; i++) r.v[i] = 0;
    return r;
  }
  static C2G_HD mont from_limbs(const uint32_t* l) {
    mont r;
    C2G_UNROLL for (int i = 0; i < N; i++) r.v[i] = l[i];
    return r;
  }

  // Every limb 0 (the representative 0, not p).
  C2G_HD bool limbs_zero() const {
    uint32_t acc = 0;
    C2G_UNROLL for (int i = 0; i < N; i++) acc |= v[i];
    return acc == 0;
  }
  // Zero in the field: with P::lazy the limbs hold 0 or p.
  C2G_HD bool is_zero() const {
    if constexpr (P::lazy) {
      uint32_t accp = 0;
      C2G_UNROLL for (int i = 0; i < N; i++) accp |= v[i] ^ P::mod(i);
      return limbs_zero() || accp == 0;
    }
    return limbs_zero();
  }
  C2G_HD bool operator==(const mont& o) const {
    if constexpr (P::lazy) return (*this - o).is_zero();
    uint32_t acc = 0;
    C2G_UNROLL for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  C2G_HD bool operator!=(const mont& o) const { return !(*this == o); }

  // The unique representative below p (what leaves the device; identical
  // to *this unless P::lazy).
  C2G_HD mont canonical() const {
    if constexpr (P::lazy) return reduce_once(v);
    return *this;
  }

  // r = t - p if t >= p else t, for t < 2p given in N limbs.
  static C2G_HD mont reduce_once(const uint32_t* t) { return reduce_by<false>(t); }
  // r = t - B if t >= B else t, for t < 2B, B = p (BOUND false) or the
  // representation's bound P::bound (2p when P::lazy).
  template <bool BOUND>
  static C2G_HD mont reduce_by(const uint32_t* t) {
    uint32_t u[N];
    u[0] = ptx::sub_cc(t[0], BOUND ? P::bound(0) : P::mod(0));
    C2G_UNROLL for (int i = 1; i < N; i++) u[i] = ptx::subc_cc(t[i], BOUND ? P::bound(i) : P::mod(i));
    uint32_t keep = ptx::subc(0, 0);  // all ones when t < B
    mont r;
    C2G_UNROLL for (int i = 0; i < N; i++) r.v[i] = (t[i] & keep) | (u[i] & ~keep);
    return r;
  }
  // A product's result: t < 2p; reduced below p unless P::lazy.
  static C2G_HD mont product_result(const uint32_t* t) {
    if constexpr (P::lazy) return from_limbs(t);
    return reduce_once(t);
  }

  // Sums and differences stay below the bound B (p, or 2p when P::lazy):
  // a + b < 2B < 2^(32N) (4p < 2^384 for Fp), reduced once by B.
  friend C2G_HD mont operator+(const mont& a, const mont& b) {
    uint32_t t[N];
    t[0] = ptx::add_cc(a.v[0], b.v[0]);
    C2G_UNROLL for (int i = 1; i < N - 1; i++) t[i] = ptx::addc_cc(a.v[i], b.v[i]);
    t[N - 1] = ptx::addc(a.v[N - 1], b.v[N - 1]);  // 2B < 2^(32N): no carry out
    return reduce_by<true>(t);
  }

  friend C2G_HD mont operator-(const mont& a, const mont& b) {
    uint32_t t[N];
    t[0] = ptx::sub_cc(a.v[0], b.v[0]);
    C2G_UNROLL for (int i = 1; i < N; i++) t[i] = ptx::subc_cc(a.v[i], b.v[i]);
    uint32_t borrow = ptx::subc(0, 0);  // all ones when a < b
    mont r;
    r.v[0] = ptx::add_cc(t[0], P::bound(0) & borrow);
    C2G_UNROLL for (int i = 1; i < N - 1; i++) r.v[i] = ptx::addc_cc(t[i], P::bound(i) & borrow);
    r.v[N - 1] = ptx::addc(t[N - 1], P::bound(N - 1) & borrow);
    return r;
  }

  // B - a, and 0 for limbs 0 (p, zero as well, gives B - p = p).
  C2G_HD mont neg() const {
    uint32_t nz = limbs_zero() ? 0u : 0xffffffffu;
    mont r;
    r.v[0] = ptx::sub_cc(P::bound(0) & nz, v[0]);
    C2G_UNROLL for (int i = 1; i < N - 1; i++) r.v[i] = ptx::subc_cc(P::bound(i) & nz, v[i]);
    r.v[N - 1] = ptx::subc(P::bound(N - 1) & nz, v[N - 1]);
    return r;
  }

  C2G_HD mont dbl() const { return *this + *this; }

  // Montgomery product a*b/R mod p (CIOS). Per row, the products of the
  // even-indexed limbs (of a, then of p) land on the word pairs (t[j],
  // t[j+1]), j even; those of the odd-indexed limbs go to a separate
  // N-word u on the pairs (u[j-1], u[j]), added to t one word up. On sm_90
  // ptxas compiles a chain of lo/hi products of the same operands on an
  // aligned register pair into one 64-bit multiply-add with carry
  // (IMAD.WIDE.U32.X) per product when the limb of p comes from the
  // constant bank (the m·p chains); register × register a·b chains stay
  // IMAD + IMAD.HI + additions. (Making every a_j b_i a plain 64-bit
  // product and folding it into the m·p chains instead gives fewer SASS
  // instructions for Fp but a slower G1 MSM and NTT on an H200.) With
  // p < 2^(32N-1) and a, b < p: t < 2p after each row, every partial sum of
  // a row fits in N+1 words, and u < 2^(32N). With P::lazy (a, b < 2p,
  // 4p < 2^(32N)): t < a + p < 3p, u < 3p, and the result (ab + Mp)/R < 2p
  // is kept as it is.
  friend C2G_HD mont operator*(const mont& a, const mont& b) {
#if defined(__CUDA_ARCH__)
    if constexpr (P::call_mul) return mont_mul_call<P>(a, b);
#endif
    return mul(a, b);
  }
  static C2G_HD mont mul(const mont& a, const mont& b) {
    uint32_t t[N + 1];
    zero_frame(t);
    C2G_UNROLL for (int i = 0; i < N; i++) mul_row(t, a, b.v[i]);
    return product_result(t);
  }
  // a^2/R mod p: the CIOS rows of mul with b = a, but each cross product
  // a_i a_j (i < j) computed once, in row i, against the limbs of 2a: row i
  // adds a_i * (a_i 2^(32i) + 2 sum_{j>i} a_j 2^(32j)), whose limbs are a_i
  // at i, a_{i+1} << 1 at i + 1 and d_j = (a_j << 1) | (a_{j-1} >> 31)
  // above (no limb N: a < p < 2^(32N-1)). N(N+1)/2 products of limbs
  // instead of N^2 (78 instead of 144 for Fp; 488 SASS instructions instead
  // of 744). The rows so far sum to less than 2^(32(i+1)) 2a, so with the
  // m·p terms each frame is < 2a + p, and u < 2a + p as well; for
  // p < 2^(32N-2) (P::sqr_rows: Fp, not Fr) both fit N words, also for
  // P::lazy's a < 2p (5p < 2^(32N) as p < 2^381). The result is the same
  // (a^2 + M p)/R < 2p as mul's.
  static C2G_HD mont sqr_rows(const mont& a) {
    uint32_t t[N + 1], d[N];
    zero_frame(t);
    doubled(a, d);
    C2G_UNROLL for (int i = 0; i < N; i++) sqr_row(t, a, d, i);
    return product_result(t);
  }
  static C2G_HD void zero_frame(uint32_t* t) {
    C2G_UNROLL for (int i = 0; i <= N; i++) t[i] = 0;
  }
  // d = the limbs of 2a (a < 2^(32N-1)).
  static C2G_HD void doubled(const mont& a, uint32_t* d) {
    d[0] = a.v[0] << 1;
    C2G_UNROLL for (int j = 1; j < N; j++) d[j] = (a.v[j] << 1) | (a.v[j - 1] >> 31);
  }

  // Row i of mul: t = (t + a bi + m p) / 2^32.
  static C2G_HD void mul_row(uint32_t* t, const mont& a, uint32_t bi) {
    static_assert(N % 2 == 0, "even limb count");
    // t += a_even * bi
    t[0] = ptx::mad_lo_cc(a.v[0], bi, t[0]);
    t[1] = ptx::madc_hi_cc(a.v[0], bi, t[1]);
    C2G_UNROLL for (int j = 2; j < N; j += 2) {
      t[j] = ptx::madc_lo_cc(a.v[j], bi, t[j]);
      t[j + 1] = ptx::madc_hi_cc(a.v[j], bi, t[j + 1]);
    }
    t[N] = ptx::addc(t[N], 0);
    // u = a_odd * bi, one word down
    uint32_t u[N];
    C2G_UNROLL for (int j = 1; j < N; j += 2) {
      const uint64_t pr = (uint64_t)a.v[j] * bi;
      u[j - 1] = (uint32_t)pr;
      u[j] = (uint32_t)(pr >> 32);
    }
    reduce_step(t, u);
  }

  // Row i of sqr_rows (d = the limbs of 2a).
  static C2G_HD void sqr_row(uint32_t* t, const mont& a, const uint32_t* d, int i) {
    static_assert(N % 2 == 0, "even limb count");
    const uint32_t ai = a.v[i];
    const uint32_t next = i + 1 < N ? a.v[i + 1] << 1 : 0;
    // t += the row's products at even offsets j >= i (pairs t[j], t[j+1])
    const int e0 = (i & 1) ? i + 1 : i;
    if (e0 < N) {
      const uint32_t o0 = e0 == i ? ai : next;
      t[e0] = ptx::mad_lo_cc(ai, o0, t[e0]);
      t[e0 + 1] = ptx::madc_hi_cc(ai, o0, t[e0 + 1]);
      C2G_UNROLL for (int j = e0 + 2; j < N; j += 2) {
        t[j] = ptx::madc_lo_cc(ai, d[j], t[j]);
        t[j + 1] = ptx::madc_hi_cc(ai, d[j], t[j + 1]);
      }
      t[N] = ptx::addc(t[N], 0);
    }
    // u = the products at odd offsets j >= i, one word down
    uint32_t u[N];
    C2G_UNROLL for (int j = 1; j < N; j += 2) {
      const uint64_t pr = j < i ? 0 : (uint64_t)ai * (j == i ? ai : (j == i + 1 ? next : d[j]));
      u[j - 1] = (uint32_t)pr;
      u[j] = (uint32_t)(pr >> 32);
    }
    reduce_step(t, u);
  }

  // The Montgomery half of a row, the row's products at even offsets
  // already in t (N+1 words) and those at odd offsets in u (one word down):
  // m = t[0] (-p^-1), t += m p_even, u += m p_odd, t += u << 32, t >>= 32
  // (t[0] is 0).
  static C2G_HD void reduce_step(uint32_t* t, uint32_t* u) {
    const uint32_t m = ptx::mul_lo(t[0], P::m0inv());
    t[0] = ptx::mad_lo_cc(m, P::mod(0), t[0]);
    t[1] = ptx::madc_hi_cc(m, P::mod(0), t[1]);
    C2G_UNROLL for (int j = 2; j < N; j += 2) {
      t[j] = ptx::madc_lo_cc(m, P::mod(j), t[j]);
      t[j + 1] = ptx::madc_hi_cc(m, P::mod(j), t[j + 1]);
    }
    t[N] = ptx::addc(t[N], 0);
    u[0] = ptx::mad_lo_cc(m, P::mod(1), u[0]);
    u[1] = ptx::madc_hi_cc(m, P::mod(1), u[1]);
    C2G_UNROLL for (int j = 3; j < N - 1; j += 2) {
      u[j - 1] = ptx::madc_lo_cc(m, P::mod(j), u[j - 1]);
      u[j] = ptx::madc_hi_cc(m, P::mod(j), u[j]);
    }
    u[N - 2] = ptx::madc_lo_cc(m, P::mod(N - 1), u[N - 2]);
    u[N - 1] = ptx::madc_hi(m, P::mod(N - 1), u[N - 1]);
    t[1] = ptx::add_cc(t[1], u[0]);
    C2G_UNROLL for (int j = 2; j < N; j++) t[j] = ptx::addc_cc(t[j], u[j - 1]);
    t[N] = ptx::addc(t[N], u[N - 1]);
    C2G_UNROLL for (int j = 0; j < N; j++) t[j] = t[j + 1];
    t[N] = 0;
  }

  C2G_HD mont sqr() const {
    if constexpr (!P::sqr_rows) return *this * *this;
#if defined(__CUDA_ARCH__)
    if constexpr (P::call_mul) return mont_sqr_call<P>(*this);
#endif
    return sqr_rows(*this);
  }

  // x/R mod p: Montgomery form -> canonical integer (as limbs).
  C2G_HD mont from_mont() const {
    mont one = zero();
    one.v[0] = 1;
    return (*this * one).canonical();
  }

  // this^e for an exponent given as little-endian 32-bit limbs (host or
  // device memory the caller can read), most significant bit first.
  C2G_HD mont pow_limbs(const uint32_t* e, int nlimbs, mont one) const {
    mont r = one;
    for (int i = nlimbs - 1; i >= 0; i--) {
      for (int b = 31; b >= 0; b--) {
        r = r.sqr();
        if ((e[i] >> b) & 1) r = r * *this;
      }
    }
    return r;
  }
};

#if defined(__CUDACC__)
template <class P>
__device__ __noinline__ mont<P> mont_mul_call(mont<P> a, mont<P> b) {
  return mont<P>::mul(a, b);
}
template <class P>
__device__ __noinline__ mont<P> mont_sqr_call(mont<P> a) {
  return mont<P>::sqr_rows(a);
}
#endif

using fp_t = mont<FpParams>;
using fr_t = mont<FrParams>;

// Fp2 products are out of line on the device (each holds 2-3 inlined Fp
// products): G2 code stays small enough to compile in reasonable time, at a
// call cost that is small next to the body. A unit whose Fp products are
// calls already (C2G_FP_MUL_CALL) inlines them (C2G_FP2_INLINE): one level
// of calls.
#if defined(__CUDACC__) && !defined(C2G_FP2_INLINE)
#define C2G_FP2_MUL __host__ __device__ __noinline__
#else
#define C2G_FP2_MUL C2G_HD
#endif

// Fp2 = Fp[u]/(u^2 + 1); layout {c0, c1} = gnark's E2 {A0, A1}.
struct fp2_t {
  fp_t c0, c1;

  static C2G_HD fp2_t zero() { return fp2_t{fp_t::zero(), fp_t::zero()}; }
  C2G_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  C2G_HD bool operator==(const fp2_t& o) const { return c0 == o.c0 && c1 == o.c1; }
  C2G_HD fp2_t canonical() const { return fp2_t{c0.canonical(), c1.canonical()}; }
  friend C2G_HD fp2_t operator+(const fp2_t& a, const fp2_t& b) { return fp2_t{a.c0 + b.c0, a.c1 + b.c1}; }
  friend C2G_HD fp2_t operator-(const fp2_t& a, const fp2_t& b) { return fp2_t{a.c0 - b.c0, a.c1 - b.c1}; }
  C2G_HD fp2_t neg() const { return fp2_t{c0.neg(), c1.neg()}; }
  C2G_HD fp2_t dbl() const { return fp2_t{c0.dbl(), c1.dbl()}; }
  // Karatsuba: 3 base-field products.
  friend C2G_FP2_MUL fp2_t operator*(const fp2_t& a, const fp2_t& b) {
    fp_t v0 = a.c0 * b.c0;
    fp_t v1 = a.c1 * b.c1;
    fp_t s = (a.c0 + a.c1) * (b.c0 + b.c1);
    return fp2_t{v0 - v1, s - v0 - v1};
  }
  // (a0 + a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u: 2 base-field products.
  C2G_FP2_MUL fp2_t sqr() const {
    fp_t p = (c0 + c1) * (c0 - c1);
    fp_t q = c0 * c1;
    return fp2_t{p, q.dbl()};
  }
  // a^2 + b^2 = x times its conjugate, in Fp.
  C2G_HD fp_t norm() const { return c0.sqr() + c1.sqr(); }
  // 1/x = (a - b u) / (a^2 + b^2), given ni = 1/norm() (0 for 0, then 0).
  C2G_HD fp2_t inverse_by_norm(const fp_t& ni) const { return fp2_t{c0 * ni, (c1 * ni).neg()}; }
};

// ---- inversion in Fp and Fp2. Variable time: for public data only (MSM
// bases and their sums), never for secrets. Out of line on the device (one
// copy per kernel).
//
// fp_inverse runs Bernstein and Yang's divsteps ("Fast constant-time gcd
// computation and modular inversion", 2019) in batches of 30 on the low
// words of f and g, each batch's 2x2 transition matrix then applied to the
// whole f, g (12-limb two's complement) and to their coefficients d, e mod p
// (a Montgomery step by 2^32 keeps those in [0, p)): 37 batches, no
// data-dependent branch, so a warp's lanes stay together — the binary
// extended Euclid it replaced ran data-dependent loops of shifts and
// subtractions (about five times the warp instructions per inversion in
// the batch-affine kernel). The Euclid stays as the reference and
// as a fallback that the theorem's bound says is never taken.
#if defined(__CUDACC__)
#define C2G_INV inline __host__ __device__ __noinline__
#else
#define C2G_INV inline
#endif
namespace bingcd {
constexpr int NL = FpParams::N;
C2G_HD bool is_one(const uint32_t* a) {
  uint32_t o = a[0] ^ 1u;
  C2G_UNROLL for (int i = 1; i < NL; i++) o |= a[i];
  return o == 0;
}
C2G_HD void shr1(uint32_t* a) {
  C2G_UNROLL for (int i = 0; i < NL - 1; i++) a[i] = (a[i] >> 1) | (a[i + 1] << 31);
  a[NL - 1] >>= 1;
}
// a -= b; returns the borrow.
C2G_HD uint32_t sub_n(uint32_t* a, const uint32_t* b) {
  uint64_t br = 0;
  C2G_UNROLL for (int i = 0; i < NL; i++) {
    const uint64_t d = (uint64_t)a[i] - b[i] - br;
    a[i] = (uint32_t)d;
    br = (d >> 63) & 1;
  }
  return (uint32_t)br;
}
C2G_HD void add_p(uint32_t* a) {
  uint64_t c = 0;
  C2G_UNROLL for (int i = 0; i < NL; i++) {
    c += (uint64_t)a[i] + FpParams::mod(i);
    a[i] = (uint32_t)c;
    c >>= 32;
  }
}
// x/2 mod p for x < p (x + p < 2^382 fits).
C2G_HD void half_mod(uint32_t* x) {
  if (x[0] & 1) add_p(x);
  shr1(x);
}
// x = x - y mod p for x, y < p.
C2G_HD void sub_mod(uint32_t* x, const uint32_t* y) {
  if (sub_n(x, y)) add_p(x);
}
C2G_HD bool geq(const uint32_t* a, const uint32_t* b) {
  C2G_UNROLL for (int i = NL - 1; i >= 0; i--)
    if (a[i] != b[i]) return a[i] > b[i];
  return true;
}
}  // namespace bingcd

// 1/x in Montgomery form (0 for 0, as gnark-crypto's Inverse) by the binary
// extended Euclid. It runs on the canonical integer xR and gives (xR)^-1;
// the Montgomery product with R^3 turns that into x^-1 R.
C2G_INV fp_t fp_inverse_euclid(const fp_t& x) {
  using namespace bingcd;
  const fp_t c = x.canonical();
  if (c.limbs_zero()) return fp_t::zero();
  uint32_t u[NL], v[NL], x1[NL], x2[NL];
  C2G_UNROLL for (int i = 0; i < NL; i++) {
    u[i] = c.v[i];
    v[i] = FpParams::mod(i);
    x1[i] = i == 0;
    x2[i] = 0;
  }
  // invariants: x1 * xR = u and x2 * xR = v (mod p); u, v odd after the
  // halvings; gcd(u, v) = 1 as p is prime.
  while (!is_one(u) && !is_one(v)) {
    while (!(u[0] & 1)) {
      shr1(u);
      half_mod(x1);
    }
    while (!(v[0] & 1)) {
      shr1(v);
      half_mod(x2);
    }
    if (geq(u, v)) {
      sub_n(u, v);
      sub_mod(x1, x2);
    } else {
      sub_n(v, u);
      sub_mod(x2, x1);
    }
  }
  const bool ux = is_one(u);
  fp_t r;
  C2G_UNROLL for (int i = 0; i < NL; i++) r.v[i] = ux ? x1[i] : x2[i];  // (a pointer select would put the arrays in local memory)
  const uint32_t r3[NL] = FP_R3;
  return r * fp_t::from_limbs(r3);
}

namespace divsteps {
constexpr int NL = FpParams::N;
constexpr int STEPS = 30;    // divsteps per batch: the matrix entries stay within 2^30
constexpr int BATCHES = 37;  // 1,110 divsteps >= floor((49 * 381 + 57) / 17) = 1,101
// Bernstein-Yang, Theorem 11.2: from delta = 1, f odd and f^2 + 4 g^2 <=
// 5 * 2^(2d) (here f = p, 0 <= g < p, d = 381), g is 0 after that many
// divsteps, and f = +-gcd = +-1.
//
// 2^(2 BATCHES) R^3 mod p: with f = p, g = xR, d = 0, e = 1 at the start,
// f = 4^b d xR (mod p) after b batches (each divides f, g by 2^30 and d, e
// by 2^32), so at the end +-1 = 4^37 d xR and x^-1 R = +-d 4^37 R^2, the
// Montgomery product of d with this constant (which BATCHES fixes: change
// one and recompute the other; TestHostInverse fails when they disagree).
#define FP_DIVSTEPS_FIX { 0x21c51463u, 0x76fa1749u, 0xd6c6c4aeu, 0x7e1f588cu, 0x9206a5d6u, 0x7548c74au, 0x1f02953eu, 0x7bdd3602u, 0x6e8c7436u, 0xbf6aacb1u, 0x8faf81e0u, 0x0f06efceu }

// The transition matrix of STEPS divsteps: 2^STEPS (f', g') = (u f + v g,
// q f + r g).
struct matrix {
  int32_t u, v, q, r;
};

// STEPS divsteps on the low words of f (odd) and g, branch-free: when
// delta > 0 and g is odd, (delta, f, g) becomes (-delta, g, -f) first; then
// g += f when g is odd, g /= 2, delta += 1. Step i needs bit 0 of g, and g
// loses a valid high bit per step: 32 bits cover 30 steps.
C2G_HD matrix batch(int32_t& delta, uint32_t f, uint32_t g) {
  uint32_t u = 1, v = 0, q = 0, r = 1;  // two's complement
  C2G_UNROLL for (int i = 0; i < STEPS; i++) {
    const uint32_t odd = 0u - (g & 1u);
    const uint32_t sw = odd & (uint32_t)((int32_t)(0u - (uint32_t)delta) >> 31);  // delta > 0 and g odd
    const uint32_t nf = f ^ ((f ^ g) & sw), ng = g ^ ((g ^ (0u - f)) & sw);
    const uint32_t nu = u ^ ((u ^ q) & sw), nv = v ^ ((v ^ r) & sw);
    const uint32_t nq = q ^ ((q ^ (0u - u)) & sw), nr = r ^ ((r ^ (0u - v)) & sw);
    delta = (int32_t)(((uint32_t)delta ^ sw) - sw);  // -delta when swapped
    f = nf;
    g = ng + (nf & odd);
    q = nq + (nu & odd);
    r = nr + (nv & odd);
    g >>= 1;
    u = nu << 1;
    v = nv << 1;
    delta += 1;
  }
  return matrix{(int32_t)u, (int32_t)v, (int32_t)q, (int32_t)r};
}

// s = a x + b y (mod 2^(32 (NL + 1))): a, b NL-limb two's complement, x, y
// with |x|, |y| <= 2^30, so |s| < 2^(32 NL + 31) is exact in NL + 1 limbs.
// A negative factor negates its operand: a x = (~a) |x| + |x|.
C2G_HD void lincomb(uint32_t* s, const uint32_t* a, const uint32_t* b, int32_t x, int32_t y) {
  const uint32_t mx = (uint32_t)(x >> 31), my = (uint32_t)(y >> 31);
  const uint32_t ax = (uint32_t)((x ^ (int32_t)mx) - (int32_t)mx), ay = (uint32_t)((y ^ (int32_t)my) - (int32_t)my);
  const uint32_t ea = (uint32_t)((int32_t)a[NL - 1] >> 31) ^ mx, eb = (uint32_t)((int32_t)b[NL - 1] >> 31) ^ my;
  uint64_t c = (uint64_t)(ax & mx) + (ay & my);
  C2G_UNROLL for (int i = 0; i < NL; i++) {  // two products < 2^62 and a carry < 2^32: no overflow
    c += (uint64_t)(a[i] ^ mx) * ax + (uint64_t)(b[i] ^ my) * ay;
    s[i] = (uint32_t)c;
    c >>= 32;
  }
  c += (uint64_t)ea * ax + (uint64_t)eb * ay;
  s[NL] = (uint32_t)c;
}

// The next f (or g): (a x + b y) / 2^STEPS, exact, into out (two's complement).
C2G_HD void next_fg(uint32_t* out, const uint32_t* a, const uint32_t* b, int32_t x, int32_t y) {
  uint32_t s[NL + 1];
  lincomb(s, a, b, x, y);
  C2G_UNROLL for (int i = 0; i < NL; i++) out[i] = (s[i] >> STEPS) | (s[i + 1] << (32 - STEPS));
}

// The next d (or e): (a x + b y) / 2^32 mod p for a, b in [0, p), into out
// in [0, p): a Montgomery step (k p added so that the low word is 0), then
// the result, in (-p/4, 1.25 p), brought into range.
C2G_HD void next_de(uint32_t* out, const uint32_t* a, const uint32_t* b, int32_t x, int32_t y) {
  uint32_t s[NL + 1];
  lincomb(s, a, b, x, y);
  const uint32_t k = s[0] * FpParams::m0inv();
  uint64_t c = 0;
  C2G_UNROLL for (int i = 0; i < NL; i++) {
    c += (uint64_t)k * FpParams::mod(i) + s[i];
    s[i] = (uint32_t)c;
    c >>= 32;
  }
  s[NL] += (uint32_t)c;
  // out = s / 2^32, then + p if negative, - p if >= p
  C2G_UNROLL for (int i = 0; i < NL; i++) out[i] = s[i + 1];
  const uint32_t pm[NL] = FP_MOD;
  if ((int32_t)s[NL] < 0)
    bingcd::add_p(out);
  else if (bingcd::geq(out, pm))
    bingcd::sub_n(out, pm);
}
}  // namespace divsteps

// 1/x in Montgomery form by divsteps (0 for 0); ok = false (and 0) if the
// end state is not g = 0, f = +-1, which the bound above rules out.
C2G_INV fp_t fp_inverse_divsteps(const fp_t& x, bool& ok) {
  using namespace divsteps;
  ok = true;
  const fp_t c = x.canonical();
  if (c.limbs_zero()) return fp_t::zero();
  uint32_t f[NL], g[NL], d[NL], e[NL];
  C2G_UNROLL for (int i = 0; i < NL; i++) {
    f[i] = FpParams::mod(i);
    g[i] = c.v[i];
    d[i] = 0;
    e[i] = i == 0;
  }
  int32_t delta = 1;
  for (int b = 0; b < BATCHES; b++) {
    const matrix m = batch(delta, f[0], g[0]);
    uint32_t t[NL];
    next_fg(t, f, g, m.q, m.r);
    next_fg(f, f, g, m.u, m.v);
    C2G_UNROLL for (int i = 0; i < NL; i++) g[i] = t[i];
    next_de(t, d, e, m.q, m.r);
    next_de(d, d, e, m.u, m.v);
    C2G_UNROLL for (int i = 0; i < NL; i++) e[i] = t[i];
  }
  // g = 0 and f = 1 or -1 (all ones)
  uint32_t gz = 0, f1 = f[0] ^ 1u, fm = ~f[0];
  C2G_UNROLL for (int i = 0; i < NL; i++) gz |= g[i];
  C2G_UNROLL for (int i = 1; i < NL; i++) f1 |= f[i], fm |= ~f[i];
  if (gz != 0 || (f1 != 0 && fm != 0)) {
    ok = false;
    return fp_t::zero();
  }
  const uint32_t fix[NL] = FP_DIVSTEPS_FIX;
  const fp_t r = fp_t::from_limbs(d) * fp_t::from_limbs(fix);
  return f1 == 0 ? r : r.neg();
}

// 1/x in Montgomery form (0 for 0, as gnark-crypto's Inverse).
C2G_INV fp_t fp_inverse(const fp_t& x) {
  bool ok;
  const fp_t r = fp_inverse_divsteps(x, ok);
  return ok ? r : fp_inverse_euclid(x);
}

// 1/x in Fp2 through the norm; 0 for 0.
C2G_INV fp2_t fp2_inverse(const fp2_t& x) { return x.inverse_by_norm(fp_inverse(x.norm())); }
C2G_HD fp_t field_inverse(const fp_t& x) { return fp_inverse(x); }
C2G_HD fp2_t field_inverse(const fp2_t& x) { return fp2_inverse(x); }

}  // namespace c2g
