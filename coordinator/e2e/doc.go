// Package e2e holds c2cluster's end-to-end tests: the real coordinator
// (coordinator/server, in the test process) and real worker PROCESSES (the
// test binary re-executed into the worker's command line, worker/cli) on a
// real embedded NATS JetStream server and a private real Redis, plus one
// test that reads the job's trace back from a real Jaeger built from
// tools/jaeger and opens the job's page of the coordinator's web page
// (coordinator/web) in a headless Chromium (skipped where none is
// installed).
//
// It has no non-test code: `go test ./coordinator/e2e/` runs it; the
// coordination-overhead benchmark is BenchmarkCoordinationOverhead.
package e2e
