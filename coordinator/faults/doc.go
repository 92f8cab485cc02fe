// Package faults is c2cluster's fault-injection suite: the real coordinator
// (coordinator/server, in the test process, or a coordinator PROCESS where
// it is killed) and real worker PROCESSES (the test binary re-executed
// into the worker's command line, worker/cli) on a NATS JetStream server
// with its store on disk (embedded in the test process, shut down and
// started again on the same port and store) and a redis-server child
// process with an append-only file (killed and started again on the same
// port), all on loopback. Each scenario breaks one thing while jobs run
// and then checks that every accepted job ends done with a proof that
// verifies (or failed with a reason about the job), none lost, none
// duplicated, and that no process panicked:
//
//   - during one run of 20 jobs, a 60 s Redis outage (5 minutes with
//     C2_FAULTS_LONG=1), a NATS restart and a 5 s NATS outage (/healthz
//     and c2_dependency_up name the dependency meanwhile; a submission is
//     refused while NATS is down);
//   - a worker SIGKILLed mid-partition (back to another worker within
//     AckWait), and one started again under the same id (its partition
//     back at once);
//   - the coordinator process SIGKILLed while 12 clients submit at once
//     with idempotency keys (100 with C2_FAULTS_LONG=1), and again while
//     their jobs are proved; a key's same request returns its job, another
//     request is refused naming it; then 6 more jobs (100 with
//     C2_FAULTS_LONG=1) through the idle coordinator, after which its
//     goroutines (go_goroutines of its /metrics) are back within 3 of what
//     they were and its RSS grew by less than 16 MiB;
//   - garbage and forged messages on the task, control and dead-letter
//     subjects, and a worker with another setup's parameters (quarantined
//     when it registers);
//   - tasks purged from the stream (republished by the watchdog);
//   - NATS with the shipped deployments' authorization block (read from
//     deploy/compose/nats.conf): a forged max-deliveries advisory refused
//     as a permissions violation, the job done.
//
// It has no non-test code: `go test ./coordinator/faults/` runs it (within
// five minutes on two idle cores; the 60 s Redis outage is the longest
// part). C2_FAULTS_LONG=1 runs the long variants. docs/failures.md has the
// failure model and the recovery these tests check.
package faults
