// Error handling, device memory and launch helpers shared by the library's
// translation units. Internally failures are C++ exceptions (c2g::error);
// the C ABI entry points (api.cu) catch everything and turn it into a
// c2g_error, so nothing escapes into the caller and nothing aborts.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "../include/c2g.h"

// Kernel launches go through these macros so that the same sources also
// build for the CPU emulator (cuda/test/emu, which defines C2G_EMULATOR):
// C2G_LAUNCH_SYNC marks kernels that use __syncthreads or warp collectives.
#if defined(C2G_EMULATOR)
#define C2G_LAUNCH(k, g, b, s, st, ...) ::c2g_emu::launch(false, #k, k, dim3(g), dim3(b), (size_t)(s), st, __VA_ARGS__)
#define C2G_LAUNCH_SYNC(k, g, b, s, st, ...) \
  ::c2g_emu::launch(true, #k, k, dim3(g), dim3(b), (size_t)(s), st, __VA_ARGS__)
#define C2G_DYNAMIC_SMEM(T, name) T* name = (T*)::c2g_emu::dynamic_smem()
#else
#define C2G_LAUNCH(k, g, b, s, st, ...) k<<<g, b, s, st>>>(__VA_ARGS__)
#define C2G_LAUNCH_SYNC(k, g, b, s, st, ...) k<<<g, b, s, st>>>(__VA_ARGS__)
#define C2G_DYNAMIC_SMEM(T, name) extern __shared__ T name[]
#endif

namespace c2g {

struct error : std::runtime_error {
  int code;
  int cuda_code;
  error(int code_, int cuda_code_, const std::string& msg) : std::runtime_error(msg), code(code_), cuda_code(cuda_code_) {}
};

inline std::string strprintf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

[[noreturn]] inline void throw_invalid(const std::string& msg) { throw error(C2G_ERR_INVALID, 0, msg); }

// Tuning knobs read from the environment (benchmarks and tests; docs/cuda.md,
// "Tuning knobs"): unset or empty means the default; any other value that is
// not one of the knob's own is an INVALID error naming it, never a silent
// fallback to the default (a typo would otherwise measure the default).
// env_int: an integer in [lo, hi], else dflt when unset.
inline int env_int(const char* name, int lo, int hi, int dflt) {
  const char* env = getenv(name);
  if (!env || !*env) return dflt;
  char* end = nullptr;
  const long v = strtol(env, &end, 10);
  if (*end != 0 || v < lo || v > hi) throw_invalid(strprintf("%s=%s: want an integer in [%d, %d]", name, env, lo, hi));
  return (int)v;
}
// env_on_off: 1 for "on", 0 for "off", -1 when unset (or "auto" where
// allow_auto).
inline int env_on_off(const char* name, bool allow_auto) {
  const char* env = getenv(name);
  if (!env || !*env || (allow_auto && !strcmp(env, "auto"))) return -1;
  if (!strcmp(env, "on")) return 1;
  if (!strcmp(env, "off")) return 0;
  throw_invalid(strprintf("%s=%s: want %s", name, env, allow_auto ? "on, off or auto" : "on or off"));
}

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
  int code = (e == cudaErrorMemoryAllocation) ? C2G_ERR_OOM
             : (e == cudaErrorNoDevice || e == cudaErrorInvalidDevice || e == cudaErrorInsufficientDriver)
                 ? C2G_ERR_NO_DEVICE
                 : C2G_ERR_CUDA;
  throw error(code, (int)e,
              strprintf("%s: %s (%s) at %s:%d", what, cudaGetErrorString(e), cudaGetErrorName(e), file, line));
}

#define CK(call)                                                   \
  do {                                                             \
    cudaError_t e_ = (call);                                       \
    if (e_ != cudaSuccess) ::c2g::throw_cuda(e_, #call, __FILE__, __LINE__); \
  } while (0)

// Checks the launch of the kernel just queued.
#define CK_LAUNCH(name)                                            \
  do {                                                             \
    cudaError_t e_ = cudaGetLastError();                           \
    if (e_ != cudaSuccess) ::c2g::throw_cuda(e_, name, __FILE__, __LINE__); \
  } while (0)

inline uint32_t ceil_div_u32(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline uint64_t align_up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

// Grid for n threads of `threads` per block (n may exceed 2^31 only through
// grid-stride loops in the kernels; launches here keep n < 2^31 * threads).
inline dim3 grid_for(uint64_t n, uint32_t threads) {
  uint64_t b = ceil_div(n, threads);
  if (b == 0) b = 1;
  return dim3((uint32_t)b);
}

// Whole elements of global memory as 16-byte vectors: an fr_t (8 words),
// fp_t (12), affine point or XYZZ accumulator is otherwise loaded and stored
// one 32-bit word at a time (their alignment is that of uint32_t), which
// costs a warp 4x the L1 wavefronts of 16-byte accesses. The size of T is a
// multiple of 16 and p must be 16-byte aligned: every device array here
// starts 256-byte aligned (cudaMalloc, arena) and is indexed by element.
// ldg_vec reads through the read-only cache (data no thread of the kernel
// writes); ld_vec / st_vec are plain accesses (in-place kernels).
template <class T, bool READ_ONLY = false>
__device__ __forceinline__ T ld_vec(const T* p) {
  static_assert(sizeof(T) % 16 == 0, "size");
  T r;
  uint32_t* w = (uint32_t*)&r;
  const uint4* s = (const uint4*)p;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 16); i++) {
    const uint4 x = READ_ONLY ? __ldg(s + i) : s[i];
    w[4 * i] = x.x, w[4 * i + 1] = x.y, w[4 * i + 2] = x.z, w[4 * i + 3] = x.w;
  }
  return r;
}

template <class T>
__device__ __forceinline__ T ldg_vec(const T* p) {
  return ld_vec<T, true>(p);
}

template <class T>
__device__ __forceinline__ void st_vec(T* p, const T& v) {
  static_assert(sizeof(T) % 16 == 0, "size");
  const uint32_t* w = (const uint32_t*)&v;
  uint4* d = (uint4*)p;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 16); i++) {
    uint4 x;
    x.x = w[4 * i], x.y = w[4 * i + 1], x.z = w[4 * i + 2], x.w = w[4 * i + 3];
    d[i] = x;
  }
}

