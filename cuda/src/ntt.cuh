// Number-theoretic transforms over Fr (radix-2, shared-memory passes of up
// to 10 stages each) and the Groth16 H computation.
#pragma once
#include "common.cuh"
#include "field.cuh"

namespace c2g {

constexpr uint32_t NTT_MAX_LOG = 28;  // gnark's Fr has 2-adicity 32; we cap at 2^28
constexpr uint32_t COSET_TABLE_BITS = 14;  // g^j = lo[j & 16383] * hi[j >> 14], j < 2^28

// Host-side Fr helpers (the same arithmetic code, run on the CPU).
fr_t fr_host_one();
fr_t fr_host_from_u64(uint64_t v);
fr_t fr_host_pow(fr_t x, uint64_t e);
fr_t fr_host_inv(fr_t x);
fr_t fr_host_root_of_unity(uint32_t log_n);  // generator of the 2^log_n roots (gnark's fr.Generator)
bool fr_host_canonical(const fr_t& x);       // x < r (limbs as stored)
fr_t fr_host_coset_gen();                    // 7

// Device tables for domains up to 2^max_log: omega[e] = w^e, e < 2^(max_log-1)
// (w of order 2^max_log), and split power tables of the coset shift g and
// its inverse.
struct ntt_tables {
  uint32_t max_log = 0;
  fr_t* omega = nullptr;
  fr_t* g_lo = nullptr;  // g^j
  fr_t* g_hi = nullptr;  // g^(j << COSET_TABLE_BITS)
  fr_t* gi_lo = nullptr;
  fr_t* gi_hi = nullptr;
  void* mem = nullptr;
  static uint64_t bytes_for(uint32_t max_log);
  // Allocates (cudaMalloc) and fills the tables; synchronizes stream.
  void build(uint32_t max_log, cudaStream_t st);
  void free();
};

// In-place transforms of 2^log_n elements.
// dif: natural order in, bit-reversed out; dit: bit-reversed in, natural out.
// inverse selects w^-1 (no 1/n scaling here).
void ntt_dif(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st);
void ntt_dit(fr_t* d, uint32_t log_n, bool inverse, const ntt_tables& t, cudaStream_t st);

// gnark-crypto fft.Domain conventions, natural order in and out.
void ntt_natural(fr_t* d, uint32_t log_n, bool inverse, bool coset, const ntt_tables& t, cudaStream_t st);

// H computation: a, b, c hold the domain's evaluations (n = 2^log_n,
// Montgomery); on return h_out[0..n) holds the coefficients of
// h = (a*b - c)/Z in CANONICAL form (ready for the MSM), by six NTTs of
// size n (ntt.cu); a, b, c are clobbered. h_out may alias b, not a or c.
void compute_h(fr_t* a, fr_t* b, fr_t* c, uint32_t log_n, const ntt_tables& t, fr_t* h_out, cudaStream_t st);
// The H MSM's scalars for a coset-Lagrange key (c2g.h, C2G_H_COSET_LAGRANGE):
// b[i] = A(g w^i) B(g w^i), canonical, with four NTTs (a is spent).
void compute_coset_products(fr_t* a, fr_t* b, uint32_t log_n, const ntt_tables& t, cudaStream_t st);

}  // namespace c2g
