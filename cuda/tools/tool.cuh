// What the stand-alone probes in cuda/tools share: CK(call) prints a failed
// CUDA runtime call with its error and exits (include after the library's
// headers); gpu_timer times launches with CUDA events.
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

// gpu_timer{}(launch) runs launch() between two events on the default
// stream and returns the milliseconds between them (launch errors exit).
struct gpu_timer {
  cudaEvent_t e0, e1;
  gpu_timer() {
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
  }
  ~gpu_timer() {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  gpu_timer(const gpu_timer&) = delete;
  gpu_timer& operator=(const gpu_timer&) = delete;
  template <class Launch>
  double operator()(Launch launch) {
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
  }
};
