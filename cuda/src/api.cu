// The C ABI (include/c2g.h): argument checks, device binding, exception to
// error-code translation. No function lets an exception or a CUDA error
// escape, and none aborts the process.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "dft.cuh"
#include "fixedbase.cuh"
#include "subgroup.cuh"
#include "staging.cuh"
#include "prover.cuh"
#include "random.cuh"
#include "selftest.cuh"
#include "split.cuh"

using namespace c2g;

namespace {

void fill_error(c2g_error* err, int code, int cuda_code, const char* msg) {
  if (!err) return;
  err->code = code;
  err->cuda_code = cuda_code;
  snprintf(err->message, sizeof(err->message), "%s", msg);
}

template <class Fn>
c2g_status guarded(c2g_error* err, Fn&& fn) {
  try {
    fn();
    fill_error(err, C2G_OK, 0, "");
    return C2G_OK;
  } catch (const c2g::error& e) {
    fill_error(err, e.code, e.cuda_code, e.what());
    return e.code;
  } catch (const std::bad_alloc&) {
    fill_error(err, C2G_ERR_OOM, 0, "host memory exhausted");
    return C2G_ERR_OOM;
  } catch (const std::exception& e) {
    fill_error(err, C2G_ERR_INTERNAL, 0, e.what());
    return C2G_ERR_INTERNAL;
  } catch (...) {
    fill_error(err, C2G_ERR_INTERNAL, 0, "unknown exception");
    return C2G_ERR_INTERNAL;
  }
}

// Validates the index and makes it the calling thread's current device.
void bind_device(int32_t device) {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (device < 0 || device >= n)
    throw error(C2G_ERR_NO_DEVICE, 0, strprintf("device %d does not exist (%d CUDA devices)", device, n));
  CK(cudaSetDevice(device));
}

void check_buffer(int32_t device, const c2g_buffer* b, const char* what) {
  if (!b) throw_invalid(strprintf("%s: nil buffer", what));
  if (b->device != device) throw_invalid(strprintf("%s: buffer lives on device %d, not %d", what, b->device, device));
}

void check_range(const c2g_buffer* b, uint64_t off, uint64_t bytes, const char* what) {
  if (off > b->bytes || bytes > b->bytes - off)
    throw_invalid(strprintf("%s: range [%llu, +%llu) outside the buffer of %llu bytes", what, (unsigned long long)off,
                            (unsigned long long)bytes, (unsigned long long)b->bytes));
}

// NTT tables for the standalone transform, per device, grown on demand.
std::mutex g_ntt_mu;
std::map<int, ntt_tables> g_ntt;

}  // namespace

void c2g_selftest_launch(int op, const uint8_t* in0, const uint8_t* in1, uint8_t* out, uint64_t n, cudaStream_t st);

extern "C" {

int32_t c2g_abi_version(void) { return C2G_ABI_VERSION; }

c2g_status c2g_device_count(int32_t* count, c2g_error* err) {
  return guarded(err, [&] {
    if (!count) throw_invalid("device count: nil output");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
      cudaGetLastError();
      *count = 0;
      return;
    }
    if (e != cudaSuccess) throw_cuda(e, "cudaGetDeviceCount", __FILE__, __LINE__);
    *count = n;
  });
}

c2g_status c2g_device_info_get(int32_t device, c2g_device_info* out, c2g_error* err) {
  return guarded(err, [&] {
    if (!out) throw_invalid("device info: nil output");
    bind_device(device);
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, device));
    size_t fr = 0, total = 0;
    CK(cudaMemGetInfo(&fr, &total));
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", p.name);
    out->total_bytes = total;
    out->free_bytes = fr + pool_unused_bytes(device);  // what the pool keeps mapped is free to this process
    out->sm_count = p.multiProcessorCount;
    out->cc_major = p.major;
    out->cc_minor = p.minor;
  });
}

