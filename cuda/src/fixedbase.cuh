// Fixed-base scalar multiplication for the Groth16 setup: many scalars
// times one base point, from a precomputed comb table.
#pragma once
#include "common.cuh"
#include "curve.cuh"

namespace c2g {

// out[i] = scalars[i] · G (affine, infinity as (0, 0)) for i < n, all
// arrays in host memory: table[w·2^(c−1) + j] = (j+1)·2^(c·w)·G for w <
// windows, j < 2^(c−1); scalars are fr.Elements (Montgomery). Each scalar
// costs one mixed addition per non-zero signed c-bit digit and no doubling;
// results are converted to affine with one inversion per FB_BATCH points.
// Works through the scalars in device-sized batches; synchronizes.
template <class F>
void fixed_base_mul(const affine_t<F>* table, uint32_t c, uint32_t windows, const fr_t* scalars, uint64_t n,
                    affine_t<F>* out);

}  // namespace c2g
