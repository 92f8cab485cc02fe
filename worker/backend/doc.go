// Package backend is the worker's registry of Groth16 prover backends and
// the `backend: auto | cpu | cuda` selection.
//
// A backend is registered as a Factory: a name, a probe that says which
// devices it can use on this host (or why none), and a constructor that
// binds a groth16.Backend to one device index. The CPU backend (pure Go,
// pkg/groth16) is always registered. The CUDA backend (pkg/groth16/cuda,
// which loads its library with dlopen at run time, so every build has it)
// is registered by cuda.go; build with `-tags c2nocuda` to leave it out.
// Other backends plug in the same way, with no change to the worker.
//
// Select resolves the configured name: "cpu" and "cuda" are taken as asked
// (an unusable CUDA is an error naming what is missing); "auto" takes CUDA
// when its probe finds a device and the CPU otherwise, and says which and
// why in Selection.Why, for the worker's start-up log.
//
// The package holds no proving code and no device locks (worker/interlock).
package backend
