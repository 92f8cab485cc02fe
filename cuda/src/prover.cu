// Groth16 partition prover: key residency, task memory plan, upload, the
// device pipeline (H, then the five MSMs) and results.
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "bits.cuh"
#include "prover.cuh"
#include "split.cuh"
#include "staging.cuh"

namespace c2g {

constexpr uint64_t MAX_DOMAIN_LOG = 27;
constexpr uint64_t STREAM_CHUNK = 1ull << 22;  // points per staging buffer (pinned residency)

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
static uint32_t log2_u64(uint64_t x) {
  uint32_t l = 0;
  while ((1ull << l) < x) l++;
  return l;
}
static uint64_t words_for(uint64_t bits) { return (bits + 63) / 64; }

// ---- kernels -------------------------------------------------------------------

__global__ void k_popc_words(const uint64_t* w, uint64_t nwords, uint32_t* cnt) {
  uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (i < nwords) cnt[i] = __popcll(w[i]);
  if (i == nwords) cnt[i] = 0;
}

// dst[dst_off + rank(i)] = src[i] for every i < n whose bit is set, where
// rank counts the set bits before i (pre = exclusive sums of word counts).
__global__ void k_dense_scatter(const fr_t* src, uint64_t n, const uint64_t* w, const uint32_t* pre, fr_t* dst,
                                uint64_t dst_off) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    uint64_t word = w[i >> 6];
    uint32_t b = (uint32_t)(i & 63);
    if ((word >> b) & 1) {
      uint64_t below = b ? (word & ((1ull << b) - 1)) : 0;
      st_vec(dst + dst_off + pre[i >> 6] + __popcll(below), ldg_vec(src + i));
    }
  }
}

// dst[i] = the value codes[i] names (C2G_CODE_*) for i < n; a value coded
// OTHER (or with any code above TWO) is read from src, host memory mapped
// into the device's address space, so only those cross the link. *others
// counts them.
__global__ void k_expand_codes(const uint8_t* codes, const fr_t* src, fr_t* dst, uint64_t n, uint32_t* others) {
  const uint32_t one[8] = FR_ONE, minus_one[8] = FR_MINUS_ONE, two[8] = FR_TWO;
  uint32_t cnt = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    const uint8_t c = codes[i];
    fr_t v;
    if (c == C2G_CODE_OTHER || c > C2G_CODE_TWO) {
      v = ld_vec(src + i);
      cnt++;
    } else {
#pragma unroll
      for (int k = 0; k < 8; k++)
        v.v[k] = c == C2G_CODE_ONE ? one[k] : c == C2G_CODE_MINUS_ONE ? minus_one[k] : c == C2G_CODE_TWO ? two[k] : 0u;
    }
    st_vec(dst + i, v);
  }
  cnt = __reduce_add_sync(0xffffffffu, cnt);
  if ((threadIdx.x & 31) == 0 && cnt) atomicAdd(others, cnt);
}

static dim3 grid_stride(uint64_t n) {
  uint64_t b = (n + 255) / 256;
  if (b > 132 * 64) b = 132 * 64;
  if (b == 0) b = 1;
  return dim3((uint32_t)b);
}

// ---- device memory pool ----------------------------------------------------------

// A task's memory comes from the device's stream-ordered pool. With the
// pool's default release threshold (0) every freed task is unmapped and the
// next one maps its ~20 GB afresh (at 32 GiB, most of a partition's
// upload time), so the pool keeps up to the largest
// task's bytes mapped between tasks: in steady state each task reuses the
// memory its predecessor freed. C2G_POOL_KEEP=off (environment, read per
// upload) gives every byte back when a task ends (threshold 0). key_create
// trims the pool before it allocates, and c2g_device_info_get counts the
// kept bytes as free, so neither a later key nor a residency decision
// loses them.
static std::mutex pool_mu;

void pool_keep(int device, uint64_t task_bytes) {
  const bool keep = env_on_off("C2G_POOL_KEEP", false) != 0;
  cudaMemPool_t pool;
  CK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::lock_guard<std::mutex> lk(pool_mu);
  uint64_t cur = 0;
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &cur));
  uint64_t want = keep ? (task_bytes > cur ? task_bytes : cur) : 0;
  if (want != cur) CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &want));
}

uint64_t pool_unused_bytes(int device) {
  cudaMemPool_t pool;
  CK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t reserved = 0, used = 0;
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return reserved > used ? reserved - used : 0;
}

static void pool_trim(int device) {
  cudaMemPool_t pool;
  CK(cudaDeviceGetDefaultMemPool(&pool, device));
  CK(cudaMemPoolTrimTo(pool, 0));
}

// ---- key -------------------------------------------------------------------------

struct query_ref {
  const char* name;
  uint64_t count;
  uint64_t point_size;
  const void* host;
  const c2g_buffer* buf;
};

// the H query's points: domain - 1 in bellperson's form, domain in the
// coset-Lagrange form
static uint64_t desc_h_count(const c2g_key_desc& d) {
  return d.h_form == C2G_H_COSET_LAGRANGE ? d.domain : d.domain - 1;
}

// a coset-Lagrange key reads no c (c2g.h)
static bool key_reads_c(const c2g_key* k) { return k->h_form != C2G_H_COSET_LAGRANGE; }

