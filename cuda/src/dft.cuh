// The discrete Fourier transform of G1 points ("group NTT"): out_i =
// sum_j w^(ij) in_j (w^(-ij) for the inverse, no 1/n), w the primitive n-th
// root of unity of gnark-crypto's fft.Domain, n = 2^log_n <= 2^27. It turns
// a ceremony's H query into its coset-Lagrange form (docs/cuda.md, "Group
// DFT").
#pragma once
#include "common.cuh"
#include "curve.cuh"

namespace c2g {

constexpr uint32_t DFT_MAX_LOG = 27;

// Transforms n = 2^log_n affine points in host memory (gnark's G1Affine
// layout, infinity as (0, 0)) in place: radix-2 decimation in frequency on
// XYZZ points in device memory, one global pass per stage, each twiddle a
// GLV scalar multiplication (c2g_dft_g1). ctl may be null. Synchronizes.
// scale: nullptr, or {c, x} (Montgomery): input point i is first multiplied
// by c x^i.
void dft_g1(g1_affine* points, uint32_t log_n, bool inverse, const fr_t* scale, c2g_dft_control* ctl,
            c2g_dft_stats* stats);

}  // namespace c2g
