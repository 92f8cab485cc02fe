// Host-to-device copies from pageable host memory (the Go heap) through
// pinned staging buffers, several host threads at once.
//
// A plain cudaMemcpy from pageable memory runs at single-core memcpy speed
// (8 GB/s on the H200 host: 2 s for a 32 GiB partition's 17 GB witness).
// Here each of T lanes (a host thread with its own stream and two pinned
// buffers) takes the next chunk, copies it into a free buffer and issues
// the DMA, so host copies run in parallel and overlap the transfers.
#pragma once
#include <cstdint>
#include <vector>
#include "common.cuh"

namespace c2g {

struct h2d_copy {
  void* dst;        // device
  const void* src;  // host, any memory
  uint64_t bytes;
};

// Copies every job and returns once all of them are on the device. Uploads
// to one device take turns (they share its link); the lanes and their pinned
// buffers are created on a device's first upload and kept. Lanes: the
// C2G_UPLOAD_THREADS environment variable, else half the host's cores, at
// most 8.
void staged_upload(int device, const std::vector<h2d_copy>& jobs);

}  // namespace c2g
