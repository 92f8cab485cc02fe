// Host-side bit counting for the upload's density checks, shared with the
// host test library (cuda/test/hostarith.cpp) so the Go tests check it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace c2g {

// run_parts runs fn(p) for every p in [0, parts): parts 1 … parts−1 on
// threads of their own, part 0 on the caller's; a part whose thread cannot
// be started runs on the caller's too. It returns once all have run.
template <class F>
inline void run_parts(uint64_t parts, F fn) {
  std::vector<std::thread> threads;
  uint64_t p = 1;  // parts [1, p) run on their own threads
  for (; p < parts; p++) {
    try {
      threads.emplace_back([&fn, p] { fn(p); });
    } catch (...) {
      break;
    }
  }
  fn(0);
  for (uint64_t q = p; q < parts; q++) fn(q);
  for (std::thread& t : threads) t.join();
}

// popcount_bits returns the set bits among the first nbits of w. A 32 GiB
// partition's densities are 2 Mi words each: they are counted on up to 8
// threads (on one core the count of a 2^26 partition's densities took 5 ms
// of its upload).
inline uint64_t popcount_bits(const uint64_t* w, uint64_t nbits) {
  const uint64_t words = nbits / 64;
  constexpr uint64_t kPerThread = 1ull << 18;
  const uint64_t parts = std::min<uint64_t>(8, std::max<uint64_t>(1, words / kPerThread));
  std::vector<uint64_t> part(parts);
  run_parts(parts, [&](uint64_t p) {
    uint64_t c = 0;
    for (uint64_t i = words * p / parts; i < words * (p + 1) / parts; i++) c += __builtin_popcountll(w[i]);
    part[p] = c;
  });
  uint64_t c = 0;
  for (uint64_t x : part) c += x;
  if (nbits % 64) c += __builtin_popcountll(w[words] & ((1ull << (nbits % 64)) - 1));
  return c;
}

}  // namespace c2g
