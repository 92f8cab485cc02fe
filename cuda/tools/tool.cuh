// What the stand-alone probes in cuda/tools share: CK(call) prints a failed
// CUDA runtime call with its error and exits.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                  \
  do {                                                         \
    cudaError_t e_ = (x);                                      \
    if (e_ != cudaSuccess) {                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
      exit(1);                                                 \
    }                                                          \
  } while (0)
