// The Groth16 partition prover behind the C ABI: a key (parameters resident
// in device memory or page-locked on the host, plus NTT tables) and tasks
// (one witness each: upload, compute, results).
#pragma once
#include <mutex>
#include <vector>

#include "common.cuh"
#include "curve.cuh"
#include "msm.cuh"
#include "ntt.cuh"

struct c2g_buffer {
  int device;
  void* ptr;
  uint64_t bytes;
};

struct c2g_key {
  int device = 0;
  uint64_t domain = 0;
  uint32_t log_n = 0;
  uint64_t num_inputs = 0, num_aux = 0, num_a = 0, num_b = 0;
  // C2G_H_*, and the H query's points: domain - 1 (monomial) or domain
  int32_t h_form = C2G_H_MONOMIAL;
  uint64_t h_count = 0;
  int residency = C2G_RESIDENCY_DEVICE;
  const c2g::g1_affine *h = nullptr, *l = nullptr, *a = nullptr, *bg1 = nullptr;
  const c2g::g2_affine* bg2 = nullptr;
  std::vector<void*> owned;       // device allocations
  std::vector<void*> registered;  // host ranges page-locked with cudaHostRegister
  c2g::ntt_tables tables;
  uint64_t stream_chunk = 0;  // points per staging chunk (pinned residency)
  // tasks run the L, A and B MSMs beside H (C2G_OVERLAP; prover.cu)
  bool overlap = false;
  // the H MSM on split bases (C2G_MSM_SPLIT; prover.cu, msm.cuh 2''): the
  // window c they were made for, 0 when not split; then h holds 2 h_count
  // points, the H query and its copy 2^msm_split_shift(c) H
  uint32_t h_split_c = 0;
};

namespace c2g {

// Byte layout of a task's single device allocation.
struct task_layout {
  // persistent
  fr_t *aux, *input, *hvec;  // hvec: b, then h
  uint64_t *dens_a, *dens_bi, *dens_ba;
  xyzz_t<fp_t>* res_g1;   // 4 results: h, l, a, b_g1
  xyzz_t<fp2_t>* res_g2;  // 1 result: b_g2
  // transient region X: H phase (a, c), then the H MSM's scratch; the
  // other MSMs (dense scalars, scan temporaries, MSM scratch, staging) in
  // region Y — after X when they run beside the H phase (overlap), else
  // over X after it
  fr_t *va, *vc;  // vc: monomial H only
  uint8_t* codes;         // upload: value codes of a, b, c, aux (3·domain + num_aux bytes)
  uint32_t* code_others;  // upload: values coded OTHER, per vector (4)
  fr_t* dense;
  uint32_t *word_cnt, *word_pre;
  void* scan_temp;
  size_t scan_bytes;
  char* msm_base;  // region Y: the L, A and B MSMs' scratch
  uint64_t msm_bytes;
  char* hmsm_base;  // region X after the H phase: the H MSM's scratch
  uint64_t hmsm_bytes;
  affine_t<fp2_t>* stage[2];  // staging (pinned residency), sized for G2 chunks
  xyzz_t<fp2_t>* chunk_out;   // per-chunk sums (pinned residency)
  uint64_t total;
};

}  // namespace c2g

struct c2g_task {
  int device = 0;
  c2g_key* key = nullptr;
  uint64_t rows = 0;
  cudaStream_t stream = nullptr, copy_stream = nullptr;
  // key->overlap: the L, A and B MSMs run on side_stream, from a second
  // host thread, beside H and its MSM
  cudaStream_t side_stream = nullptr;
  cudaEvent_t ev[4] = {};
  void* mem = nullptr;
  c2g::task_layout lay{};
  uint64_t b_inputs = 0;  // popcount of the B input density
  bool uploaded = false, computed = false, failed = false;
  c2g::cancel_flag cancel;
  c2g_results results{};
};

namespace c2g {
uint64_t key_device_bytes(const c2g_key_desc& d);
c2g_key* key_create(int device, const c2g_key_desc& d);
void key_free(c2g_key* k);
c2g_task* task_create(int device, c2g_key* key, uint64_t rows);
uint64_t key_task_bytes(const c2g_key* k, uint64_t rows);
uint64_t desc_task_bytes(int device, const c2g_key_desc& d, bool overlap);
// The device's stream-ordered pool (prover.cu): pool_keep before a task's
// allocation sets how much freed memory the pool keeps mapped (C2G_POOL_KEEP);
// pool_unused_bytes is what it holds mapped and unused now.
void pool_keep(int device, uint64_t task_bytes);
uint64_t pool_unused_bytes(int device);
void task_upload(c2g_task* t, const c2g_witness& w);
void task_compute(c2g_task* t);
void task_free(c2g_task* t);
}  // namespace c2g
