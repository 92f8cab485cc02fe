// Package server is the c2cluster coordinator: the ProofService API (served
// over gRPC and HTTP/JSON by one connect handler), the job state machine's
// coordinator-side transitions, the assembler and the dead-letter handler.
//
// Submit validates a C1 output (size limit, structure, optionally the native
// vanilla-proof check), honours the idempotency key, stores the C1 blob once
// in the JetStream object store, records the job in Redis and publishes one
// task per partition. Workers (worker/, or any process using pkg/queue and
// pkg/jobstore the same way) prove partitions and, when the last is in,
// request assembly; the assembler concatenates the partition proofs in
// order, batch-verifies them and marks the job done. Dead letters fail their
// job with the last error. Every piece of state lives in Redis or JetStream,
// so a restarted coordinator picks up where the last one stopped (Start
// reconciles jobs caught half-way).
//
// The proof system is behind the small ProofSystem interface; PoRep is the
// real one (pkg/porep + pkg/groth16). The package does not prove anything
// and holds no worker code.
package server