static void desc_queries(const c2g_key_desc& d, query_ref q[5]) {
  q[0] = {"h", desc_h_count(d), sizeof(g1_affine), d.h, d.h_buf};
  q[1] = {"l", d.num_aux, sizeof(g1_affine), d.l, d.l_buf};
  q[2] = {"a", d.num_a, sizeof(g1_affine), d.a, d.a_buf};
  q[3] = {"b_g1", d.num_b, sizeof(g1_affine), d.b_g1, d.b_g1_buf};
  q[4] = {"b_g2", d.num_b, sizeof(g2_affine), d.b_g2, d.b_g2_buf};
}

static void validate_desc(int device, const c2g_key_desc& d) {
  if (!is_pow2(d.domain) || d.domain < 2 || d.domain > (1ull << MAX_DOMAIN_LOG))
    throw_invalid(strprintf("key: domain %llu is not a power of two in [2, 2^%llu]", (unsigned long long)d.domain,
                            (unsigned long long)MAX_DOMAIN_LOG));
  if (d.h_form != C2G_H_MONOMIAL && d.h_form != C2G_H_COSET_LAGRANGE)
    throw_invalid(strprintf("key: unknown H form %d", d.h_form));
  if (d.num_inputs < 1) throw_invalid("key: no public inputs (input 0 is the constant one)");
  const uint64_t lim = 1ull << 31;
  if (d.num_inputs >= lim || d.num_aux >= lim || d.num_a >= lim || d.num_b >= lim)
    throw_invalid("key: a query has 2^31 points or more");
  if (d.num_a < d.num_inputs || d.num_a - d.num_inputs > d.num_aux)
    throw_invalid(strprintf("key: a has %llu points, want inputs (%llu) plus at most aux (%llu)",
                            (unsigned long long)d.num_a, (unsigned long long)d.num_inputs,
                            (unsigned long long)d.num_aux));
  if (d.num_b > d.num_inputs + d.num_aux)
    throw_invalid(strprintf("key: b has %llu points, more than inputs + aux", (unsigned long long)d.num_b));
  if (d.stream_chunk > (1ull << 30)) throw_invalid("key: stream chunk above 2^30 points");
  if (d.residency != C2G_RESIDENCY_DEVICE && d.residency != C2G_RESIDENCY_PINNED)
    throw_invalid(strprintf("key: unknown residency %d", d.residency));
  query_ref q[5];
  desc_queries(d, q);
  for (auto& x : q) {
    if (x.host && x.buf) throw_invalid(strprintf("key: query %s has both a host array and a buffer", x.name));
    if (x.count > 0 && !x.host && !x.buf) throw_invalid(strprintf("key: query %s (%llu points) has no data", x.name, (unsigned long long)x.count));
    if (x.buf) {
      if (d.residency != C2G_RESIDENCY_DEVICE) throw_invalid(strprintf("key: query %s is a device buffer but residency is pinned", x.name));
      if (x.buf->device != device) throw_invalid(strprintf("key: buffer of query %s is on device %d, not %d", x.name, x.buf->device, device));
      if (x.buf->bytes < x.count * x.point_size)
        throw_invalid(strprintf("key: buffer of query %s holds %llu bytes, needs %llu", x.name,
                                (unsigned long long)x.buf->bytes, (unsigned long long)(x.count * x.point_size)));
    }
  }
}

uint64_t key_device_bytes(const c2g_key_desc& d) {
  uint64_t bytes = ntt_tables::bytes_for(log2_u64(d.domain));
  if (d.residency == C2G_RESIDENCY_DEVICE) {
    query_ref q[5];
    desc_queries(d, q);
    for (auto& x : q)
      if (x.host) bytes += align_up(x.count * x.point_size, 256);
  }
  return bytes;
}

void key_free(c2g_key* k) {
  if (!k) return;
  k->tables.free();
  for (void* p : k->owned) cudaFree(p);
  for (void* p : k->registered) cudaHostUnregister(p);
  delete k;
}

static uint64_t planned_task_bytes(const c2g_key* k, bool overlap);

// key_decide_overlap sets k->overlap (the comment above plan_task) once
// the key's memory is taken: mode is C2G_OVERLAP (1 on, 0 off, -1 auto).
static void key_decide_overlap(c2g_key* k, int mode) {
  k->overlap = mode != 0 && k->residency == C2G_RESIDENCY_DEVICE;
  if (!k->overlap || mode == 1) return;
  const uint64_t need = planned_task_bytes(k, true);
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  k->overlap = free_b + pool_unused_bytes(k->device) >= 2 * need;
}

// key_shape copies what a task's memory plan depends on from d.
static void key_shape(c2g_key* k, int device, const c2g_key_desc& d) {
  k->device = device;
  k->domain = d.domain;
  k->log_n = log2_u64(d.domain);
  k->num_inputs = d.num_inputs;
  k->num_aux = d.num_aux;
  k->num_a = d.num_a;
  k->num_b = d.num_b;
  k->h_form = d.h_form;
  k->h_count = desc_h_count(d);
  k->residency = d.residency;
  k->stream_chunk = d.stream_chunk ? d.stream_chunk : STREAM_CHUNK;
}

