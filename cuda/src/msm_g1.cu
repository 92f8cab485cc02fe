// G1 instantiation of the MSM drivers.
#include "msm.cuh"
namespace c2g {
template void msm_run<fp_t>(const affine_t<fp_t>*, const fr_t*, uint64_t, msm_scratch<fp_t>&, xyzz_t<fp_t>*,
                            cudaStream_t, msm_info*, const cancel_flag*, const msm_split<fp_t>*);
template void msm_streamed<fp_t>(const affine_t<fp_t>*, const fr_t*, uint64_t, msm_scratch<fp_t>&, affine_t<fp_t>*,
                                 affine_t<fp_t>*, uint64_t, xyzz_t<fp_t>*, xyzz_t<fp_t>*, cudaStream_t, cudaStream_t,
                                 cudaEvent_t*, msm_info*, const cancel_flag*);
}  // namespace c2g
