// What the stand-alone probes in cuda/tools share: CK(call) prints a failed
// CUDA runtime call with its error and exits (include after the library's
// headers).
#pragma once
#include <cstdio>
#include <cstdlib>

#undef CK  // the library's own (common.cuh) throws; a probe just exits
#define CK(x)                                                  \
  do {                                                         \
    cudaError_t e_ = (x);                                      \
    if (e_ != cudaSuccess) {                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
      exit(1);                                                 \
    }                                                          \
  } while (0)