// Split bases (msm.cuh, 2''): the H MSM runs half the windows over twice
// the points, on a copy of the H query doubled c·h times beside it (h =
// ceil(W / 2) of the window's W: msm_split_shift) — the
// 32 GiB shape's H MSM at c = 22 in 6 windows of 2^28 entries instead of
// 13 of 2^27 (faster: docs/perf/README.md, "CUDA kernels"), for 12.9 GB more of
// device memory. C2G_MSM_SPLIT=on|off|auto (environment, read by
// key_create): auto (the default) splits an H query of MSM_SPLIT_WIDE_MIN
// points or more when, with the copy made, the device still has room for
// two tasks laid out for it; on splits any (tests), off none. Device
// residency only. The copy is made on the device (shift doublings per
// point: a few seconds at 2^27), in a new array of 2 h_count points
// whose first half the H query moves into (a key-owned copy is freed, so
// auto counts only the new array's second half against the two tasks).
static void key_decide_split(c2g_key* k, cudaStream_t st) {
  const int mode = env_on_off("C2G_MSM_SPLIT", true);
  const uint64_t nh = k->h_count;
  if (mode == 0 || k->residency != C2G_RESIDENCY_DEVICE || nh == 0 || 2 * nh >= (1ull << 31)) return;
  if (mode < 0 && nh < MSM_SPLIT_WIDE_MIN) return;
  const uint32_t c = msm_split_c(nh);
  const uint64_t bytes = 2 * nh * sizeof(g1_affine);
  if (mode < 0) {
    // The copy is made beside the H query; a query the key uploaded itself
    // is freed after it, so what stays is the copy less that query, beside
    // two tasks laid out for the split (while the copy is made no task runs).
    bool own_h = false;
    for (const void* o : k->owned) own_h = own_h || o == (const void*)k->h;
    k->h_split_c = c;  // plan the tasks as split
    const uint64_t stays = (own_h ? bytes - nh * sizeof(g1_affine) : bytes) + 2 * planned_task_bytes(k, true);
    const uint64_t need = stays > bytes ? stays : bytes;
    k->h_split_c = 0;
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b + pool_unused_bytes(k->device) < need) return;
  }
  void* p = nullptr;
  CK(cudaMalloc(&p, bytes));
  k->owned.push_back(p);
  msm_split_bases<fp_t>(k->h, nh, msm_split_shift(c), (g1_affine*)p, st);
  CK(cudaStreamSynchronize(st));
  // a query the key uploaded itself is not needed twice
  for (auto it = k->owned.begin(); it != k->owned.end(); ++it)
    if (*it == (const void*)k->h) {
      CK(cudaFree(*it));
      k->owned.erase(it);
      break;
    }
  k->h = (const g1_affine*)p;
  k->h_split_c = c;
}

c2g_key* key_create(int device, const c2g_key_desc& d) {
  validate_desc(device, d);
  const int overlap = env_on_off("C2G_OVERLAP", true);
  std::unique_ptr<c2g_key, void (*)(c2g_key*)> k(new c2g_key(), key_free);
  key_shape(k.get(), device, d);
  pool_trim(device);  // memory the pool kept from earlier tasks goes to the key first
  stream_guard sg;
  k->tables.build(k->log_n, sg.s);
  query_ref q[5];
  desc_queries(d, q);
  const void* ptrs[5] = {};
  for (int i = 0; i < 5; i++) {
    const query_ref& x = q[i];
    if (x.count == 0) continue;
    if (x.buf) {
      ptrs[i] = x.buf->ptr;
    } else if (d.residency == C2G_RESIDENCY_DEVICE) {
      void* p = nullptr;
      CK(cudaMalloc(&p, x.count * x.point_size));
      k->owned.push_back(p);
      CK(cudaMemcpyAsync(p, x.host, x.count * x.point_size, cudaMemcpyHostToDevice, sg.s));
      ptrs[i] = p;
    } else {
      cudaError_t e = cudaHostRegister(const_cast<void*>(x.host), x.count * x.point_size, cudaHostRegisterDefault);
      if (e == cudaErrorHostMemoryAlreadyRegistered) {
        cudaGetLastError();  // shares pages with a range locked earlier: already page-locked
      } else {
        if (e != cudaSuccess) throw_cuda(e, "cudaHostRegister", __FILE__, __LINE__);
        k->registered.push_back(const_cast<void*>(x.host));
      }
      ptrs[i] = x.host;
    }
  }
  CK(cudaStreamSynchronize(sg.s));
  k->h = (const g1_affine*)ptrs[0];
  k->l = (const g1_affine*)ptrs[1];
  k->a = (const g1_affine*)ptrs[2];
  k->bg1 = (const g1_affine*)ptrs[3];
  k->bg2 = (const g2_affine*)ptrs[4];
  key_decide_split(k.get(), sg.s);
  key_decide_overlap(k.get(), overlap);
  return k.release();
}

// ---- task memory plan ----------------------------------------------------------

// the largest G1 MSM of L, A and B; g1_msm_max: with H's
static uint64_t g1_msm_max_lab(const c2g_key* k) {
  uint64_t m = k->num_aux;
  if (k->num_a > m) m = k->num_a;
  if (k->num_b > m) m = k->num_b;
  return m;
}

static uint64_t g1_msm_max(const c2g_key* k) {
  uint64_t m = g1_msm_max_lab(k);
  return k->h_count > m ? k->h_count : m;
}

