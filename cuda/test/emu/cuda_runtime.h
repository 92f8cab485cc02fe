// CPU emulation of the slice of the CUDA runtime that libc2groth16 uses, so
// the library's own kernels and host code build with g++ and run in CI
// (cuda/build.sh emulator). Not a general CUDA emulator: blocks run one after
// another on the calling thread; threads of kernels launched with
// C2G_LAUNCH_SYNC (those using __syncthreads or warp collectives) run as
// fibers, the others as a plain loop. Streams and events are synchronous.
// Memory is host memory; cudaMemGetInfo reports a fixed total minus what is
// allocated.
#pragma once
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#define C2G_EMULATOR 1

// ---- keywords ----------------------------------------------------------------
#define __global__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#define __constant__
#define __shared__ static thread_local
#define __forceinline__ inline
// Empty, not __attribute__((noinline)): libstdc++ 13 spells its own
// attribute __attribute__((__noinline__)), which that definition would break
// (seen with the device machine's g++); inlining is irrelevant here.
#define __noinline__
#define __launch_bounds__(...)

// ---- types ---------------------------------------------------------------------
struct uint3 {
  uint32_t x = 0, y = 0, z = 0;
};
struct uint4 {
  uint32_t x, y, z, w;
};
struct dim3 {
  uint32_t x = 1, y = 1, z = 1;
  dim3() = default;
  dim3(uint32_t a, uint32_t b = 1, uint32_t c = 1) : x(a), y(b), z(c) {}
};

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorHostMemoryAlreadyRegistered = 712,
};
typedef struct c2g_emu_stream* cudaStream_t;
typedef struct c2g_emu_event* cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
#define cudaStreamNonBlocking 1
#define cudaEventDisableTiming 2
#define cudaHostRegisterDefault 0
#define cudaHostRegisterPortable 1
#define cudaHostRegisterMapped 2

struct cudaDeviceProp {
  char name[256];
  int multiProcessorCount;
  int major, minor;
};

namespace c2g_emu {

constexpr uint64_t TOTAL_MEMORY = 64ull << 30;

struct state {
  std::mutex mu;
  std::map<void*, size_t> allocs;
  uint64_t used = 0;
};
inline state& st() {
  static state s;
  return s;
}

inline void* alloc(size_t n) {
  void* p = nullptr;
  if (posix_memalign(&p, 256, n ? n : 1) != 0) return nullptr;
  std::lock_guard<std::mutex> lk(st().mu);
  st().allocs[p] = n;
  st().used += n;
  return p;
}
inline void release(void* p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lk(st().mu);
    auto it = st().allocs.find(p);
    if (it != st().allocs.end()) {
      st().used -= it->second;
      st().allocs.erase(it);
    }
  }
  free(p);
}

// Per-OS-thread execution state of the running kernel.
struct exec {
  uint3 tid, bid;
  dim3 bdim, gdim;
  void* dsmem = nullptr;
  bool sync_mode = false;
  const char* kernel = "";
  // fibers (sync mode)
  struct fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    int state;  // 0 runnable, 1 at block barrier, 2 at warp collective, 3 done
    uint32_t value, result;
    int op;
  };
  std::vector<fiber> fibers;
  ucontext_t sched;
  int cur = -1;
  std::function<void()> body;
};
inline exec& ex() {
  static thread_local exec e;
  return e;
}

[[noreturn]] inline void fatal(const char* what) {
  fprintf(stderr, "c2g emulator: kernel %s: %s\n", ex().kernel, what);
  abort();
}

inline void fiber_entry() {
  exec& e = ex();
  e.body();
  e.fibers[e.cur].state = 3;
  swapcontext(&e.fibers[e.cur].ctx, &e.sched);
}

inline void yield_to_scheduler() {
  exec& e = ex();
  swapcontext(&e.fibers[e.cur].ctx, &e.sched);
}

inline void syncthreads() {
  exec& e = ex();
  if (!e.sync_mode) fatal("__syncthreads in a kernel launched without C2G_LAUNCH_SYNC");
  e.fibers[e.cur].state = 1;
  yield_to_scheduler();
}

