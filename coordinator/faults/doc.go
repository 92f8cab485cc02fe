// Package faults is c2cluster's fault-injection suite: the real coordinator
// (coordinator/server, in the test process) and real worker PROCESSES (the
// test binary re-executed into the worker's command line, worker/cli) on a
// NATS JetStream server with its store on disk (embedded in the test
// process, shut down and started again on the same port and store) and a
// redis-server child process with an append-only file (killed and started
// again on the same port), all on loopback. Each scenario breaks one thing
// while jobs run and then checks that every accepted job ends done with a
// proof that verifies (or failed with a reason about the job), none lost,
// none duplicated, and that no process panicked.
//
// It has no non-test code: `go test ./coordinator/faults/` runs it (about
// two minutes on two cores, most of it the 60 s Redis outage). The 5-minute
// Redis outage runs only with C2_FAULTS_LONG=1. docs/failures.md has the
// failure model and the recovery times these tests measure.
package faults
