/*
 * c2g.h — C ABI of libc2groth16, c2cluster's CUDA Groth16 prover for
 * BLS12-381 (Filecoin PoRep C2 partitions).
 *
 * Conventions
 *  - Every call names its device explicitly (the first argument); calls on a
 *    handle check that it lives on that device. The library binds the device
 *    to the calling thread itself (cudaSetDevice) on every call.
 *  - Every call that can fail returns a c2g_status (0 = C2G_OK) and fills
 *    *err (when err is not NULL) with the code and a message. The library
 *    never aborts or exits the process; every CUDA call is checked.
 *  - Handles are opaque and freed explicitly. A handle is used by one thread
 *    at a time; different handles may be used concurrently, also on the same
 *    device (each task has its own stream; no call synchronizes the whole
 *    device).
 *  - Field elements and points use gnark-crypto's in-memory layout:
 *    fr.Element = 4 little-endian uint64 limbs in Montgomery form (32 bytes),
 *    fp.Element = 6 limbs (48 bytes), G1Affine = {X, Y} (96 bytes),
 *    G2Affine = {X.A0, X.A1, Y.A0, Y.A1} (192 bytes), infinity = all zero.
 *  - Results are XYZZ points (x = X/ZZ, y = Y/ZZZ; infinity when ZZ = 0):
 *    G1 as 4 fp.Element (192 bytes), G2 as 4 E2 (384 bytes), Montgomery form.
 *  - Host pointers passed in are read during the call only (never retained),
 *    except the parameter arrays of a key created with C2G_RESIDENCY_PINNED,
 *    which must stay valid and unmoved until c2g_key_free, and ranges given
 *    to c2g_host_register, until c2g_host_unregister.
 */
#ifndef C2G_H
#define C2G_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define C2G_ABI_VERSION 12

#if defined(__GNUC__)
#define C2G_API __attribute__((visibility("default")))
#else
#define C2G_API
#endif

typedef int32_t c2g_status;

enum {
  C2G_OK = 0,
  C2G_ERR_INVALID = 1,    /* bad argument: caller bug or bad input */
  C2G_ERR_CUDA = 2,       /* a CUDA call failed (err->cuda_code) */
  C2G_ERR_OOM = 3,        /* device or pinned host memory exhausted */
  C2G_ERR_NO_DEVICE = 4,  /* no such device / no CUDA driver */
  C2G_ERR_CANCELLED = 5,  /* c2g_task_cancel was called */
  C2G_ERR_INTERNAL = 6,   /* a bug in the library */
  C2G_ERR_UNSATISFIED = 7 /* the witness does not satisfy the constraints */
};

typedef struct c2g_error {
  int32_t code;
  int32_t cuda_code; /* cudaError_t when code == C2G_ERR_CUDA or OOM */
  char message[1024];
} c2g_error;

/* Library and devices. */
C2G_API int32_t c2g_abi_version(void);
C2G_API c2g_status c2g_device_count(int32_t* count, c2g_error* err);

typedef struct c2g_device_info {
  char name[256];
  uint64_t total_bytes;
  uint64_t free_bytes;
  int32_t sm_count;
  int32_t cc_major;
  int32_t cc_minor;
} c2g_device_info;
C2G_API c2g_status c2g_device_info_get(int32_t device, c2g_device_info* out, c2g_error* err);

/* Page-locked host memory (ABI version 3). c2g_host_register page-locks
 * [p, p+bytes) for every device (cudaHostRegisterPortable) and records the
 * range; c2g_task_upload copies a witness array that lies wholly inside a
 * recorded range straight from it (DMA) instead of through the staging
 * buffers. The range must not overlap one registered before and must stay
 * valid and unmoved until c2g_host_unregister(p) (p: the start given to
 * c2g_host_register). Registering takes time proportional to the size
 * (the pages are locked one by one): do it once per buffer, not per copy.
 * Errors: INVALID for a nil pointer, zero bytes, an overlap or an unknown
 * pointer; OOM/CUDA when the driver refuses. */
C2G_API c2g_status c2g_host_register(void* p, uint64_t bytes, c2g_error* err);
C2G_API c2g_status c2g_host_unregister(void* p, c2g_error* err);