// op: 0 ballot, 1 add, 2 max
inline uint32_t warp_collective(int op, uint32_t v) {
  exec& e = ex();
  if (!e.sync_mode) fatal("warp collective in a kernel launched without C2G_LAUNCH_SYNC");
  auto& f = e.fibers[e.cur];
  f.state = 2;
  f.op = op;
  f.value = v;
  yield_to_scheduler();
  return f.result;
}

// Runs one block's threads as fibers until all finish.
inline void run_block_fibers(uint32_t nthreads) {
  exec& e = ex();
  const size_t stack = 256 * 1024;
  if (e.fibers.size() < nthreads) e.fibers.resize(nthreads);
  for (uint32_t t = 0; t < nthreads; t++) {
    auto& f = e.fibers[t];
    if (f.stack.size() < stack) f.stack.resize(stack);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = stack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, (void (*)())fiber_entry, 0);
    f.state = 0;
  }
  for (;;) {
    bool progressed = false;
    for (uint32_t t = 0; t < nthreads; t++) {
      if (e.fibers[t].state != 0) continue;
      e.cur = (int)t;
      e.tid = uint3{t, 0, 0};
      swapcontext(&e.sched, &e.fibers[t].ctx);
      progressed = true;
    }
    // release warps whose live lanes all wait at a collective
    for (uint32_t w0 = 0; w0 < nthreads; w0 += 32) {
      uint32_t end = std::min(nthreads, w0 + 32);
      bool all = true, any = false;
      for (uint32_t t = w0; t < end; t++) {
        int s = e.fibers[t].state;
        if (s == 2) any = true;
        else if (s != 3) all = false;
      }
      if (!any || !all) continue;
      uint32_t ballot = 0, sum = 0, mx = 0;
      for (uint32_t t = w0; t < end; t++) {
        auto& f = e.fibers[t];
        if (f.state != 2) continue;
        if (f.value) ballot |= 1u << (t - w0);
        sum += f.value;
        mx = std::max(mx, f.value);
      }
      for (uint32_t t = w0; t < end; t++) {
        auto& f = e.fibers[t];
        if (f.state != 2) continue;
        f.result = f.op == 0 ? ballot : f.op == 1 ? sum : mx;
        f.state = 0;
        progressed = true;
      }
    }
    // release the block barrier when every live thread waits at it
    bool all_barrier = true, any_barrier = false, all_done = true;
    for (uint32_t t = 0; t < nthreads; t++) {
      int s = e.fibers[t].state;
      if (s != 3) all_done = false;
      if (s == 1) any_barrier = true;
      else if (s != 3) all_barrier = false;
    }
    if (all_done) return;
    if (any_barrier && all_barrier) {
      for (uint32_t t = 0; t < nthreads; t++)
        if (e.fibers[t].state == 1) e.fibers[t].state = 0;
      progressed = true;
    }
    if (!progressed) fatal("deadlock: threads wait at different barriers");
  }
}

template <class K, class... A>
void launch(bool sync, const char* name, K kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t, A... args) {
  exec& e = ex();
  if (block.y != 1 || block.z != 1 || grid.y != 1 || grid.z != 1) fatal("only 1-D launches are emulated");
  if (block.x == 0 || block.x > 1024) fatal("bad block size");
  e.kernel = name;
  e.gdim = grid;
  e.bdim = block;
  e.sync_mode = sync;
  std::vector<char> sm(smem + 16);
  e.dsmem = sm.data();
  e.body = [&]() { kernel(args...); };
  for (uint32_t b = 0; b < grid.x; b++) {
    e.bid = uint3{b, 0, 0};
    if (sync) {
      run_block_fibers(block.x);
    } else {
      for (uint32_t t = 0; t < block.x; t++) {
        e.tid = uint3{t, 0, 0};
        kernel(args...);
      }
    }
  }
  e.sync_mode = false;
  e.body = nullptr;
}

inline void* dynamic_smem() { return ex().dsmem; }

}  // namespace c2g_emu

#define threadIdx (::c2g_emu::ex().tid)
#define blockIdx (::c2g_emu::ex().bid)
#define blockDim (::c2g_emu::ex().bdim)
#define gridDim (::c2g_emu::ex().gdim)