c2g_status c2g_host_register(void* p, uint64_t bytes, c2g_error* err) {
  return guarded(err, [&] {
    if (!p) throw_invalid("host register: nil pointer");
    if (bytes == 0) throw_invalid("host register: zero bytes");
    int n = 0;
    CK(cudaGetDeviceCount(&n));  // NO_DEVICE without a driver, before touching the registry
    host_register(p, bytes);
  });
}

c2g_status c2g_host_unregister(void* p, c2g_error* err) {
  return guarded(err, [&] { host_unregister(p); });
}

c2g_status c2g_buffer_alloc(int32_t device, uint64_t bytes, c2g_buffer** out, c2g_error* err) {
  return guarded(err, [&] {
    if (!out) throw_invalid("buffer alloc: nil output");
    *out = nullptr;
    bind_device(device);
    std::unique_ptr<c2g_buffer> b(new c2g_buffer{device, nullptr, bytes});
    if (bytes) CK(cudaMalloc(&b->ptr, bytes));
    *out = b.release();
  });
}

void c2g_buffer_free(c2g_buffer* buf) {
  if (!buf) return;
  if (buf->ptr && cudaSetDevice(buf->device) == cudaSuccess) cudaFree(buf->ptr);
  delete buf;
}

c2g_status c2g_buffer_write(int32_t device, c2g_buffer* buf, uint64_t offset, const void* src, uint64_t bytes,
                            c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, buf, "buffer write");
    check_range(buf, offset, bytes, "buffer write");
    if (bytes && !src) throw_invalid("buffer write: nil source");
    bind_device(device);
    if (bytes) CK(cudaMemcpy((char*)buf->ptr + offset, src, bytes, cudaMemcpyHostToDevice));
  });
}

c2g_status c2g_buffer_read(int32_t device, const c2g_buffer* buf, uint64_t offset, void* dst, uint64_t bytes,
                           c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, buf, "buffer read");
    check_range(buf, offset, bytes, "buffer read");
    if (bytes && !dst) throw_invalid("buffer read: nil destination");
    bind_device(device);
    if (bytes) CK(cudaMemcpy(dst, (const char*)buf->ptr + offset, bytes, cudaMemcpyDeviceToHost));
  });
}

c2g_status c2g_buffer_copy(int32_t device, c2g_buffer* dst, uint64_t dst_off, const c2g_buffer* src, uint64_t src_off,
                           uint64_t bytes, c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, dst, "buffer copy");
    check_buffer(device, src, "buffer copy");
    check_range(dst, dst_off, bytes, "buffer copy (destination)");
    check_range(src, src_off, bytes, "buffer copy (source)");
    bind_device(device);
    stream_guard sg;
    if (bytes)
      CK(cudaMemcpyAsync((char*)dst->ptr + dst_off, (const char*)src->ptr + src_off, bytes, cudaMemcpyDeviceToDevice, sg.s));
    CK(cudaStreamSynchronize(sg.s));
  });
}

c2g_status c2g_buffer_fill_random_fr(int32_t device, c2g_buffer* buf, uint64_t n, uint64_t seed, double frac01,
                                     c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, buf, "random scalars");
    if (n > buf->bytes / sizeof(fr_t)) throw_invalid("random scalars: buffer too small");
    if (!(frac01 >= 0 && frac01 <= 1)) throw_invalid("random scalars: frac01 outside [0, 1]");
    bind_device(device);
    stream_guard sg;
    random_fr((fr_t*)buf->ptr, n, seed, frac01, sg.s);
    CK(cudaStreamSynchronize(sg.s));
  });
}

c2g_status c2g_buffer_fill_random_points(int32_t device, c2g_buffer* buf, int32_t group, uint64_t n, uint64_t seed,
                                         c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, buf, "random points");
    if (group != 1 && group != 2) throw_invalid(strprintf("random points: group %d is not 1 or 2", group));
    uint64_t ps = group == 1 ? sizeof(g1_affine) : sizeof(g2_affine);
    if (n > buf->bytes / ps) throw_invalid("random points: buffer too small");
    bind_device(device);
    stream_guard sg;
    if (group == 1)
      random_points<fp_t>((g1_affine*)buf->ptr, n, seed, sg.s);
    else
      random_points<fp2_t>((g2_affine*)buf->ptr, n, seed, sg.s);
  });
}

