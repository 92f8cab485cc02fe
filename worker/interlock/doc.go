// Package interlock runs the staged Groth16 prover (groth16.Key / Task) on
// one device under a configurable lock discipline and a device-memory
// budget, so several worker slots can share a GPU without stepping on each
// other (docs/worker.md, "The interlock").
//
// Modes (Config.Mode):
//
//	none       no lock: every stage of every slot may overlap
//	exclusive  one lock around the whole proof (Prepare … Finish)
//	compute    one lock around Task.Compute only (the default): host
//	           preparation, the upload ("pre-staging") and the epilogue
//	           of one slot overlap another slot's kernels
//	split      an upload lock around Task.Upload and a compute lock around
//	           Task.Compute: at most one upload and one compute at a time
//
// Whatever the mode, a task reserves Task.DeviceBytes() from the device's
// VRAM budget before Upload and gives it back after Release, waiting (never
// failing with out-of-memory) while others hold it; a task larger than the
// whole budget fails at once with ErrExceedsBudget.
//
// Waiting is measured on its own: every wait (for a lock or for VRAM) is an
// "interlock.wait" span and a c2_lock_wait_seconds observation, and it is
// never inside a "gpu.upload" or "gpu.compute" span or timer. The stage
// spans are "prepare", "gpu.upload", "gpu.compute" and "epilogue".
//
// An Observer (Config.Observer) sees every wait, acquisition and release
// and every stage start and end, in order: tests use it as their signal,
// operators can log it.
//
// The package knows nothing of queues, jobs or circuits, and it does not
// pick the device: each backend is bound to its device index by its
// constructor (worker/backend).
package interlock
