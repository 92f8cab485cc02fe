#include "staging.cuh"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace c2g {
namespace {

constexpr uint64_t MAX_CHUNK = 16ull << 20;
constexpr uint64_t MIN_CHUNK = 4096;
constexpr uint64_t DIRECT_CHUNK = 256ull << 20;  // one cudaMemcpyAsync from registered memory

// Host ranges registered through c2g_host_register: start -> bytes.
std::mutex g_reg_mu;
std::map<uintptr_t, uint64_t> g_registered;

struct lane {
  cudaStream_t stream = nullptr;
  void* buf[2] = {};
  cudaEvent_t done[2] = {};  // the DMA out of buf[i] finished
};

struct stager {
  std::mutex mu;  // one upload at a time per device
  std::vector<lane> lanes;
  ~stager() {
    for (lane& l : lanes) {
      if (l.stream) cudaStreamSynchronize(l.stream);
      for (int i = 0; i < 2; i++) {
        if (l.buf[i]) cudaFreeHost(l.buf[i]);
        if (l.done[i]) cudaEventDestroy(l.done[i]);
      }
      if (l.stream) cudaStreamDestroy(l.stream);
    }
  }
};

uint32_t lane_count() {
  const uint32_t hw = std::thread::hardware_concurrency();
  return (uint32_t)env_int("C2G_UPLOAD_THREADS", 1, 64, (int)std::min(8u, std::max(1u, hw / 2)));
}

void add_lanes(stager& s, uint32_t want) {
  while (s.lanes.size() < want) {
    s.lanes.emplace_back();
    lane& l = s.lanes.back();
    CK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
      CK(cudaHostAlloc(&l.buf[i], MAX_CHUNK, cudaHostAllocDefault));
      CK(cudaEventCreateWithFlags(&l.done[i], cudaEventDisableTiming));
    }
  }
}

}  // namespace

void host_register(void* p, uint64_t bytes) {
  if (!p) throw_invalid("host register: nil pointer");
  if (bytes == 0) throw_invalid("host register: zero bytes");
  const uintptr_t lo = (uintptr_t)p;
  if (lo + bytes < lo) throw_invalid("host register: range wraps around");
  std::lock_guard<std::mutex> lk(g_reg_mu);
  auto it = g_registered.upper_bound(lo);  // first range starting above lo
  if (it != g_registered.end() && it->first < lo + bytes)
    throw_invalid(strprintf("host register: [%p, +%llu) overlaps the range registered at %p", p,
                            (unsigned long long)bytes, (void*)it->first));
  if (it != g_registered.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second > lo)
      throw_invalid(strprintf("host register: [%p, +%llu) overlaps the range registered at %p", p,
                              (unsigned long long)bytes, (void*)prev->first));
  }
  CK(cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
  g_registered[lo] = bytes;
}

void host_unregister(void* p) {
  if (!p) throw_invalid("host unregister: nil pointer");
  std::lock_guard<std::mutex> lk(g_reg_mu);
  auto it = g_registered.find((uintptr_t)p);
  if (it == g_registered.end())
    throw_invalid(strprintf("host unregister: %p was not registered with c2g_host_register", p));
  // forgotten first: whatever the driver says, the caller frees the memory next
  g_registered.erase(it);
  CK(cudaHostUnregister(p));
}

// The registered range holding [p, p+bytes) wholly: its start, or 0.
static uintptr_t registered_range(const void* p, uint64_t bytes) {
  if (!p || bytes == 0) return 0;
  const uintptr_t lo = (uintptr_t)p;
  std::lock_guard<std::mutex> lk(g_reg_mu);
  auto it = g_registered.upper_bound(lo);
  if (it == g_registered.begin()) return 0;
  --it;  // the last range starting at or below lo
  return lo - it->first <= it->second && bytes <= it->second - (lo - it->first) ? it->first : 0;
}

bool host_registered(const void* p, uint64_t bytes) { return registered_range(p, bytes) != 0; }

const void* host_mapped(const void* p, uint64_t bytes) {
  const uintptr_t base = registered_range(p, bytes);
  if (!base) return nullptr;
  void* dev = nullptr;
  CK(cudaHostGetDevicePointer(&dev, (void*)base, 0));
  return (const char*)dev + ((uintptr_t)p - base);
}

