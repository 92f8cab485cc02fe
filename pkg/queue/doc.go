// Package queue is c2cluster's work queue on NATS JetStream, used by both
// sides of the cluster.
//
// Coordinator side: Open provisions (idempotently) the partition stream, the
// control stream, the dead-letter stream and the C1 blob bucket; Publish puts
// one PartitionTask per partition on subject c2.part.<shape>.<lane> with
// Nats-Msg-Id "<job>.<partition>" (deduplicated by the stream) and the W3C
// trace context in its headers; PutBlob stores a job's C1 output once, by job
// id, in a JetStream object store (tasks carry only its name, so no payload
// comes near the 1 MiB message limit); DeleteTasks removes a cancelled job's
// pending tasks by their stream sequences; Depth reports the backlog per
// shape and lane; RunAssembly and RunDeadLetters consume the durable control
// and dead-letter streams.
//
// Worker side: a Slot pulls one task at a time (FetchNoWait(1), never a
// prefetch, since the ack timer starts at delivery) from one durable pull
// consumer per (shape, lane), polling lanes in priority order; it sends
// InProgress heartbeats well inside AckWait while the handler runs and turns
// the handler's result into Ack, NakWithDelay (transient error, Retry) or
// Term with a reason (bad input, Permanent). RequestAssembly tells the
// coordinator that a job's last partition is in.
//
// Dead letters: partitions that exhaust MaxDeliver (MAX_DELIVERIES advisory)
// or are terminated (MSG_TERMINATED advisory) are captured by a stream that
// subscribes to those advisories, so none is lost while no coordinator runs;
// RunDeadLetters hands job, partition and reason to a callback.
//
// Connecting: Dial takes a ConnConfig (URLs; user and password, token,
// nkey seed or creds file; CA, client certificate and key for TLS), the
// settings both binaries share, and refuses a server older than
// MinServerVersion (2.10.4: the first to honour a termination with a
// reason). Errors show URLs through secret.RedactURL, never a secret.
//
// The package knows nothing of proofs or job state (pkg/jobstore); errors
// are typed for errors.Is: ErrBadTask, ErrBlobNotFound, ErrBadInput,
// ErrInvalidConfig.
package queue