// ---- device intrinsics -----------------------------------------------------------
inline void __syncthreads() { c2g_emu::syncthreads(); }
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
inline uint32_t __brev(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
inline int __popc(uint32_t x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline uint32_t __ballot_sync(uint32_t, int p) { return c2g_emu::warp_collective(0, p ? 1u : 0u); }
inline uint32_t __reduce_add_sync(uint32_t, uint32_t v) { return c2g_emu::warp_collective(1, v); }
inline uint32_t __reduce_max_sync(uint32_t, uint32_t v) { return c2g_emu::warp_collective(2, v); }
inline uint32_t atomicAdd(uint32_t* p, uint32_t v) {
  uint32_t o = *p;
  *p = o + v;
  return o;
}
inline uint32_t atomicMin(uint32_t* p, uint32_t v) {
  uint32_t o = *p;
  if (v < o) *p = v;
  return o;
}
inline uint32_t atomicMax(uint32_t* p, uint32_t v) {
  uint32_t o = *p;
  if (v > o) *p = v;
  return o;
}
using std::max;
using std::min;

// ---- runtime API -------------------------------------------------------------------
inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidValue: return "invalid argument";
    default: return "emulated error";
  }
}
inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    default: return "cudaErrorUnknown";
  }
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  memset(p, 0, sizeof(*p));
  snprintf(p->name, sizeof(p->name), "c2g CPU emulator");
  p->multiProcessorCount = 1;
  p->major = 9;
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* fr, size_t* total) {
  std::lock_guard<std::mutex> lk(c2g_emu::st().mu);
  *total = c2g_emu::TOTAL_MEMORY;
  *fr = c2g_emu::TOTAL_MEMORY - c2g_emu::st().used;
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** p, size_t n) {
  *p = c2g_emu::alloc(n);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
// The stream-ordered pool: the emulator's allocations are plain host memory
// freed at once, so its pool keeps nothing: reserved and used read 0 and
// the release threshold is only remembered.
typedef struct c2g_emu_mempool* cudaMemPool_t;
enum cudaMemPoolAttr {
  cudaMemPoolAttrReleaseThreshold = 4,
  cudaMemPoolAttrReservedMemCurrent = 5,
  cudaMemPoolAttrUsedMemCurrent = 7,
};
inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int) {
  *pool = nullptr;
  return cudaSuccess;
}
inline uint64_t& c2g_emu_pool_threshold() {
  static uint64_t v = 0;
  return v;
}
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr a, void* v) {
  if (a == cudaMemPoolAttrReleaseThreshold) c2g_emu_pool_threshold() = *(uint64_t*)v;
  return cudaSuccess;
}
inline cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, cudaMemPoolAttr a, void* v) {
  *(uint64_t*)v = a == cudaMemPoolAttrReleaseThreshold ? c2g_emu_pool_threshold() : 0;
  return cudaSuccess;
}
inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }
inline cudaError_t cudaFree(void* p) {
  c2g_emu::release(p);
  return cudaSuccess;
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
  if (n) memmove(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) {
  return cudaMemcpy(d, s, n, k);
}
inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) {
  if (n) memset(d, v, n);
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = (cudaStream_t)c2g_emu::alloc(1);
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  c2g_emu::release(s);
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }
struct c2g_emu_event {
  double t;
};
inline double c2g_emu_now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new c2g_emu_event{0};
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) { return cudaEventCreate(e); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  e->t = c2g_emu_now_ms();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = (float)(b->t - a->t);
  return cudaSuccess;
}
inline cudaError_t cudaHostRegister(void*, size_t, unsigned) { return cudaSuccess; }
// device memory is host memory: a mapped host range is its own device address
inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned) {
  *d = h;
  return cudaSuccess;
}
#define cudaHostAllocDefault 0
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) {
  *p = malloc(n);
  return *p || !n ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFreeHost(void* p) {
  free(p);
  return cudaSuccess;
}
inline cudaError_t cudaHostUnregister(void*) { return cudaSuccess; }
