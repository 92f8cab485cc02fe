// Split bases for the MSM (msm.cuh, step 2''): the second copy 2^shift · P
// of a base array, made on the device once per key (the H query of a
// resident key, prover.cu) or per call (c2g_msm with C2G_MSM_SPLIT=on).
#pragma once
#include "common.cuh"
#include "curve.cuh"

namespace c2g {

// out[i] = in[i] and out[n + i] = 2^shift · in[i] for i < n (affine,
// canonical, infinity as (0, 0)), on stream st; out holds 2n points and
// must not overlap in. A point costs shift doublings and a share of one
// inversion per batch of SPLIT_BATCH.
template <class F>
void msm_split_bases(const affine_t<F>* in, uint64_t n, uint32_t shift, affine_t<F>* out, cudaStream_t st);

}  // namespace c2g
