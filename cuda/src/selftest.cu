// Device side of c2g_selftest: one thread per element.
#include "common.cuh"
#include "selftest.cuh"

namespace {
__global__ void k_selftest(int op, const uint8_t* in0, const uint8_t* in1, uint8_t* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    c2g::selftest_op(op, in0, in1, out, i);
}
}  // namespace

void c2g_selftest_launch(int op, const uint8_t* in0, const uint8_t* in1, uint8_t* out, uint64_t n, cudaStream_t st) {
  uint64_t blocks = (n + 127) / 128;
  if (blocks > 4096) blocks = 4096;
  C2G_LAUNCH(k_selftest, (uint32_t)blocks, 128, 0, st, op, in0, in1, out, n);
  CK_LAUNCH("k_selftest");
}