// An arena carves aligned regions out of one device allocation; its layout
// is planned on the host first (with base == nullptr) to learn the size.
struct arena {
  char* base = nullptr;
  uint64_t size = 0;
  uint64_t used = 0;
  void* take(uint64_t bytes) {
    uint64_t off = align_up(used, 256);
    used = off + bytes;
    if (base != nullptr && used > size)
      throw error(C2G_ERR_INTERNAL, 0, strprintf("arena overflow: %llu > %llu bytes", (unsigned long long)used, (unsigned long long)size));
    return base ? (void*)(base + off) : nullptr;
  }
  template <class T>
  T* take_n(uint64_t n) {
    return (T*)take(n * sizeof(T));
  }
};

// Stream-ordered device allocation freed on scope exit (no device-wide
// synchronization, unlike cudaFree).
struct dev_alloc {
  void* p = nullptr;
  cudaStream_t s = nullptr;
  dev_alloc() = default;
  dev_alloc(uint64_t bytes, cudaStream_t stream) : s(stream) {
    if (bytes) CK(cudaMallocAsync(&p, bytes, stream));
  }
  dev_alloc(const dev_alloc&) = delete;
  dev_alloc& operator=(const dev_alloc&) = delete;
  dev_alloc(dev_alloc&& o) noexcept : p(o.p), s(o.s) { o.p = nullptr; }
  dev_alloc& operator=(dev_alloc&& o) noexcept {
    release();
    p = o.p;
    s = o.s;
    o.p = nullptr;
    return *this;
  }
  void release() {
    if (p) cudaFreeAsync(p, s);
    p = nullptr;
  }
  ~dev_alloc() { release(); }
  template <class T>
  T* as() const {
    return (T*)p;
  }
};

// A stream owned for a scope.
struct stream_guard {
  cudaStream_t s = nullptr;
  stream_guard() { CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~stream_guard() {
    if (s) cudaStreamDestroy(s);
  }
  stream_guard(const stream_guard&) = delete;
  stream_guard& operator=(const stream_guard&) = delete;
};

// per_device<T>(device): the device's one T, made on first use (T's own
// members guard its state; this only guards the map).
template <class T>
T& per_device(int device) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<T>> all;
  std::lock_guard<std::mutex> lk(mu);
  std::unique_ptr<T>& p = all[device];
  if (!p) p.reset(new T);
  return *p;
}

struct event_pair {
  cudaEvent_t a = nullptr, b = nullptr;
  event_pair() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  ~event_pair() {
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
  }
  void start(cudaStream_t s) { CK(cudaEventRecord(a, s)); }
  void stop(cudaStream_t s) { CK(cudaEventRecord(b, s)); }
  float ms() {
    CK(cudaEventSynchronize(b));
    float m = 0;
    CK(cudaEventElapsedTime(&m, a, b));
    return m;
  }
};

// Cooperative cancellation flag checked between device steps.
struct cancel_flag {
  std::atomic<bool> flag{false};
  void check() const {
    if (flag.load(std::memory_order_relaxed)) throw error(C2G_ERR_CANCELLED, 0, "cancelled");
  }
};

}  // namespace c2g
