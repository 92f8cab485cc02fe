// Package cuzk serves Curio's cuzk proving-engine API (gRPC service
// cuzk.v1.ProvingEngine, proto/cuzk/v1) on top of the coordinator's own
// service, so that a Curio node pointed at the coordinator's cuzk address
// proves PoRep C2 through the cluster with no change on Curio's side.
//
// The Engine calls the coordinator through its public API methods (Submit,
// Await, Cancel, Status of *server.Server, or any Coordinator); it never
// touches Redis or NATS itself. How the cuzk calls map onto the cluster:
//
//   - SubmitProof (POREP_SEAL_COMMIT): vanilla_proof is the C1 output —
//     Curio sends filecoin-ffi's SealCommitPhase1 JSON as it is; lotus-bench's
//     Commit2In envelope is accepted too (the coordinator's Submit detects
//     it). sector_size and registered_proof (0 = not given) must describe the
//     C1 output's proof type. miner_id and sector_number become the job's
//     SectorRef (miner_id 0 = unknown), so the coordinator checks the C1
//     output's replica id against them before queueing. priority maps onto
//     the lanes: CRITICAL and HIGH → high, NORMAL and unspecified → normal,
//     LOW → low. request_id is the idempotency key, refined so that a retry
//     does what Curio expects (see idempotencyKey): the same request_id with
//     the same vanilla_proof returns the same job; a new C1 output under the
//     same request_id, or a resubmission after the job failed or was
//     cancelled, starts a new job. The response carries the coordinator's
//     job id; queue_position and assigned_gpu stay empty (the cluster queues
//     partitions, not whole proofs, and assigns them to devices one by one).
//   - AwaitProof: done → COMPLETED with the proof (the partitions' 192-byte
//     proofs in partition order, as SealCommitPhase2 returns them), failed →
//     FAILED, cancelled → CANCELLED (error_message: the reason), still
//     running at the timeout → TIMEOUT. timeout_ms 0 waits as long as the
//     coordinator lets one Await wait (its AwaitMax, 10 min by default).
//     Times: queue_wait_ms, synthesis_ms and gpu_compute_ms (the Groth16
//     prove) are the job's stage times summed over its partitions,
//     total_ms is the job's wall time; srs_load_ms is 0 (workers keep
//     parameters resident).
//   - Prove: SubmitProof, then waits until the job ends — Await after Await,
//     bounded only by the caller's deadline (Curio's ProveTimeout).
//   - CancelProof: cancels the job; was_running tells whether a worker had
//     started on it. Cancelling a cancelled job is a no-op; a done or failed
//     one is FailedPrecondition.
//   - GetStatus: gpus lists every device of every registered worker,
//     named "<worker>/<device>"; loaded_srs the shapes workers hold, as
//     circuit ids ("porep-32g"; "porep-<shape>" for test shapes); queues one
//     entry, POREP_SEAL_COMMIT, with the queued and in-flight partition tasks
//     converted to proofs (divided by the shape's partitions per proof,
//     rounded up — Curio compares their sum with its MaxPending); totals of
//     completed and failed proofs are the coordinator's since it started,
//     uptime the Engine's.
//   - GetMetrics: the coordinator's Prometheus registry in the text
//     exposition format (what /metrics serves).
//   - PreloadSRS: workers load the parameters of their shapes when they
//     start and keep them resident per device, so nothing is loaded on
//     request; already_loaded reports whether a registered worker holds the
//     circuit's parameters (load_time_ms 0). EvictSRS is a no-op (was_loaded
//     false, freed_bytes 0; the response header C2-Note says so): parameters
//     leave a device when its worker stops.
//   - SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION, WINNING_POST and
//     PROOF_KIND_UNSPECIFIED are Unimplemented, naming the kind.
//
// Errors are gRPC status codes whose messages name the field or the job.
package cuzk
