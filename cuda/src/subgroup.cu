#include "subgroup.cuh"

#include <algorithm>
#include <vector>

namespace c2g {

// Montgomery limbs of the constants (gnark-crypto's endo.u, endo.v of
// bls12-381; endo.u has a zero real part; G1_CUBE_ROOT in field.cuh).
#define G2_PSI_X1 { 0x867545c3u, 0x890dc9e4u, 0x3285a5d5u, 0x2af32253u, 0x309b7e2cu, 0x50880866u, 0x7e881024u, 0xa20d1b8cu, 0xe2db9068u, 0x14e4f04fu, 0x1564853au, 0x14e56d3fu }
#define G2_PSI_Y0 { 0xa55c9ad1u, 0x3e2f585du, 0x86c18183u, 0x4294213du, 0x8b623732u, 0x382844c8u, 0x19103e18u, 0x92ad2afdu, 0xac7cf0b9u, 0x1d794e4fu, 0x7d825ec8u, 0x0bd592fcu }
#define G2_PSI_Y1 { 0x5aa30fdau, 0x7bcfa7a2u, 0x2a927e7cu, 0xdc17dec1u, 0x6b4ebef1u, 0x2f088dd8u, 0xda74d4a7u, 0xd1ca2087u, 0x96cebc1du, 0x2da25966u, 0xbbfd87d2u, 0x0e2b7eedu }

constexpr uint64_t SEED = 0xd201000000010000ull;  // |x|
// x^2 = 0xac45a4010001a402_0000000100000000 (128 bits, 17 set)
constexpr uint64_t SEED_SQ_HI = 0xac45a4010001a402ull;
constexpr uint64_t SEED_SQ_LO = 0x0000000100000000ull;
constexpr uint64_t SG_CHUNK = 1ull << 21;  // points per device round trip and buffer

// [k] q for the scalar k = hi·2^64 + lo (hi's top bit set, or hi == 0 and
// lo's top bit set), MSB first.
template <class F>
__device__ __forceinline__ xyzz_t<F> mul_bits(const affine_t<F>& q, uint64_t hi, uint64_t lo) {
  xyzz_t<F> r = xyzz_t<F>::from_affine(q);
  const int top = hi ? 127 : 63;
  for (int b = top - 1; b >= 0; b--) {
    r = r.dbl();
    const uint64_t bit = b >= 64 ? (hi >> (b - 64)) & 1 : (lo >> b) & 1;
    if (bit) r.add_affine(q);
  }
  return r;
}

// r == (x, y) for an affine (x, y) that is not infinity.
template <class F>
__device__ __forceinline__ bool equals_affine(const xyzz_t<F>& r, const F& x, const F& y) {
  if (r.is_inf()) return false;
  return r.X == x * r.ZZ && r.Y == y * r.ZZZ;
}

__device__ bool in_subgroup(const g1_affine& p) {
  if (p.is_inf()) return true;
  const uint32_t w[12] = G1_CUBE_ROOT;
  const g1_affine phi{p.X * fp_t::from_limbs(w), p.Y};
  return equals_affine(mul_bits(phi, SEED_SQ_HI, SEED_SQ_LO), p.X, p.Y.neg());
}

__device__ bool in_subgroup(const g2_affine& p) {
  if (p.is_inf()) return true;
  const uint32_t x1[12] = G2_PSI_X1, y0[12] = G2_PSI_Y0, y1[12] = G2_PSI_Y1;
  const fp2_t u{fp_t::zero(), fp_t::from_limbs(x1)}, v{fp_t::from_limbs(y0), fp_t::from_limbs(y1)};
  const fp2_t px{p.X.c0, p.X.c1.neg()}, py{p.Y.c0, p.Y.c1.neg()};  // conjugates
  return equals_affine(mul_bits(p, 0, SEED), px * u, (py * v).neg());
}

// bad[0] = the smallest i < n (chunk-local) whose point is outside the
// subgroup, left as it is when there is none.
template <class F>
__global__ void __launch_bounds__(128) k_subgroup(const affine_t<F>* __restrict__ pts, uint32_t n, uint32_t* bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (!in_subgroup(ldg_vec(pts + i))) atomicMin(bad, i);
}

template <class F>
int64_t subgroup_first_bad(const affine_t<F>* host_points, uint64_t n) {
  if (n == 0) return -1;
  if (!host_points) throw_invalid("subgroup check: nil points");
  const uint64_t chunk = std::min(n, SG_CHUNK);
  const uint64_t chunks = ceil_div(n, chunk);
  stream_guard s0, s1;
  cudaStream_t st[2] = {s0.s, s1.s};
  dev_alloc buf0(chunk * sizeof(affine_t<F>), st[0]), buf1(chunk * sizeof(affine_t<F>), st[1]);
  dev_alloc bad(chunks * sizeof(uint32_t), st[0]);
  CK(cudaMemsetAsync(bad.p, 0xff, chunks * sizeof(uint32_t), st[0]));
  CK(cudaStreamSynchronize(st[0]));  // the marks are set before either stream's test
  affine_t<F>* buf[2] = {buf0.as<affine_t<F>>(), buf1.as<affine_t<F>>()};
  for (uint64_t k = 0; k < chunks; k++) {
    // stream k&1 copies chunk k into its buffer after its previous test
    // (stream order) while the other stream tests chunk k-1
    const uint64_t off = k * chunk, m = std::min(chunk, n - off);
    CK(cudaMemcpyAsync(buf[k & 1], host_points + off, m * sizeof(affine_t<F>), cudaMemcpyHostToDevice, st[k & 1]));
    C2G_LAUNCH(k_subgroup<F>, grid_for(m, 128), 128, 0, st[k & 1], buf[k & 1], (uint32_t)m, bad.as<uint32_t>() + k);
    CK_LAUNCH("k_subgroup");
  }
  CK(cudaStreamSynchronize(st[1]));  // every test done before the marks are read
  std::vector<uint32_t> marks(chunks);
  CK(cudaMemcpyAsync(marks.data(), bad.p, chunks * sizeof(uint32_t), cudaMemcpyDeviceToHost, st[0]));
  CK(cudaStreamSynchronize(st[0]));
  for (uint64_t k = 0; k < chunks; k++)
    if (marks[k] != 0xffffffffu) return (int64_t)(k * chunk + marks[k]);
  return -1;
}

template int64_t subgroup_first_bad<fp_t>(const affine_t<fp_t>*, uint64_t);
template int64_t subgroup_first_bad<fp2_t>(const affine_t<fp2_t>*, uint64_t);

}  // namespace c2g