// Overlap: a task runs the L, A and B MSMs beside H and the H MSM — on a
// second stream from a second host thread, in their own scratch (region
// Y: 8.7 GB more per task at the 32 GiB shape) — so that each fills the
// multiprocessors the other leaves idle (the reductions' small launches,
// the H MSM's serial steps), which shortens a 32 GiB partition's compute.
// The key decides
// when it is made (key_decide_overlap): C2G_OVERLAP=on|off|auto
// (environment), auto (the default) overlaps when the device, once the
// parameters are resident, still has room for two tasks laid out so.
// Device residency only: pinned parameters stream through one pair of
// staging buffers, so their MSMs run one after another.
static void plan_task(const c2g_key* k, arena& a, task_layout& L, bool overlap) {
  const uint64_t n = k->domain;
  const bool pinned = k->residency == C2G_RESIDENCY_PINNED;
  L.aux = a.take_n<fr_t>(k->num_aux);
  L.input = a.take_n<fr_t>(k->num_inputs);
  L.hvec = a.take_n<fr_t>(n);
  L.dens_a = a.take_n<uint64_t>(words_for(k->num_aux) + 1);
  L.dens_bi = a.take_n<uint64_t>(words_for(k->num_inputs) + 1);
  L.dens_ba = a.take_n<uint64_t>(words_for(k->num_aux) + 1);
  L.res_g1 = a.take_n<xyzz_t<fp_t>>(4);
  L.res_g2 = a.take_n<xyzz_t<fp2_t>>(1);
  // region X, phase 1: the H computation
  arena hx = a;
  const uint64_t vecs = key_reads_c(k) ? 3 : 2;
  L.va = hx.take_n<fr_t>(n);
  L.vc = key_reads_c(k) ? hx.take_n<fr_t>(n) : nullptr;
  // (during the upload only: the codes of the vectors uploaded coded)
  L.codes = hx.take_n<uint8_t>(vecs * n + k->num_aux);
  L.code_others = hx.take_n<uint32_t>(4);
  // region X, phase 2: the H MSM (device residency; pinned: in region Y,
  // which holds the staging buffers)
  arena hm = a;
  if (!pinned) {
    L.hmsm_bytes = msm_scratch_bytes<fp_t>(k->h_count, k->h_split_c);
    L.hmsm_base = (char*)hm.take(L.hmsm_bytes);
  }
  // region Y: the other MSMs (and the H MSM when pinned)
  arena mx = a;
  if (overlap) mx.used = hx.used > hm.used ? hx.used : hm.used;
  uint64_t dense_n = k->num_a > k->num_b ? k->num_a : k->num_b;
  L.dense = mx.take_n<fr_t>(dense_n);
  uint64_t words = words_for(k->num_aux > k->num_inputs ? k->num_aux : k->num_inputs);
  L.word_cnt = mx.take_n<uint32_t>(words + 1);
  L.word_pre = mx.take_n<uint32_t>(words + 1);
  L.scan_bytes = 0;
  CK(cub::DeviceScan::ExclusiveSum(nullptr, L.scan_bytes, L.word_cnt, L.word_pre, (int)(words + 1), (cudaStream_t)0));
  L.scan_temp = mx.take(L.scan_bytes);
  uint64_t g1n = pinned ? g1_msm_max(k) : g1_msm_max_lab(k), g2n = k->num_b;
  if (pinned) {
    if (g1n > k->stream_chunk) g1n = k->stream_chunk;
    if (g2n > k->stream_chunk) g2n = k->stream_chunk;
    L.stage[0] = mx.take_n<affine_t<fp2_t>>(k->stream_chunk);
    L.stage[1] = mx.take_n<affine_t<fp2_t>>(k->stream_chunk);
    L.chunk_out = mx.take_n<xyzz_t<fp2_t>>(ceil_div(g1_msm_max(k), k->stream_chunk) + 1);
  } else {
    L.stage[0] = L.stage[1] = nullptr;
    L.chunk_out = nullptr;
  }
  uint64_t s1 = msm_scratch_bytes<fp_t>(g1n), s2 = msm_scratch_bytes<fp2_t>(g2n);
  L.msm_bytes = s1 > s2 ? s1 : s2;
  L.msm_base = (char*)mx.take(L.msm_bytes);
  if (pinned) {
    L.hmsm_base = L.msm_base;
    L.hmsm_bytes = L.msm_bytes;
  }
  a.used = hx.used > mx.used ? hx.used : mx.used;
  if (hm.used > a.used) a.used = hm.used;
  L.total = a.used + 256;
}

