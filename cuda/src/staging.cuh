// Host-to-device copies from pageable host memory (the Go heap) through
// pinned staging buffers, several host threads at once.
//
// A plain cudaMemcpy from pageable memory runs at single-core memcpy speed
// (8 GB/s on the H200 host: 2 s for a 32 GiB partition's 17 GB witness).
// Here each of T lanes (a host thread with its own stream and two pinned
// buffers) takes the next chunk, copies it into a free buffer and issues
// the DMA, so host copies run in parallel and overlap the transfers.
//
// A source that lies wholly inside a range page-locked with host_register
// (c2g_host_register) skips the staging: it is copied straight from there
// with cudaMemcpyAsync in large chunks over the lanes' streams, so it costs
// no host memcpy at all.
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

struct upload_stats {
  uint64_t direct_bytes = 0;  // copied straight from registered host memory
  uint64_t staged_bytes = 0;  // copied through the pinned staging buffers
};

// Copies every job and returns once all of them are on the device. Uploads
// to one device take turns (they share its link); the lanes and their pinned
// buffers are created on a device's first upload and kept. Lanes: the
// C2G_UPLOAD_THREADS environment variable, else half the host's cores, at
// most 8. Jobs whose source is inside a registered range go direct.
upload_stats staged_upload(int device, const std::vector<h2d_copy>& jobs);

// Page-locks [p, p+bytes) (cudaHostRegisterPortable, and mapped into every
// device's address space) and records the range;
// throws INVALID for nil, zero bytes or an overlap with a recorded range.
void host_register(void* p, uint64_t bytes);
// Unlocks the range registered at p and forgets it; INVALID if unknown.
void host_unregister(void* p);
// Whether [p, p+bytes) lies wholly inside one registered range.
bool host_registered(const void* p, uint64_t bytes);
// The address through which the current device reads host memory p (a
// kernel's loads cross the link), when [p, p+bytes) lies wholly inside one
// registered range; nullptr otherwise.
const void* host_mapped(const void* p, uint64_t bytes);

}  // namespace c2g
