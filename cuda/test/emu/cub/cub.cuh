// CPU stand-ins for the two CUB device algorithms libc2groth16 uses (see
// ../cuda_runtime.h): a stable radix sort of key/value pairs on a bit range
// and an exclusive prefix sum, with CUB's calling conventions.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace cub {

template <class T>
struct DoubleBuffer {
  T* d_buffers[2];
  int selector = 0;
  DoubleBuffer(T* a, T* b) : d_buffers{a, b} {}
  T* Current() { return d_buffers[selector]; }
  T* Alternate() { return d_buffers[selector ^ 1]; }
};

struct DeviceRadixSort {
  template <class K, class V>
  static cudaError_t SortPairs(void* temp, size_t& bytes, DoubleBuffer<K>& keys, DoubleBuffer<V>& vals, int n,
                               int begin_bit, int end_bit, cudaStream_t = nullptr) {
    if (temp == nullptr) {
      bytes = 64;
      return cudaSuccess;
    }
    if (bytes < 64) return cudaErrorInvalidValue;
    const K mask = (end_bit - begin_bit >= (int)(8 * sizeof(K))) ? (K)~(K)0 : (K)(((K)1 << (end_bit - begin_bit)) - 1);
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    K* k = keys.Current();
    V* v = vals.Current();
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int a, int b) { return ((k[a] >> begin_bit) & mask) < ((k[b] >> begin_bit) & mask); });
    K* ko = keys.Alternate();
    V* vo = vals.Alternate();
    for (int i = 0; i < n; i++) {
      ko[i] = k[idx[i]];
      vo[i] = v[idx[i]];
    }
    keys.selector ^= 1;
    vals.selector ^= 1;
    return cudaSuccess;
  }
};

struct DeviceScan {
  template <class In, class Out>
  static cudaError_t ExclusiveSum(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = nullptr) {
    if (temp == nullptr) {
      bytes = 64;
      return cudaSuccess;
    }
    if (bytes < 64) return cudaErrorInvalidValue;
    typename std::remove_reference<decltype(*out)>::type acc = 0;
    for (int i = 0; i < n; i++) {
      auto x = in[i];
      out[i] = acc;
      acc += x;
    }
    return cudaSuccess;
  }
};

}  // namespace cub