// C2G_TRACE=on (environment): each task's create and upload print the host
// time of their steps to stderr, its compute the device timeline of its
// stages (a benchmark's breakdown).
struct step_trace {
  bool on = env_on_off("C2G_TRACE", false) == 1;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  std::string line;
  void step(const char* name) {
    if (!on) return;
    const auto now = std::chrono::steady_clock::now();
    line += strprintf(" %s %.2f", name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  }
  void print(const char* what) {
    if (on) fprintf(stderr, "c2g trace %s (ms):%s\n", what, line.c_str());
  }
};

c2g_task* task_create(int device, c2g_key* key, uint64_t rows) {
  if (!key) throw_invalid("task: nil key");
  if (key->device != device) throw_invalid(strprintf("task: key lives on device %d, not %d", key->device, device));
  if (rows > key->domain) throw_invalid(strprintf("task: %llu rows exceed the domain %llu", (unsigned long long)rows, (unsigned long long)key->domain));
  if (rows < key->num_inputs) throw_invalid(strprintf("task: %llu rows, fewer than the %llu inputs", (unsigned long long)rows, (unsigned long long)key->num_inputs));
  step_trace tr;
  std::unique_ptr<c2g_task, void (*)(c2g_task*)> t(new c2g_task(), task_free);
  t->device = device;
  t->key = key;
  t->rows = rows;
  CK(cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&t->copy_stream, cudaStreamNonBlocking));
  if (key->overlap) CK(cudaStreamCreateWithFlags(&t->side_stream, cudaStreamNonBlocking));
  tr.step("streams");
  for (auto& e : t->ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  tr.step("events");
  arena a;
  plan_task(key, a, t->lay, key->overlap);
  tr.step("plan");
  tr.print("create");
  return t.release();
}

// The stream-ordered pool (cudaMallocAsync) maps device memory in granules:
// on an H200 the first allocation of a small task took 32 MiB of the device's
// free memory for a 0.8 MB request (measured with cudaMemGetInfo,
// 2026-11-30), and larger requests are mapped in 2 MiB pages. What a task
// reports must cover what it takes, so round the same way.
static const uint64_t kPoolMinBytes = 32ull << 20, kPoolPageBytes = 2ull << 20;

static uint64_t planned_task_bytes(const c2g_key* k, bool overlap) {
  arena a;
  task_layout L;
  plan_task(k, a, L, overlap);
  uint64_t b = L.total < kPoolMinBytes ? kPoolMinBytes : L.total;
  return (b + kPoolPageBytes - 1) / kPoolPageBytes * kPoolPageBytes;
}

uint64_t key_task_bytes(const c2g_key* k, uint64_t rows) {
  (void)rows;  // the plan depends on the key's shape only
  return planned_task_bytes(k, k->overlap);
}

uint64_t desc_task_bytes(int device, const c2g_key_desc& d, bool overlap) {
  validate_desc(device, d);
  if (overlap && d.residency != C2G_RESIDENCY_DEVICE) throw_invalid("task bytes: only a resident key overlaps");
  c2g_key k;  // the shape only: nothing allocated
  key_shape(&k, device, d);
  return planned_task_bytes(&k, overlap);
}

void task_free(c2g_task* t) {
  if (!t) return;
  if (t->mem) {
    cudaFreeAsync(t->mem, t->stream);
    cudaStreamSynchronize(t->stream);
  }
  for (auto& e : t->ev)
    if (e) cudaEventDestroy(e);
  if (t->copy_stream) cudaStreamDestroy(t->copy_stream);
  if (t->side_stream) cudaStreamDestroy(t->side_stream);
  if (t->stream) cudaStreamDestroy(t->stream);
  delete t;
}

// ---- upload ----------------------------------------------------------------------

// Events made for one upload, destroyed with it (an event still pending is
// released by the driver once it completes).
struct event_list {
  std::vector<cudaEvent_t> v;
  cudaEvent_t add() {
    cudaEvent_t e = nullptr;
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    v.push_back(e);
    return e;
  }
  ~event_list() {
    for (cudaEvent_t e : v) cudaEventDestroy(e);
  }
};

void task_upload(c2g_task* t, const c2g_witness& w) {
  if (t->uploaded) throw_invalid("upload: task already uploaded");
  step_trace tr;
  const c2g_key* k = t->key;
  const uint64_t n = k->domain, rows = t->rows;
  const bool read_c = key_reads_c(k);
  if (!w.a || !w.b || (read_c && !w.c) || !w.input)
    throw_invalid(read_c ? "upload: a, b, c and input must be given" : "upload: a, b and input must be given");
  if (k->num_aux && (!w.aux || !w.a_density_aux || !w.b_density_aux)) throw_invalid("upload: aux and its densities must be given");
  if (!w.b_density_input) throw_invalid("upload: b input density must be given");
  uint64_t a_cnt = k->num_aux ? popcount_bits(w.a_density_aux, k->num_aux) : 0;
  uint64_t bi_cnt = popcount_bits(w.b_density_input, k->num_inputs);
  uint64_t ba_cnt = k->num_aux ? popcount_bits(w.b_density_aux, k->num_aux) : 0;
  if (k->num_inputs + a_cnt != k->num_a)
    throw_invalid(strprintf("upload: a density selects %llu aux variables, the key's a query has %llu points for %llu inputs",
                            (unsigned long long)a_cnt, (unsigned long long)k->num_a, (unsigned long long)k->num_inputs));
  if (bi_cnt + ba_cnt != k->num_b)
    throw_invalid(strprintf("upload: b densities select %llu variables, the key's b query has %llu points",
                            (unsigned long long)(bi_cnt + ba_cnt), (unsigned long long)k->num_b));
  t->b_inputs = bi_cnt;
  tr.step("popcounts");
  // C2G_UPLOAD_CODES: unset or "on" uploads coded vectors as their codes,
  // "off" copies every vector whole (a benchmark's comparison)
  const bool use_codes = env_on_off("C2G_UPLOAD_CODES", false) != 0;
  pool_keep(t->device, t->lay.total);
  tr.step("pool_keep");
  cudaStream_t st = t->stream;
  const auto start = std::chrono::steady_clock::now();
  CK(cudaMallocAsync(&t->mem, t->lay.total, st));
  arena a;
  a.base = (char*)t->mem;
  a.size = t->lay.total;
  plan_task(k, a, t->lay, k->overlap);
  task_layout& L = t->lay;
  const uint64_t fb = sizeof(fr_t);
  if (rows < n) {
    CK(cudaMemsetAsync(L.va + rows, 0, (n - rows) * fb, st));
    CK(cudaMemsetAsync(L.hvec + rows, 0, (n - rows) * fb, st));
    if (read_c) CK(cudaMemsetAsync(L.vc + rows, 0, (n - rows) * fb, st));
  }
  CK(cudaMemsetAsync(L.code_others, 0, 4 * sizeof(uint32_t), st));
  CK(cudaStreamSynchronize(st));  // the allocation is usable by the staging streams
  tr.step("alloc");
  std::vector<h2d_copy> jobs = {
      {L.input, w.input, k->num_inputs * fb},
      {L.dens_bi, w.b_density_input, words_for(k->num_inputs) * 8},
  };
  // A vector goes as its codes when they are given and its values can be
  // read in place (registered, so mapped; 16-byte aligned for the kernel's
  // loads), else whole. Codes in registered memory are copied here, piece
  // by piece on the copy stream, each piece expanded on st as soon as it is
  // on the device, so the expansion's reads of the values coded OTHER go
  // over the link while later pieces' codes do (C2G_UPLOAD_PIPELINE=off:
  // every code through the staging lanes first, then the expansions, a
  // benchmark's comparison); other codes go with the staged copies.
  struct coded_vec {
    const uint8_t* host;   // codes
    const uint8_t* codes;  // device
    const fr_t* src;       // mapped host values
    fr_t* dst;
    uint64_t n;
    bool here;  // copied by the pipeline below
  };
  const bool pipeline = env_on_off("C2G_UPLOAD_PIPELINE", false) != 0;
  std::vector<coded_vec> coded;
  uint8_t* code_dst = L.codes;
  uint64_t coded_bytes = 0, here_bytes = 0;
  auto vec = [&](fr_t* dst, const void* src, const uint8_t* codes, uint64_t count) {
    if (count == 0) return;
    const void* mapped = use_codes && codes && ((uintptr_t)src & 15) == 0 ? host_mapped(src, count * fb) : nullptr;
    if (!mapped) {
      jobs.push_back({dst, src, count * fb});
      return;
    }
    const bool here = pipeline && host_registered(codes, count);
    if (!here) jobs.push_back({code_dst, codes, count});
    coded.push_back({codes, code_dst, (const fr_t*)mapped, dst, count, here});
    code_dst += count;
    coded_bytes += count * fb;
    if (here) here_bytes += count;
  };
  vec(L.va, w.a, w.a_codes, rows);
  vec(L.hvec, w.b, w.b_codes, rows);
  if (read_c) vec(L.vc, w.c, w.c_codes, rows);
  if (k->num_aux) {
    vec(L.aux, w.aux, w.aux_codes, k->num_aux);
    jobs.push_back({L.dens_a, w.a_density_aux, words_for(k->num_aux) * 8});
    jobs.push_back({L.dens_ba, w.b_density_aux, words_for(k->num_aux) * 8});
  }
  tr.step("plan");
  // the coded vectors' expansions, reading the values coded OTHER from host
  // memory; until st is synchronized a kernel may still read the host arrays
  const uint64_t piece = 32ull << 20;
  event_list arrived;
  uint32_t others[4] = {};
  upload_stats us;
  try {
    for (size_t i = 0; i < coded.size(); i++) {
      const coded_vec& c = coded[i];
      for (uint64_t off = 0; c.here && off < c.n; off += piece) {
        const uint64_t m = std::min(piece, c.n - off);
        CK(cudaMemcpyAsync((void*)(c.codes + off), c.host + off, m, cudaMemcpyHostToDevice, t->copy_stream));
        const cudaEvent_t e = arrived.add();
        CK(cudaEventRecord(e, t->copy_stream));
        CK(cudaStreamWaitEvent(st, e, 0));
        C2G_LAUNCH_SYNC(k_expand_codes, grid_stride(m), 256, 0, st, c.codes + off, c.src + off, c.dst + off, m,
                        L.code_others + i);
        CK_LAUNCH("k_expand_codes");
      }
    }
    tr.step("pipeline");
    us = staged_upload(t->device, jobs);
    tr.step("dma");
    for (size_t i = 0; i < coded.size(); i++) {
      const coded_vec& c = coded[i];
      if (c.here) continue;
      C2G_LAUNCH_SYNC(k_expand_codes, grid_stride(c.n), 256, 0, st, c.codes, c.src, c.dst, c.n, L.code_others + i);
      CK_LAUNCH("k_expand_codes");
    }
    if (!coded.empty()) CK(cudaMemcpyAsync(others, L.code_others, sizeof(others), cudaMemcpyDeviceToHost, st));
  } catch (...) {
    cudaStreamSynchronize(t->copy_stream);
    cudaStreamSynchronize(st);
    throw;
  }
  us.direct_bytes += here_bytes;
  // returns with the data on the device: the host arrays may be reused
  CK(cudaStreamSynchronize(st));
  tr.step("expand");
  tr.print("upload");
  t->results.upload_direct_bytes = us.direct_bytes;
  t->results.upload_staged_bytes = us.staged_bytes;
  t->results.upload_coded_bytes = coded_bytes;
  t->results.upload_other_values = (uint64_t)others[0] + others[1] + others[2] + others[3];
  t->results.ms_upload = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  t->uploaded = true;
}

// ---- compute ---------------------------------------------------------------------

template <class F>
static void run_msm(c2g_task* t, char* base, uint64_t bytes, const affine_t<F>* bases, const fr_t* sc, uint64_t n,
                    xyzz_t<F>* out, cudaStream_t st, const msm_split<F>* split = nullptr, msm_info* info = nullptr) {
  task_layout& L = t->lay;
  arena a;
  a.base = base;
  a.size = bytes;
  msm_scratch<F> s;
  const c2g_key* k = t->key;
  if (k->residency == C2G_RESIDENCY_PINNED) {
    s.layout(a, n < k->stream_chunk ? n : k->stream_chunk);
    msm_streamed<F>(bases, sc, n, s, (affine_t<F>*)L.stage[0], (affine_t<F>*)L.stage[1], k->stream_chunk,
                    (xyzz_t<F>*)L.chunk_out, out, st, t->copy_stream, t->ev, info, &t->cancel);
  } else {
    s.layout(a, n, split ? split->c : 0);
    msm_run<F>(bases, sc, n, s, out, st, info, &t->cancel, split);
  }
}

// Builds the dense scalars of a query: dst[dst_off + rank(i)] = src[i] for
// the set bits of w (n bits).
static void densify(c2g_task* t, const fr_t* src, uint64_t n, const uint64_t* w, fr_t* dst, uint64_t dst_off,
                    cudaStream_t st) {
  if (n == 0) return;
  task_layout& L = t->lay;
  uint64_t words = words_for(n);
  C2G_LAUNCH(k_popc_words, grid_for(words + 1, 256), 256, 0, st, w, words, L.word_cnt);
  CK_LAUNCH("k_popc_words");
  size_t tb = L.scan_bytes;
  CK(cub::DeviceScan::ExclusiveSum(L.scan_temp, tb, L.word_cnt, L.word_pre, (int)(words + 1), st));
  C2G_LAUNCH(k_dense_scatter, grid_stride(n), 256, 0, st, src, n, w, L.word_pre, dst, dst_off);
  CK_LAUNCH("k_dense_scatter");
}

// H and its MSM on st: h's coefficients from a, b and c, then sum h_i·H_i
// (monomial form), or the products of a's and b's coset evaluations, then
// their sum on the coset-Lagrange H query.
static void compute_h_part(c2g_task* t, cudaStream_t st, event_pair& e_h, event_pair& e_mh) {
  const c2g_key* k = t->key;
  task_layout& L = t->lay;
  const uint64_t n = k->domain;
  e_h.start(st);
  if (!key_reads_c(k)) {
    // coset-Lagrange: no unsatisfied witness to find (c2g.h)
    compute_coset_products(L.va, L.hvec, k->log_n, k->tables, st);
    e_h.stop(st);
  } else {
    compute_h(L.va, L.hvec, L.vc, k->log_n, k->tables, L.hvec, st);
    fr_t top;
    CK(cudaMemcpyAsync(&top, L.hvec + (n - 1), sizeof(fr_t), cudaMemcpyDeviceToHost, st));
    e_h.stop(st);
    CK(cudaStreamSynchronize(st));
    if (!top.is_zero())
      throw error(C2G_ERR_UNSATISFIED, 0, "compute: the witness does not satisfy the constraints (h has degree n-1)");
  }
  t->cancel.check();
  e_mh.start(st);
  const msm_split<fp_t> split{k->h, k->h_split_c};
  msm_info info;
  run_msm<fp_t>(t, L.hmsm_base, L.hmsm_bytes, k->h, L.hvec, k->h_count, L.res_g1 + 0, st, k->h_split_c ? &split : nullptr,
                &info);
  t->results.msm_h_split_bits = info.split ? info.window_bits : 0;
  e_mh.stop(st);
  t->cancel.check();
}

// C2G_LAB_ORDER (environment): the order of the L, A and B MSMs, a
// permutation of "lab", the default (docs/cuda.md, "Overlap": on a real
// 32 GiB partition the orders differ by a few milliseconds).
static const char* lab_order() {
  const char* order = getenv("C2G_LAB_ORDER");
  if (!order || !*order) return "lab";
  if (strlen(order) != 3 || !strchr(order, 'l') || !strchr(order, 'a') || !strchr(order, 'b'))
    throw_invalid(strprintf("C2G_LAB_ORDER=%s: want a permutation of lab", order));
  return order;
}

// The L, A and B MSMs on st in the given order (with the aux and input
// scalars made canonical first), in region Y.
static void compute_lab_part(c2g_task* t, cudaStream_t st, const char* order, event_pair& e_ml, event_pair& e_ma,
                             event_pair& e_mb1, event_pair& e_mb2) {
  const c2g_key* k = t->key;
  task_layout& L = t->lay;
  if (k->num_aux) {
    C2G_LAUNCH(k_fr_from_mont, grid_stride(k->num_aux), 256, 0, st, L.aux, L.aux, k->num_aux);
    CK_LAUNCH("k_fr_from_mont");
  }
  C2G_LAUNCH(k_fr_from_mont, grid_stride(k->num_inputs), 256, 0, st, L.input, L.input, k->num_inputs);
  CK_LAUNCH("k_fr_from_mont");

  for (const char* o = order; *o; o++) {
    if (*o == 'l') {
      e_ml.start(st);
      run_msm<fp_t>(t, L.msm_base, L.msm_bytes, k->l, L.aux, k->num_aux, L.res_g1 + 1, st);
      e_ml.stop(st);
    } else if (*o == 'a') {
      e_ma.start(st);
      CK(cudaMemcpyAsync(L.dense, L.input, k->num_inputs * sizeof(fr_t), cudaMemcpyDeviceToDevice, st));
      densify(t, L.aux, k->num_aux, L.dens_a, L.dense, k->num_inputs, st);
      run_msm<fp_t>(t, L.msm_base, L.msm_bytes, k->a, L.dense, k->num_a, L.res_g1 + 2, st);
      e_ma.stop(st);
    } else {
      e_mb1.start(st);
      densify(t, L.input, k->num_inputs, L.dens_bi, L.dense, 0, st);
      densify(t, L.aux, k->num_aux, L.dens_ba, L.dense, t->b_inputs, st);
      run_msm<fp_t>(t, L.msm_base, L.msm_bytes, k->bg1, L.dense, k->num_b, L.res_g1 + 3, st);
      e_mb1.stop(st);
      t->cancel.check();
      e_mb2.start(st);
      run_msm<fp2_t>(t, L.msm_base, L.msm_bytes, k->bg2, L.dense, k->num_b, L.res_g2, st);
      e_mb2.stop(st);
    }
    t->cancel.check();
  }
}

void task_compute(c2g_task* t) {
  if (!t->uploaded) throw_invalid("compute: task not uploaded");
  if (t->computed) throw_invalid("compute: task already computed");
  if (t->failed) throw_invalid("compute: an earlier compute of this task failed; its buffers are spent");
  // the knobs read before any work starts
  const char* order = lab_order();
  step_trace tr;
  task_layout& L = t->lay;
  cudaStream_t st = t->stream;
  event_pair e_all, e_h, e_mh, e_ml, e_ma, e_mb1, e_mb2;
  e_all.start(st);
  t->cancel.check();

  if (!t->key->overlap) {
    compute_h_part(t, st, e_h, e_mh);
    compute_lab_part(t, st, order, e_ml, e_ma, e_mb1, e_mb2);
  } else {
    // L, A and B from a second host thread (msm_run waits on its stream
    // for counts), on the side stream after the upload's work on st. The
    // first failure stops the other part through the task's cancel flag
    // and is the one reported.
    event_pair begun;
    begun.start(st);
    CK(cudaStreamWaitEvent(t->side_stream, begun.a, 0));
    std::mutex mu;
    std::exception_ptr first;
    auto fail = [&](std::exception_ptr e) {
      std::lock_guard<std::mutex> lk(mu);
      if (!first) first = e;
      t->cancel.flag.store(true, std::memory_order_relaxed);
    };
    std::thread side([&]() {
      try {
        CK(cudaSetDevice(t->device));
        compute_lab_part(t, t->side_stream, order, e_ml, e_ma, e_mb1, e_mb2);
        CK(cudaStreamSynchronize(t->side_stream));
      } catch (...) {
        cudaStreamSynchronize(t->side_stream);
        fail(std::current_exception());
      }
    });
    try {
      compute_h_part(t, st, e_h, e_mh);
    } catch (...) {
      fail(std::current_exception());
    }
    side.join();
    if (first) {
      cudaStreamSynchronize(st);
      std::rethrow_exception(first);
    }
  }

  CK(cudaMemcpyAsync(t->results.h, L.res_g1 + 0, 192, cudaMemcpyDeviceToHost, st));
  CK(cudaMemcpyAsync(t->results.l, L.res_g1 + 1, 192, cudaMemcpyDeviceToHost, st));
  CK(cudaMemcpyAsync(t->results.a, L.res_g1 + 2, 192, cudaMemcpyDeviceToHost, st));
  CK(cudaMemcpyAsync(t->results.b_g1, L.res_g1 + 3, 192, cudaMemcpyDeviceToHost, st));
  CK(cudaMemcpyAsync(t->results.b_g2, L.res_g2, 384, cudaMemcpyDeviceToHost, st));
  e_all.stop(st);
  CK(cudaStreamSynchronize(st));
  t->results.ms_h = e_h.ms();
  t->results.ms_msm_h = e_mh.ms();
  t->results.ms_msm_l = e_ml.ms();
  t->results.ms_msm_a = e_ma.ms();
  t->results.ms_msm_b_g1 = e_mb1.ms();
  t->results.ms_msm_b_g2 = e_mb2.ms();
  t->results.ms_compute = e_all.ms();
  t->results.msms_overlapped = t->key->overlap ? 1 : 0;
  if (tr.on) {
    auto at = [&](cudaEvent_t e) {
      float m = 0;
      CK(cudaEventElapsedTime(&m, e_all.a, e));
      return m;
    };
    const std::pair<const char*, event_pair*> stages[] = {{"h", &e_h},     {"msm_h", &e_mh},   {"l", &e_ml},
                                                          {"a", &e_ma},    {"b_g1", &e_mb1}, {"b_g2", &e_mb2}};
    for (const auto& sp : stages) tr.line += strprintf(" %s %.1f-%.1f", sp.first, at(sp.second->a), at(sp.second->b));
    tr.line += strprintf(" end %.1f", at(e_all.b));
    tr.print("compute timeline");
  }
  t->computed = true;
}

}  // namespace c2g
