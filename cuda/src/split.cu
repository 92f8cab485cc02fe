#include "split.cuh"

#include "affine.cuh"

namespace c2g {

constexpr uint32_t SPLIT_BATCH = 16;  // points per thread (one inversion)

// Thread t doubles points [t·SPLIT_BATCH, (t+1)·SPLIT_BATCH) shift times.
template <class F>
__global__ void __launch_bounds__(128) k_split_shift(const affine_t<F>* __restrict__ in, uint64_t n, uint32_t shift,
                                                     affine_t<F>* out) {
  const uint64_t first = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) * SPLIT_BATCH;
  if (first >= n) return;
  xyzz_t<F> p[SPLIT_BATCH];
  for (uint32_t k = 0; k < SPLIT_BATCH; k++) {
    p[k] = xyzz_t<F>::inf();
    if (first + k >= n) continue;
    p[k] = xyzz_t<F>::from_affine(ldg_vec(in + first + k));
    for (uint32_t d = 0; d < shift; d++) p[k] = p[k].dbl();
  }
  batch_to_affine(p, out, first, n);
}

template <class F>
void msm_split_bases(const affine_t<F>* in, uint64_t n, uint32_t shift, affine_t<F>* out, cudaStream_t st) {
  if (n == 0) return;
  if (!in || !out) throw_invalid("split bases: nil array");
  CK(cudaMemcpyAsync(out, in, n * sizeof(affine_t<F>), cudaMemcpyDeviceToDevice, st));
  const uint64_t threads = (n + SPLIT_BATCH - 1) / SPLIT_BATCH;
  C2G_LAUNCH(k_split_shift<F>, (uint32_t)((threads + 127) / 128), 128, 0, st, in, n, shift, out + n);
  CK_LAUNCH("k_split_shift");
}

template void msm_split_bases<fp_t>(const affine_t<fp_t>*, uint64_t, uint32_t, affine_t<fp_t>*, cudaStream_t);

}  // namespace c2g