/* Device buffers (benchmarks, standalone kernels). */
typedef struct c2g_buffer c2g_buffer;
C2G_API c2g_status c2g_buffer_alloc(int32_t device, uint64_t bytes, c2g_buffer** out, c2g_error* err);
C2G_API void c2g_buffer_free(c2g_buffer* buf);
C2G_API c2g_status c2g_buffer_write(int32_t device, c2g_buffer* buf, uint64_t offset, const void* src,
                            uint64_t bytes, c2g_error* err);
C2G_API c2g_status c2g_buffer_read(int32_t device, const c2g_buffer* buf, uint64_t offset, void* dst,
                           uint64_t bytes, c2g_error* err);
/* n random fr.Elements (Montgomery; uniform below 2^254) of which a fraction
 * frac01 are 0 or 1 (half each), from a counter-based generator. */
C2G_API c2g_status c2g_buffer_fill_random_fr(int32_t device, c2g_buffer* buf, uint64_t n, uint64_t seed,
                                     double frac01, c2g_error* err);
/* n distinct pseudo-random points of G1 (group 1) or G2 (group 2) in affine
 * form: P_i = T1[i mod 2^10] + T2[i >> 10] for tables of random multiples of
 * the generator. Meant for benchmarks, not for secrets. */
C2G_API c2g_status c2g_buffer_fill_random_points(int32_t device, c2g_buffer* buf, int32_t group, uint64_t n,
                                         uint64_t seed, c2g_error* err);
/* Copies bytes from one buffer to another on the same device. */
C2G_API c2g_status c2g_buffer_copy(int32_t device, c2g_buffer* dst, uint64_t dst_off, const c2g_buffer* src,
                           uint64_t src_off, uint64_t bytes, c2g_error* err);

/* Standalone multi-scalar multiplication: out = sum scalars[i] * bases[i],
 * i < n. bases: G1Affine or G2Affine array; scalars: fr.Element array
 * (Montgomery), left unchanged. out: one XYZZ point (192 or 384 bytes).
 * C2G_MSM_SPLIT=on (G1): the MSM runs on split bases as a key's H MSM
 * does, their copy made first (outside stats.ms). */
typedef struct c2g_msm_stats {
  uint64_t n_zero, n_one, n_minus_one, n_other; /* scalar classes (0, 1, r - 1, the rest) */
  uint32_t window_bits;            /* Pippenger window of the tail MSM */
  uint32_t batch_affine;           /* 1: the tail accumulated batch-affine (C2G_MSM_AFFINE) */
  float ms;                        /* device time of the whole MSM */
  uint32_t split;                  /* 1: on split bases (C2G_MSM_SPLIT=on, G1; ABI version 9) */
} c2g_msm_stats;
C2G_API c2g_status c2g_msm(int32_t device, int32_t group, const c2g_buffer* bases, const c2g_buffer* scalars,
                   uint64_t n, void* out, c2g_msm_stats* stats, c2g_error* err);

/* Fixed-base scalar multiplication for the Groth16 setup, host memory in
 * and out: out[i] = scalars[i]*G for i < n (affine, infinity as (0, 0)),
 * from the comb table table[w*2^(c-1) + j] = (j+1)*2^(c*w)*G, w < windows,
 * j < 2^(c-1), 2 <= c <= 24, windows*c >= 256. Points are G1Affine
 * (group 1) or G2Affine (group 2); scalars fr.Element (Montgomery). */
C2G_API c2g_status c2g_fixed_base(int32_t device, int32_t group, const void* table, uint32_t c, uint32_t windows,
                                  const void* scalars, uint64_t n, void* out, c2g_error* err);

/* Prime-order subgroup membership of n affine points in host memory
 * (G1Affine for group 1, G2Affine for group 2: gnark's layout, Montgomery
 * form, infinity as (0, 0)), each of which the caller has checked to be on
 * the curve: the endomorphism tests used are only valid there. *first_bad
 * is the index of the first point outside the subgroup, or -1 when every
 * point is in it. Streams the points through the device; synchronizes. */
C2G_API c2g_status c2g_subgroup_check(int32_t device, int32_t group, const void* points, uint64_t n,
                                      int64_t* first_bad, c2g_error* err);

/* In-place NTT of 2^log_n fr.Elements (Montgomery, natural order in and out)
 * with gnark-crypto's fft.Domain conventions: forward = FFT(DIF)+BitReverse,
 * inverse = FFTInverse (scaled by 1/n); coset uses the shift 7
 * (FrMultiplicativeGen): forward evaluates on 7*<w>, inverse undoes it. */
