// Package cuda is the GPU backend of the Groth16 engine: a groth16.Backend
// that proves on an NVIDIA GPU through libc2groth16.so, the CUDA prover built
// from the repository's cuda/ folder.
//
// The library is loaded at run time with dlopen (Open, New), so the default
// Go build and CI need no CUDA toolkit: with no library or no device, New
// returns an error wrapping ErrLibrary or ErrNoDevice, and Select falls back
// to the CPU backend in "auto" mode. Binaries built with CGO_ENABLED=0 always
// report the library as unavailable.
//
// The package holds:
//   - the cgo binding (dlopen/dlsym of the C ABI in cuda/include/c2g.h), with
//     every call made on a locked OS thread for an explicit device index;
//   - Backend, Key and Task implementing the staged groth16 interfaces:
//     Load puts the parameters in device memory when they fit the budget
//     (else page-locked host memory, streamed per MSM), Prepare is host-only
//     and reports DeviceBytes before anything is allocated, Upload copies
//     the witness, Compute runs the H computation and the five MSMs on the
//     device, Finish assembles the proof on the host;
//   - Select, the "auto | cpu | cuda" choice a worker makes from its config;
//   - Library, the low-level handle (device buffers, standalone MSM and NTT,
//     arithmetic self-tests) used by the tests and the c2g-bench command.
//
// It does not hold the kernels (cuda/), the CPU reference (package groth16)
// or any scheduling of devices and slots (the worker).
package cuda
