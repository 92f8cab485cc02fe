// Host-side bit counting for the upload's density checks, shared with the
// host test library (cuda/test/hostarith.cpp) so the Go tests check it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace c2g {

// popcount_bits returns the set bits among the first nbits of w. A 32 GiB
// partition's densities are 2 Mi words each: they are counted on up to 8
// threads (on one core the count of a 2^26 partition's densities took 5 ms
// of its upload); a thread that cannot be started leaves its share to the
// caller's.
inline uint64_t popcount_bits(const uint64_t* w, uint64_t nbits) {
  const uint64_t words = nbits / 64;
  auto count = [w](uint64_t lo, uint64_t hi) {
    uint64_t c = 0;
    for (uint64_t i = lo; i < hi; i++) c += __builtin_popcountll(w[i]);
    return c;
  };
  constexpr uint64_t kPerThread = 1ull << 18;
  const uint64_t parts = std::min<uint64_t>(8, std::max<uint64_t>(1, words / kPerThread));
  std::vector<uint64_t> part(parts);
  std::vector<std::thread> threads;
  uint64_t p = 1;  // parts [1, p) run on their own threads
  for (; p < parts; p++) {
    try {
      threads.emplace_back([&part, &count, words, parts, p] { part[p] = count(words * p / parts, words * (p + 1) / parts); });
    } catch (...) {
      break;
    }
  }
  uint64_t c = count(0, words / parts) + count(words * p / parts, words);
  for (std::thread& t : threads) t.join();
  for (uint64_t i = 1; i < p; i++) c += part[i];
  if (nbits % 64) c += __builtin_popcountll(w[words] & ((1ull << (nbits % 64)) - 1));
  return c;
}

}  // namespace c2g