C2G_API c2g_status c2g_ntt(int32_t device, c2g_buffer* data, uint32_t log_n, int32_t inverse, int32_t coset,
                   float* ms, c2g_error* err);

/* Discrete Fourier transform of G1 points (ABI version 12), in place on
 * n = 2^log_n G1Affine points in host memory (log_n <= 27; Montgomery form,
 * infinity as (0, 0)): out_i = sum_j w^(ij) in_j, or w^(-ij) when inverse
 * (no 1/n factor), w the primitive n-th root of unity of gnark-crypto's
 * fft.Domain. scale, when not NULL, is two canonical Fr elements c, x
 * (Montgomery form, 32 bytes each, as gnark-crypto's fr.Element): in_j is
 * first multiplied by c x^j, on the device (n more scalar multiplications).
 * The points must lie in G1 (the twiddles act as scalars mod r).
 * Device memory: n XYZZ points (192 bytes each), n/2 twiddles (32 bytes
 * each) and a staging buffer of up to 2^22 affine points. ctl (optional)
 * lets another thread stop the call (cancel != 0: C2G_ERR_CANCELLED at the
 * next check, every 2^21 scalar multiplications or fewer) and follow it
 * (total, then done: scalar multiplications). stats may be NULL.
 * Synchronizes. Knobs: C2G_DFT_WINDOW (4 or 5), C2G_DFT_AFFINE (on, off). */
typedef struct c2g_dft_control {
  volatile int32_t cancel; /* set by the caller */
  volatile uint64_t done;  /* written by the library as it goes */
  volatile uint64_t total; /* written by the library at the start */
} c2g_dft_control;
typedef struct c2g_dft_stats {
  float ms;              /* the whole call (host clock): upload, stages, download */
  float ms_stages;       /* device time of the butterfly stages */
  uint64_t scalar_muls;  /* twiddle multiplications (butterflies with w^e != 1) */
  uint64_t scale_muls;   /* multiplications of the input by c x^j (n with a scale, else 0) */
  uint32_t window_bits;  /* signed window of the GLV halves */
  uint32_t affine_table; /* 1: each multiple table made affine (one inversion) */
} c2g_dft_stats;
C2G_API c2g_status c2g_dft_g1(int32_t device, void* points, uint32_t log_n, int32_t inverse, const void* scale,
                              c2g_dft_control* ctl, c2g_dft_stats* stats, c2g_error* err);

/* Element-wise arithmetic self-test: out[i] = op(in0[i], in1[i]), i < n, on
 * host arrays (copied to the device and back). See selftest ops below. */
enum {
  C2G_ST_FP_ADD = 1, C2G_ST_FP_SUB, C2G_ST_FP_MUL, C2G_ST_FP_SQR, C2G_ST_FP_NEG, C2G_ST_FP_FROM_MONT, C2G_ST_FP_INV,
  /* the inversion's two algorithms alone: the binary extended Euclid, and
   * divsteps without the Euclid's fallback (all limbs 0xffffffff when its
   * end state is wrong) */
  C2G_ST_FP_INV_EUCLID, C2G_ST_FP_INV_DIVSTEPS,
  C2G_ST_FR_ADD = 10, C2G_ST_FR_SUB, C2G_ST_FR_MUL, C2G_ST_FR_FROM_MONT,
  C2G_ST_FP2_ADD = 20, C2G_ST_FP2_SUB, C2G_ST_FP2_MUL, C2G_ST_FP2_SQR, C2G_ST_FP2_INV,
  /* curve ops: in0, in1 affine; out XYZZ. MADD: in0+in1 (mixed add);
   * ADD: 2*in0 + 2*in1 (full add); DBL: 4*in0; MUL_SMALL: k*in0 with k the
   * first 64 raw bits of in1.X */
  C2G_ST_G1_MADD = 30, C2G_ST_G1_ADD, C2G_ST_G1_DBL, C2G_ST_G1_MUL_SMALL,
  C2G_ST_G2_MADD = 40, C2G_ST_G2_ADD, C2G_ST_G2_DBL, C2G_ST_G2_MUL_SMALL
};
C2G_API c2g_status c2g_selftest(int32_t device, int32_t op, const void* in0, const void* in1, void* out,
                        uint64_t n, c2g_error* err);

/* ---- Groth16 prover -------------------------------------------------- */

