// Package node is the c2cluster worker: one process per host that proves
// partition tasks from the JetStream queue on its devices and records the
// results in Redis.
//
// At New, a Node selects its prover backend (worker/backend: auto, cpu or
// cuda), compiles the partition circuit of every configured shape, reads
// and checks each shape's parameters (<params_dir>/<shape>.params, and the
// .vk beside it when present) and loads them once onto every device, where
// they stay resident for the life of the process. A missing, corrupt or
// mismatched parameter file is an error at New, naming the file — never a
// failure at the first task.
//
// Start runs slots = devices × gpu_workers_per_device. Each slot is pinned
// to one device index (its backend instance is bound to that index) and
// loops on a pkg/queue Slot: Fetch(1) with InProgress heartbeats, then
//
//	Begin (fence: this delivery's attempt becomes current)
//	→ load the C1 blob (shared per job, SHA-256 checked) → job still open?
//	→ synthesize (CPU) → job still open?
//	→ prove through the device's interlock (worker/interlock)
//	→ verify the partition proof against the natively computed public inputs
//	→ Complete (the fenced Lua script) → request assembly when it was the last
//	→ ack.
//
// Bad input (an undecodable or tampered C1, a lost blob) terminates the task
// with its reason; anything else is retried with a delay, and the error is
// recorded as the job's last error; a panic in a slot becomes an error with
// its file and line. Spans (docs/cluster.md, "Telemetry"): "partition" (consumer; job,
// partition, attempt, worker, device) with "synthesize", "interlock.wait",
// "prepare", "gpu.upload", "gpu.compute", "epilogue", "verify" inside.
//
// The worker registers in Redis (host, devices, slots, resident parameters,
// partitions in flight) and refreshes that on a heartbeat. Stop drains in two
// phases: slots stop fetching and in-flight partitions may finish within
// DrainTimeout; then the rest are aborted and handed back to the queue at once.
//
// The proving part of a worker is a Prover (NewProver): the selected
// backend, the parameters (ShapeParams, from a folder with LoadShapeParams
// or made in memory with NewShapeParams) loaded onto every device, each
// device's interlock, and its Slots, whose ProvePartition runs synthesis,
// the interlocked proof and verification. A Node drives its Prover's slots
// from the queue; worker/cmd/c2-bench feeds the same slots directly.
//
// The package does not start servers (NATS, Redis) or parse flags: the worker
// binary (worker/) and the single-node mode (worker/singlenode) do.
package node
