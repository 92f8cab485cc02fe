// Prime-order subgroup membership of curve points (the parameter check a
// worker makes at start), with the endomorphism tests of Scott, "A note on
// group membership tests for G1, G2 and GT on BLS pairing-friendly curves"
// (2021), as gnark-crypto's IsInSubGroup states them (x = 0xd201000000010000,
// the BLS12-381 seed's absolute value):
//   G1: P is in G1 iff [x^2] phi(P) = -P, phi(x, y) = (w x, y), w the cube
//       root of unity in Fp that gnark names thirdRootOneG1;
//   G2: P is in G2 iff [x] P = -psi(P), psi(x, y) = (conj(x) u, conj(y) v).
// Both assume P on the curve (the caller checks that: it is cheap on the
// CPU). A point costs about 130 doublings and 17 mixed additions in G1, 63
// and 5 in G2, one thread each.
#pragma once
#include "common.cuh"
#include "curve.cuh"

namespace c2g {

// Index of the first of the n affine points (host memory, gnark layout,
// infinity as (0, 0)) outside the prime-order subgroup, or -1. The points go
// through the device in chunks on two streams (the copy of one chunk
// beside the test of the previous one). Synchronizes.
template <class F>
int64_t subgroup_first_bad(const affine_t<F>* host_points, uint64_t n);

}  // namespace c2g