enum {
  C2G_RESIDENCY_DEVICE = 1, /* parameters copied into device memory */
  C2G_RESIDENCY_PINNED = 2  /* parameters stay in (page-locked) host memory,
                               streamed to the device per MSM */
};

/* Parameter arrays of a proving key (bellperson .params order). For each
 * query either the host pointer or the device buffer is set. Buffers are
 * borrowed (not copied, not freed by the key). */
/* What a key's H query holds (c2g_key_desc.h_form; ABI version 10). */
enum {
  /* bellperson's: domain - 1 points tau^i Z(tau) / delta; the prover
   * weighs them with h's coefficients (six NTTs) */
  C2G_H_MONOMIAL = 0,
  /* domain points l_i(tau) kappa / delta, l_i the Lagrange basis of the
   * coset g<w> (g = 7), kappa = Z(tau) / (g^n - 1); the prover weighs them
   * with the products of a's and b's coset evaluations (four NTTs). The
   * key's L query and the host's input term take C's share back out, from
   * the assignment: the witness's c is not read, and an assignment that
   * does not satisfy the constraints, or an a or b that does not match it,
   * gives a proof that fails verification rather than C2G_ERR_UNSATISFIED (docs/cuda.md, "H in
   * coset-Lagrange form"). */
  C2G_H_COSET_LAGRANGE = 1
};

typedef struct c2g_key_desc {
  uint64_t domain;     /* n, a power of two, 2 <= n <= 2^27: |H| + 1 (monomial) or |H| */
  uint64_t num_inputs; /* public inputs incl. the constant one */
  uint64_t num_aux;    /* |L| */
  uint64_t num_a;      /* |A| = num_inputs + popcount(a_density_aux) */
  uint64_t num_b;      /* |B_G1| = |B_G2| */
  const void* h;       /* G1Affine[domain-1], or G1Affine[domain] (h_form coset-Lagrange) */
  const void* l;       /* G1Affine[num_aux] */
  const void* a;       /* G1Affine[num_a] */
  const void* b_g1;    /* G1Affine[num_b] */
  const void* b_g2;    /* G2Affine[num_b] */
  const c2g_buffer* h_buf;
  const c2g_buffer* l_buf;
  const c2g_buffer* a_buf;
  const c2g_buffer* b_g1_buf;
  const c2g_buffer* b_g2_buf;
  int32_t residency;     /* C2G_RESIDENCY_*; buffers imply DEVICE */
  uint64_t stream_chunk; /* pinned residency: points per staging chunk (0: 2^22) */
  int32_t h_form;        /* C2G_H_* (ABI version 10) */
} c2g_key_desc;

typedef struct c2g_key c2g_key;
typedef struct c2g_task c2g_task;

/* Device bytes c2g_key_create will allocate for desc (parameters when
 * resident, twiddle tables, streaming buffers). Allocates nothing. Not
 * counted: the H query's split copy (C2G_MSM_SPLIT), which a resident key
 * adds only where the device has room for it and two tasks besides. */
C2G_API c2g_status c2g_key_device_bytes(int32_t device, const c2g_key_desc* desc, uint64_t* bytes,
                                c2g_error* err);
C2G_API c2g_status c2g_key_create(int32_t device, const c2g_key_desc* desc, c2g_key** out, c2g_error* err);
C2G_API void c2g_key_free(c2g_key* key);

/* Device bytes one task of `rows` rows (constraints + inputs, <= domain)
 * will allocate in c2g_task_upload and use through c2g_task_compute, so a
 * caller can reserve them from a budget first. Host-only computation. */
C2G_API c2g_status c2g_key_task_bytes(int32_t device, const c2g_key* key, uint64_t rows, uint64_t* bytes,
                                      c2g_error* err);
/* Device bytes one task of a key made from desc would allocate (as
 * c2g_key_task_bytes), before the key exists: overlap 0 with its MSMs in
 * order — the least a task of any key takes —, 1 with the L, A and B MSMs
 * beside H (what a key that decided to overlap lays out; device residency
 * only). Host-only computation. (ABI version 8) */
C2G_API c2g_status c2g_desc_task_bytes(int32_t device, const c2g_key_desc* desc, int32_t overlap, uint64_t* bytes,
                                       c2g_error* err);
/* A task proves one witness with a key. Creating it makes the task's
 * streams and events; device memory is allocated by c2g_task_upload. */
