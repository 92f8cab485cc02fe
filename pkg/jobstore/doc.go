// Package jobstore keeps c2cluster's job state in Redis, for the coordinator
// and the workers.
//
// Every key of one job shares the hash tag {<job>}, so the Lua scripts that
// touch several of them run on Redis Cluster too:
//
//	<prefix>:{<job>}:job       hash: state, shape, lane, partitions, done,
//	                           reason, last error, timings, blob, proof, ...
//	<prefix>:{<job>}:proofs    hash: partition → 192-byte proof
//	<prefix>:{<job>}:attempts  hash: partition → current attempt (fencing)
//	<prefix>:{<job>}:seqs      hash: partition → stream sequence (cancel)
//	<prefix>:{<job>}:events    stream: begin/complete/fail/... events
//	<prefix>:{<job>}:notify    pub/sub channel: "something changed" hint
//	<prefix>:{<job>}:provers   hash: partition → worker of the recorded proof
//	<prefix>:{<job>}:bad       hash: partition → proofs that failed verification
//	<prefix>:idem:{<sha256>}   string: idempotency key → job id, request digest (SET NX)
//	<prefix>:jobs              sorted set: job ids by creation time (ListJobs)
//	<prefix>:owner:<name>:open sorted set: an API identity's job ids, pruned
//	                           of finished ones when counted (OpenJobs)
//	<prefix>:worker:<id>       string: a worker's registration (JSON), TTL'd
//	<prefix>:workers           sorted set: worker ids by last heartbeat
//	<prefix>:trust:<id>        hash: a worker's bad proofs and quarantine
//	<prefix>:quarantined       sorted set: quarantined worker ids
//	<prefix>:vk:<shape>        string: the coordinator's verifying-key fingerprint
//
// Every key has a TTL, except a quarantined worker's trust record and the
// quarantined set: a quarantine lasts until an operator releases it. The
// state machine is queued → proving → assembling → done | failed |
// cancelled (a bad partition proof sends an assembling job back to
// proving, RejectProofs); transitions are Lua scripts that check the
// state they leave. Complete is the ONE atomic step of a partition result:
// fence on the attempt number, HSETNX the proof, HINCRBY done, add the
// stage timings, and report when the last partition is in (the job then
// becomes assembling). Pub/sub is only a hint: Watch re-reads the job on
// every hint and on a poll interval.
//
// The package knows nothing of NATS (pkg/queue) or proofs (pkg/groth16).
package jobstore
