// Device-side pseudo-random scalars and points (benchmarks and tests).
#pragma once
#include "common.cuh"
#include "curve.cuh"

namespace c2g {
// n fr.Elements (Montgomery): a share frac01 of them 0 or 1, the rest
// uniform below 2^254.
void random_fr(fr_t* out, uint64_t n, uint64_t seed, double frac01, cudaStream_t st);
// n distinct points t1[i % 1024] + t2[i / 1024] of random multiples of the
// generator; synchronizes st.
template <class F>
void random_points(affine_t<F>* out, uint64_t n, uint64_t seed, cudaStream_t st);
}  // namespace c2g