c2g_status c2g_fixed_base(int32_t device, int32_t group, const void* table, uint32_t c, uint32_t windows,
                          const void* scalars, uint64_t n, void* out, c2g_error* err) {
  return guarded(err, [&] {
    if (group != 1 && group != 2) throw_invalid(strprintf("fixed base: group %d is not 1 or 2", group));
    bind_device(device);
    if (group == 1)
      fixed_base_mul<fp_t>((const g1_affine*)table, c, windows, (const fr_t*)scalars, n, (g1_affine*)out);
    else
      fixed_base_mul<fp2_t>((const g2_affine*)table, c, windows, (const fr_t*)scalars, n, (g2_affine*)out);
  });
}

c2g_status c2g_subgroup_check(int32_t device, int32_t group, const void* points, uint64_t n, int64_t* first_bad,
                              c2g_error* err) {
  return guarded(err, [&] {
    if (group != 1 && group != 2) throw_invalid(strprintf("subgroup check: group %d is not 1 or 2", group));
    if (!first_bad) throw_invalid("subgroup check: nil result");
    bind_device(device);
    *first_bad = group == 1 ? subgroup_first_bad<fp_t>((const g1_affine*)points, n)
                            : subgroup_first_bad<fp2_t>((const g2_affine*)points, n);
  });
}

c2g_status c2g_msm(int32_t device, int32_t group, const c2g_buffer* bases, const c2g_buffer* scalars, uint64_t n,
                   void* out, c2g_msm_stats* stats, c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, bases, "msm bases");
    check_buffer(device, scalars, "msm scalars");
    if (!out) throw_invalid("msm: nil output");
    if (group != 1 && group != 2) throw_invalid(strprintf("msm: group %d is not 1 or 2", group));
    uint64_t ps = group == 1 ? sizeof(g1_affine) : sizeof(g2_affine);
    if (n > bases->bytes / ps) throw_invalid("msm: fewer bases than n");
    if (n > scalars->bytes / sizeof(fr_t)) throw_invalid("msm: fewer scalars than n");
    if (n >= (1ull << 31)) throw_invalid("msm: n must be below 2^31");
    bind_device(device);
    stream_guard sg;
    cudaStream_t st = sg.s;
    // C2G_MSM_SPLIT=on: split bases (G1), made before the timed part
    const bool split = group == 1 && n > 0 && 2 * n < (1ull << 31) && env_on_off("C2G_MSM_SPLIT", true) == 1;
    const uint32_t split_c = split ? msm_split_c(n) : 0;
    uint64_t scratch = group == 1 ? msm_scratch_bytes<fp_t>(n, split_c) : msm_scratch_bytes<fp2_t>(n);
    uint64_t rbytes = group == 1 ? sizeof(g1_xyzz) : sizeof(g2_xyzz);
    dev_alloc canon(n * sizeof(fr_t) + 256, st), sc(scratch, st), res(rbytes, st);
    dev_alloc sbases(split ? 2 * n * sizeof(g1_affine) : 0, st);
    msm_split<fp_t> sp;
    if (split) {
      msm_split_bases<fp_t>((const g1_affine*)bases->ptr, n, msm_split_shift(split_c), sbases.as<g1_affine>(), st);
      sp = msm_split<fp_t>{sbases.as<g1_affine>(), split_c};
    }
    arena a;
    a.base = (char*)sc.p;
    a.size = scratch;
    msm_info info;
    event_pair ep;
    ep.start(st);
    if (n) {
      dim3 g = grid_for(n, 256);
      if (g.x > 132 * 64) g.x = 132 * 64;
      C2G_LAUNCH(k_fr_from_mont, g, 256, 0, st, (const fr_t*)scalars->ptr, canon.as<fr_t>(), n);
      CK_LAUNCH("k_fr_from_mont");
    }
    if (group == 1) {
      msm_scratch<fp_t> s;
      s.layout(a, n, split_c);
      msm_run<fp_t>((const g1_affine*)bases->ptr, canon.as<fr_t>(), n, s, res.as<g1_xyzz>(), st, &info, nullptr,
                    split ? &sp : nullptr);
    } else {
      msm_scratch<fp2_t> s;
      s.layout(a, n);
      msm_run<fp2_t>((const g2_affine*)bases->ptr, canon.as<fr_t>(), n, s, res.as<g2_xyzz>(), st, &info, nullptr);
    }
    ep.stop(st);
    CK(cudaMemcpyAsync(out, res.p, rbytes, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    if (stats) {
      stats->n_zero = info.n_zero;
      stats->n_one = info.n_one;
      stats->n_minus_one = info.n_minus_one;
      stats->n_other = info.n_other;
      stats->window_bits = info.window_bits;
      stats->batch_affine = info.batch_affine ? 1 : 0;
      stats->ms = ep.ms();
      stats->split = info.split ? 1 : 0;
    }
  });
}