C2G_API c2g_status c2g_task_create(int32_t device, c2g_key* key, uint64_t rows, c2g_task** out, c2g_error* err);

typedef struct c2g_witness {
  const void* a;                   /* fr.Element[rows] */
  const void* b;                   /* fr.Element[rows] */
  const void* c;                   /* fr.Element[rows]; not read (may be NULL) when the key's H
                                    * is coset-Lagrange (ABI version 10) */
  const void* input;               /* fr.Element[num_inputs], input[0] = 1 */
  const void* aux;                 /* fr.Element[num_aux] */
  const uint64_t* a_density_aux;   /* bitmap, (num_aux+63)/64 words */
  const uint64_t* b_density_input; /* bitmap, (num_inputs+63)/64 words */
  const uint64_t* b_density_aux;   /* bitmap, (num_aux+63)/64 words */
  /* Optional value codes of a, b, c and aux, one byte per value (rows,
   * rows, rows, num_aux bytes): C2G_CODE_*. A vector whose codes are given
   * and whose values lie in a range registered with c2g_host_register is
   * uploaded as its codes: the library copies the codes, writes 0, 1,
   * r - 1 and 2 itself and reads only the values coded C2G_CODE_OTHER, straight
   * from the registered memory. Any other vector is copied whole. A code
   * that does not match its value changes the proof (which then fails
   * verification): the caller owns their correctness. */
  const uint8_t* a_codes;
  const uint8_t* b_codes;
  const uint8_t* c_codes;
  const uint8_t* aux_codes;
} c2g_witness;

enum {
  C2G_CODE_ZERO = 0,
  C2G_CODE_ONE = 1,       /* the field's one (Montgomery form: R mod r) */
  C2G_CODE_MINUS_ONE = 2, /* r - 1 */
  C2G_CODE_OTHER = 3,     /* any other value: read from the host array */
  C2G_CODE_TWO = 4        /* 2 (Montgomery form: 2R mod r); any code above
                           * it reads the host array like OTHER */
};

/* Allocates the task's device memory and copies the witness in; returns
 * when the host arrays may be reused. The environment variable
 * C2G_UPLOAD_CODES=off makes it ignore the codes (benchmarks). */
C2G_API c2g_status c2g_task_upload(int32_t device, c2g_task* task, const c2g_witness* w, c2g_error* err);
/* Runs the H computation and the five MSMs on the device. */
C2G_API c2g_status c2g_task_compute(int32_t device, c2g_task* task, c2g_error* err);

typedef struct c2g_results {
  uint8_t h[192];     /* sum h_i H_i            (G1 XYZZ) */
  uint8_t l[192];     /* sum aux_i L_i          (G1 XYZZ) */
  uint8_t a[192];     /* sum of the A query     (G1 XYZZ) */
  uint8_t b_g1[192];  /* sum of the B_G1 query  (G1 XYZZ) */
  uint8_t b_g2[384];  /* sum of the B_G2 query  (G2 XYZZ) */
  float ms_upload, ms_h, ms_msm_h, ms_msm_l, ms_msm_a, ms_msm_b_g1, ms_msm_b_g2, ms_compute;
  /* c2g_task_upload: bytes copied straight from registered host memory
   * (c2g_host_register) and bytes copied through the staging buffers */
  uint64_t upload_direct_bytes, upload_staged_bytes;
  /* bytes of witness values uploaded as codes (their vectors' full size),
   * and the number of values read from host memory because they were
   * coded C2G_CODE_OTHER */
  uint64_t upload_coded_bytes, upload_other_values;
  /* 1 when the L, A and B MSMs ran beside H and the H MSM (the key's
   * overlap, decided at c2g_key_create; C2G_OVERLAP), 0 when one after
   * another (ABI version 7) */
  uint32_t msms_overlapped;
  /* the window of the H MSM when it ran on split bases (the key's, made at
   * c2g_key_create; C2G_MSM_SPLIT), 0 when not (ABI version 9) */
  uint32_t msm_h_split_bits;
} c2g_results;
C2G_API c2g_status c2g_task_results(int32_t device, const c2g_task* task, c2g_results* out, c2g_error* err);
/* Asks a running c2g_task_compute to stop at its next step (any thread). */
C2G_API void c2g_task_cancel(c2g_task* task);
/* Frees the task's device memory. */
C2G_API void c2g_task_free(c2g_task* task);

#ifdef __cplusplus
}
#endif
#endif /* C2G_H */
