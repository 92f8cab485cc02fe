package groth16

import (
	"context"
	"time"
)

// Backend proves synthesized instances. A backend is split into stages so
// that a worker can hold a device lock around exactly the stages that use the
// device (docs/worker.md, "The interlock"):
//
//	key  := backend.Load(ctx, pk)          // once per process: parameters resident
//	task := key.Prepare(ctx, w, rnd)       // host only, no device access
//	task.Upload(ctx)                       // host → device transfers
//	task.Compute(ctx)                      // device kernels (NTT, H, MSMs)
//	proof := task.Finish(ctx)              // host epilogue, assembles the proof
//	task.Release()                         // always, on every path
//
// Every stage honours ctx cancellation and returns an error instead of
// panicking. The CPU backend does its work in Compute and treats Upload as a
// no-op; with fixed Randomness every backend produces byte-identical proofs.
type Backend interface {
	// Name is a short identifier ("cpu", "cuda").
	Name() string
	// Load makes pk available to this backend (for a GPU: resident in device
	// memory or in pinned host memory). The returned Key is safe for
	// concurrent use by several tasks.
	Load(ctx context.Context, pk *ProvingKey) (Key, error)
}

// Key is a proving key loaded on a backend.
type Key interface {
	// Prepare validates w against the key (lengths, densities) and does the
	// host-side preparation. It touches no device.
	Prepare(ctx context.Context, w *Synthesized, rnd Randomness) (Task, error)
	// Residency says where the parameters live ("host", "device", "pinned").
	Residency() string
	// Close releases what Load acquired. Tasks must be released first.
	Close() error
}

// Task is one proof in flight on a backend.
type Task interface {
	// DeviceBytes is the device memory Upload and Compute will allocate, so a
	// worker can reserve it from a per-device budget first. 0 for the CPU.
	DeviceBytes() int64
	Upload(ctx context.Context) error
	Compute(ctx context.Context) error
	Finish(ctx context.Context) (*Proof, error)
	// Timings reports the time of each stage run so far.
	Timings() Timings
	// Release frees the task's buffers; safe to call more than once.
	Release()
}

// WitnessHolder is implemented by tasks that stop reading the witness given
// to Prepare before they are released. HoldsWitness reports whether the task
// may still read it (its A, B, C, Input and Aux); once it reports false the
// caller may overwrite the witness or reuse its buffers for the next one
// (Synthesized.Release) while the task goes on. The CUDA backend holds it
// until Upload returns (the library copies it to the device), the CPU
// backend until Compute returns (Prepare copies A, B, C; the L MSM reads
// Aux). A task that does not implement it holds the witness until Release.
// Call it from the goroutine running the task's stages.
type WitnessHolder interface {
	HoldsWitness() bool
}

// HoldsWitness reports whether t may still read its witness (see
// WitnessHolder): true for a task that does not say.
func HoldsWitness(t Task) bool {
	h, ok := t.(WitnessHolder)
	return !ok || h.HoldsWitness()
}

// Timings are per-stage durations of one proof.
type Timings struct {
	Prepare time.Duration
	Upload  time.Duration
	// Compute is the whole device stage; the fields below break it down.
	Compute time.Duration
	H       time.Duration // iNTT of a, b, c; coset NTT of a, b; coset iNTT of a·b; (R − C)/(gⁿ − 1)
	MSMH    time.Duration
	MSML    time.Duration
	MSMA    time.Duration
	MSMBG1  time.Duration
	MSMBG2  time.Duration
	Finish  time.Duration
	// UploadDirectBytes is the part of the witness Upload copied straight
	// from page-locked host memory (the cuda backend with registered
	// buffers); the rest went through staging buffers. Known once Compute
	// has returned.
	UploadDirectBytes int64
	// UploadCodedBytes is the part of the witness's values Upload sent as
	// value codes (Synthesized.Codes; the cuda backend with registered
	// buffers) and the device expanded: of those only the values coded
	// other crossed the link.
	UploadCodedBytes int64
	// MSMHSplitBits is the window of the H MSM when it ran on split bases
	// (the cuda backend's resident keys, C2G_MSM_SPLIT: docs/cuda.md), 0
	// when it did not.
	MSMHSplitBits int
}