c2g_status c2g_ntt(int32_t device, c2g_buffer* data, uint32_t log_n, int32_t inverse, int32_t coset, float* ms,
                   c2g_error* err) {
  return guarded(err, [&] {
    check_buffer(device, data, "ntt");
    if (log_n > NTT_MAX_LOG) throw_invalid(strprintf("ntt: 2^%u exceeds the largest domain 2^%u", log_n, NTT_MAX_LOG));
    check_range(data, 0, (1ull << log_n) * sizeof(fr_t), "ntt");
    bind_device(device);
    std::lock_guard<std::mutex> lk(g_ntt_mu);
    ntt_tables& t = g_ntt[device];
    stream_guard sg;
    if (t.mem == nullptr || t.max_log < log_n) {
      t.free();
      t.build(log_n < 10 ? 10 : log_n, sg.s);
    }
    event_pair ep;
    ep.start(sg.s);
    ntt_natural((fr_t*)data->ptr, log_n, inverse != 0, coset != 0, t, sg.s);
    ep.stop(sg.s);
    CK(cudaStreamSynchronize(sg.s));
    if (ms) *ms = ep.ms();
  });
}

c2g_status c2g_dft_g1(int32_t device, void* points, uint32_t log_n, int32_t inverse, const void* scale,
                      c2g_dft_control* ctl, c2g_dft_stats* stats, c2g_error* err) {
  return guarded(err, [&] {
    if (log_n > DFT_MAX_LOG) throw_invalid(strprintf("dft: 2^%u points exceed the largest domain 2^%u", log_n, DFT_MAX_LOG));
    if (!points) throw_invalid("dft: nil points");
    fr_t sc[2];
    if (scale) {
      for (int k = 0; k < 2; k++) {
        sc[k] = fr_t::from_limbs((const uint32_t*)scale + 8 * k);
        if (!fr_host_canonical(sc[k])) throw_invalid(strprintf("dft: scale %s is not a canonical Fr element", k ? "x" : "c"));
      }
    }
    bind_device(device);
    dft_g1((g1_affine*)points, log_n, inverse != 0, scale ? sc : nullptr, ctl, stats);
  });
}

c2g_status c2g_selftest(int32_t device, int32_t op, const void* in0, const void* in1, void* out, uint64_t n,
                        c2g_error* err) {
  return guarded(err, [&] {
    uint32_t s0, s1, so;
    if (!selftest_sizes(op, &s0, &s1, &so)) throw_invalid(strprintf("selftest: unknown op %d", op));
    if (n && (!in0 || !in1 || !out)) throw_invalid("selftest: nil array");
    bind_device(device);
    stream_guard sg;
    dev_alloc d0(n * s0 + 16, sg.s), d1(n * s1 + 16, sg.s), dout(n * so + 16, sg.s);
    if (n) {
      CK(cudaMemcpyAsync(d0.p, in0, n * s0, cudaMemcpyHostToDevice, sg.s));
      CK(cudaMemcpyAsync(d1.p, in1, n * s1, cudaMemcpyHostToDevice, sg.s));
      c2g_selftest_launch(op, (const uint8_t*)d0.p, (const uint8_t*)d1.p, (uint8_t*)dout.p, n, sg.s);
      CK(cudaMemcpyAsync(out, dout.p, n * so, cudaMemcpyDeviceToHost, sg.s));
    }
    CK(cudaStreamSynchronize(sg.s));
  });
}