upload_stats staged_upload(int device, const std::vector<h2d_copy>& jobs) {
  upload_stats st;
  std::vector<h2d_copy> direct, staged;
  for (const h2d_copy& j : jobs) {
    if (j.bytes == 0) continue;
    if (host_registered(j.src, j.bytes)) {
      direct.push_back(j);
      st.direct_bytes += j.bytes;
    } else {
      staged.push_back(j);
      st.staged_bytes += j.bytes;
    }
  }
  const uint64_t total = st.staged_bytes;
  if (total + st.direct_bytes == 0) return st;
  stager& s = per_device<stager>(device);  // lanes added under its lock
  std::lock_guard<std::mutex> lk(s.mu);
  const uint32_t n_lanes = lane_count();
  add_lanes(s, n_lanes);
  // Registered sources: DMA straight from them, large chunks spread over the
  // lanes' streams, issued before the staged copies start (they queue behind
  // these on the same streams). Every stream that got one is synchronized
  // before returning, also when something fails.
  uint32_t direct_streams = 0;
  auto sync_direct = [&] {
    for (uint32_t i = 0; i < direct_streams; i++) cudaStreamSynchronize(s.lanes[i].stream);
  };
  if (!direct.empty()) {
    try {
      CK(cudaSetDevice(device));
      uint32_t k = 0;
      for (const h2d_copy& j : direct)
        for (uint64_t off = 0; off < j.bytes; off += DIRECT_CHUNK) {
          const uint32_t id = k++ % n_lanes;
          direct_streams = std::max(direct_streams, id + 1);
          CK(cudaMemcpyAsync((char*)j.dst + off, (const char*)j.src + off, std::min(DIRECT_CHUNK, j.bytes - off),
                             cudaMemcpyHostToDevice, s.lanes[id].stream));
        }
    } catch (...) {
      sync_direct();
      throw;
    }
  }
  if (total == 0) {
    for (uint32_t i = 0; i < direct_streams; i++) CK(cudaStreamSynchronize(s.lanes[i].stream));
    return st;
  }
  // chunks small enough that every lane gets a few, large enough to keep
  // the per-copy overhead small
  const uint64_t chunk = std::min(MAX_CHUNK, std::max(MIN_CHUNK, total / (4 * (uint64_t)n_lanes)));
  std::vector<h2d_copy> chunks;
  for (const h2d_copy& j : staged)
    for (uint64_t off = 0; off < j.bytes; off += chunk)
      chunks.push_back({(char*)j.dst + off, (const char*)j.src + off, std::min(chunk, j.bytes - off)});
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errs(n_lanes);
  auto run = [&](uint32_t id) {
    try {
      CK(cudaSetDevice(device));
      lane& l = s.lanes[id];
      for (uint32_t n = 0;; n++) {
        const size_t i = next.fetch_add(1);
        if (i >= chunks.size() || failed.load()) break;
        const int b = n & 1;
        CK(cudaEventSynchronize(l.done[b]));  // buf[b]'s last DMA is over
        memcpy(l.buf[b], chunks[i].src, chunks[i].bytes);
        CK(cudaMemcpyAsync(chunks[i].dst, l.buf[b], chunks[i].bytes, cudaMemcpyHostToDevice, l.stream));
        CK(cudaEventRecord(l.done[b], l.stream));
      }
      CK(cudaStreamSynchronize(l.stream));
    } catch (...) {
      failed.store(true);
      errs[id] = std::current_exception();
      cudaStreamSynchronize(s.lanes[id].stream);  // nothing may still read the buffers
    }
  };
  std::vector<std::thread> threads;
  try {
    for (uint32_t id = 1; id < n_lanes; id++) threads.emplace_back(run, id);
  } catch (...) {
    // a thread that could not start is a missing lane: the running lanes
    // take every chunk
  }
  run(0);
  for (std::thread& t : threads) t.join();
  for (std::exception_ptr& e : errs)
    if (e) {
      sync_direct();
      std::rethrow_exception(e);
    }
  // a lane whose thread did not start still has its direct copies queued
  for (uint32_t i = 0; i < direct_streams; i++) CK(cudaStreamSynchronize(s.lanes[i].stream));
  return st;
}

}  // namespace c2g
