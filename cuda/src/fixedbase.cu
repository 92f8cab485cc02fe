#include "fixedbase.cuh"

#include <algorithm>

#include "affine.cuh"
#include "digits.cuh"

namespace c2g {

constexpr uint32_t FB_BATCH = 16;          // points per thread (one inversion)
constexpr uint64_t FB_CHUNK = 1ull << 22;  // scalars per device round trip

// Thread t computes points [t·FB_BATCH, (t+1)·FB_BATCH) of the chunk.
template <class F>
__global__ void __launch_bounds__(128) k_fixed_base(const affine_t<F>* __restrict__ table, uint32_t c, uint32_t windows,
                                                    const fr_t* __restrict__ scalars, uint64_t n, affine_t<F>* out) {
  const uint64_t first = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) * FB_BATCH;
  if (first >= n) return;
  const int32_t half = 1 << (c - 1);
  xyzz_t<F> p[FB_BATCH];
  for (uint32_t k = 0; k < FB_BATCH; k++) {
    p[k] = xyzz_t<F>::inf();
    if (first + k >= n) continue;
    const fr_t s = scalars[first + k].from_mont();
    int32_t carry = 0;
    for (uint32_t w = 0; w < windows; w++) {
      const int32_t d = signed_digit_step(s.v, c, w, carry);
      if (d > 0)
        p[k].add_affine(table[(uint64_t)w * half + (d - 1)]);
      else if (d < 0)
        p[k].add_affine(table[(uint64_t)w * half + (-d - 1)].neg());
    }
  }
  batch_to_affine(p, out, first, n);
}

template <class F>
void fixed_base_mul(const affine_t<F>* table, uint32_t c, uint32_t windows, const fr_t* scalars, uint64_t n,
                    affine_t<F>* out) {
  if (c < 2 || c > 24) throw_invalid(strprintf("fixed base: window of %u bits (2 to 24)", c));
  if ((uint64_t)windows * c < 256) throw_invalid(strprintf("fixed base: %u windows of %u bits do not cover 256 bits", windows, c));
  if (n == 0) return;
  if (!table || !scalars || !out) throw_invalid("fixed base: nil array");
  const uint64_t rows = (uint64_t)windows << (c - 1);
  const uint64_t chunk = std::min(n, FB_CHUNK);
  stream_guard sg;
  dev_alloc tab(rows * sizeof(affine_t<F>), sg.s);
  dev_alloc sc(chunk * sizeof(fr_t), sg.s);
  dev_alloc res(chunk * sizeof(affine_t<F>), sg.s);
  CK(cudaMemcpyAsync(tab.p, table, rows * sizeof(affine_t<F>), cudaMemcpyHostToDevice, sg.s));
  for (uint64_t off = 0; off < n; off += chunk) {
    const uint64_t m = std::min(chunk, n - off);
    CK(cudaMemcpyAsync(sc.p, scalars + off, m * sizeof(fr_t), cudaMemcpyHostToDevice, sg.s));
    const uint64_t threads = (m + FB_BATCH - 1) / FB_BATCH;
    C2G_LAUNCH(k_fixed_base<F>, (uint32_t)((threads + 127) / 128), 128, 0, sg.s, tab.as<affine_t<F>>(), c, windows,
               sc.as<fr_t>(), m, res.as<affine_t<F>>());
    CK_LAUNCH("k_fixed_base");
    CK(cudaMemcpyAsync(out + off, res.p, m * sizeof(affine_t<F>), cudaMemcpyDeviceToHost, sg.s));
  }
  CK(cudaStreamSynchronize(sg.s));
}

template void fixed_base_mul<fp_t>(const affine_t<fp_t>*, uint32_t, uint32_t, const fr_t*, uint64_t, affine_t<fp_t>*);
template void fixed_base_mul<fp2_t>(const affine_t<fp2_t>*, uint32_t, uint32_t, const fr_t*, uint64_t, affine_t<fp2_t>*);

}  // namespace c2g