c2g_status c2g_key_device_bytes(int32_t device, const c2g_key_desc* desc, uint64_t* bytes, c2g_error* err) {
  return guarded(err, [&] {
    if (!desc || !bytes) throw_invalid("key device bytes: nil argument");
    *bytes = key_device_bytes(*desc);
    (void)device;
  });
}

c2g_status c2g_key_create(int32_t device, const c2g_key_desc* desc, c2g_key** out, c2g_error* err) {
  return guarded(err, [&] {
    if (!desc || !out) throw_invalid("key create: nil argument");
    *out = nullptr;
    bind_device(device);
    *out = key_create(device, *desc);
  });
}

void c2g_key_free(c2g_key* key) {
  if (!key) return;
  cudaSetDevice(key->device);
  key_free(key);
}

c2g_status c2g_task_create(int32_t device, c2g_key* key, uint64_t rows, c2g_task** out, c2g_error* err) {
  return guarded(err, [&] {
    if (!out) throw_invalid("task create: nil output");
    *out = nullptr;
    bind_device(device);
    *out = task_create(device, key, rows);
  });
}

c2g_status c2g_key_task_bytes(int32_t device, const c2g_key* key, uint64_t rows, uint64_t* bytes, c2g_error* err) {
  return guarded(err, [&] {
    if (!key || !bytes) throw_invalid("task bytes: nil argument");
    if (key->device != device) throw_invalid(strprintf("key lives on device %d, not %d", key->device, device));
    *bytes = key_task_bytes(key, rows);
  });
}

c2g_status c2g_desc_task_bytes(int32_t device, const c2g_key_desc* desc, int32_t overlap, uint64_t* bytes,
                               c2g_error* err) {
  return guarded(err, [&] {
    if (!desc || !bytes) throw_invalid("task bytes: nil argument");
    if (overlap != 0 && overlap != 1) throw_invalid(strprintf("task bytes: overlap %d, want 0 or 1", overlap));
    *bytes = desc_task_bytes(device, *desc, overlap == 1);
  });
}

c2g_status c2g_task_upload(int32_t device, c2g_task* task, const c2g_witness* w, c2g_error* err) {
  return guarded(err, [&] {
    if (!task || !w) throw_invalid("upload: nil argument");
    if (task->device != device) throw_invalid(strprintf("task lives on device %d, not %d", task->device, device));
    bind_device(device);
    task_upload(task, *w);
  });
}

c2g_status c2g_task_compute(int32_t device, c2g_task* task, c2g_error* err) {
  return guarded(err, [&] {
    if (!task) throw_invalid("compute: nil task");
    if (task->device != device) throw_invalid(strprintf("task lives on device %d, not %d", task->device, device));
    bind_device(device);
    try {
      task_compute(task);
    } catch (...) {
      // leave the stream idle before reporting (kernels may still be queued)
      task->failed = true;
      cudaStreamSynchronize(task->stream);
      cudaGetLastError();
      throw;
    }
  });
}

c2g_status c2g_task_results(int32_t device, const c2g_task* task, c2g_results* out, c2g_error* err) {
  return guarded(err, [&] {
    if (!task || !out) throw_invalid("results: nil argument");
    if (task->device != device) throw_invalid(strprintf("task lives on device %d, not %d", task->device, device));
    if (!task->computed) throw_invalid("results: task not computed");
    *out = task->results;
  });
}

void c2g_task_cancel(c2g_task* task) {
  if (task) task->cancel.flag.store(true);
}

void c2g_task_free(c2g_task* task) {
  if (!task) return;
  cudaSetDevice(task->device);
  task_free(task);
}

}  // extern "C"
