// Carry-chain primitives for multi-precision arithmetic.
//
// On the device each primitive is one PTX instruction and the carry lives in
// the hardware condition code (CC.CF), so a chain (an op that writes CC
// followed by ops that read it) must not be interleaved with another chain.
// On the host the carry is emulated in a per-thread variable, so exactly the
// same instruction sequences run (and are tested against gnark-crypto) on the
// CPU. Naming follows PTX: *_cc writes the carry, c* reads it.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define C2G_HD __host__ __device__ __forceinline__
#define C2G_DEV __device__ __forceinline__
#else
#define C2G_HD inline
#define C2G_DEV inline
#define __host__
#define __device__
#endif

namespace c2g {
namespace ptx {

#ifndef __CUDA_ARCH__
// Host emulation of CC.CF (one flag per host thread).
inline uint32_t& host_cf() {
  static thread_local uint32_t cf = 0;
  return cf;
}
#endif

C2G_HD uint32_t add_cc(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  uint64_t s = (uint64_t)a + b;
  host_cf() = (uint32_t)(s >> 32);
  return (uint32_t)s;
#endif
}

C2G_HD uint32_t addc_cc(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  uint64_t s = (uint64_t)a + b + host_cf();
  host_cf() = (uint32_t)(s >> 32);
  return (uint32_t)s;
#endif
}

C2G_HD uint32_t addc(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return a + b + host_cf();
#endif
}

C2G_HD uint32_t sub_cc(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  uint64_t d = (uint64_t)a - b;
  host_cf() = (uint32_t)(d >> 63);
  return (uint32_t)d;
#endif
}

C2G_HD uint32_t subc_cc(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  uint64_t d = (uint64_t)a - b - host_cf();
  host_cf() = (uint32_t)(d >> 63);
  return (uint32_t)d;
#endif
}

C2G_HD uint32_t subc(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return a - b - host_cf();
#endif
}

// r = lo(a*b) + c, carry out.
C2G_HD uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c;
  host_cf() = (uint32_t)(s >> 32);
  return (uint32_t)s;
#endif
}

C2G_HD uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c + host_cf();
  host_cf() = (uint32_t)(s >> 32);
  return (uint32_t)s;
#endif
}

C2G_HD uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  uint64_t s = (((uint64_t)a * b) >> 32) + c;
  host_cf() = (uint32_t)(s >> 32);
  return (uint32_t)s;
#endif
}

C2G_HD uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  uint64_t s = (((uint64_t)a * b) >> 32) + c + host_cf();
  host_cf() = (uint32_t)(s >> 32);
  return (uint32_t)s;
#endif
}

C2G_HD uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t r;
  asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return (uint32_t)((((uint64_t)a * b) >> 32) + c + host_cf());
#endif
}

C2G_HD uint32_t mul_lo(uint32_t a, uint32_t b) { return a * b; }

}  // namespace ptx
}  // namespace c2g
