// G2 instantiation of the MSM drivers.
#include "msm.cuh"
namespace c2g {
template void msm_run<fp2_t>(const affine_t<fp2_t>*, const fr_t*, uint64_t, msm_scratch<fp2_t>&,
                             xyzz_t<fp2_t>*, cudaStream_t, msm_info*, const cancel_flag*, const msm_split<fp2_t>*);
template void msm_streamed<fp2_t>(const affine_t<fp2_t>*, const fr_t*, uint64_t, msm_scratch<fp2_t>&,
                                  affine_t<fp2_t>*, affine_t<fp2_t>*, uint64_t, xyzz_t<fp2_t>*, xyzz_t<fp2_t>*,
                                  cudaStream_t, cudaStream_t, cudaEvent_t*, msm_info*, const cancel_flag*);
}  // namespace c2g
