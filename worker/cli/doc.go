// Package cli is the worker binary's command line: configuration from a
// YAML file, environment variables and flags (in that order of precedence,
// flags last), the connections to NATS and Redis, tracing, the /metrics
// endpoint, and signal handling with the two-phase drain. worker/main.go
// calls Main; tests re-execute their own binary into Main to run real worker
// processes.
//
// It holds no proving logic (worker/node).
package cli
