// Package client is the Go client of the c2cluster coordinator's
// ProofService: submit a C1 output, await or watch the job with progress,
// prove (submit and wait), cancel, status and list. It speaks the Connect
// protocol over HTTP/1.1 by default, or gRPC (HTTP/2 cleartext or TLS) with
// WithGRPC.
//
// It holds no server code (coordinator/server) and no proof checks: the
// proof it returns was verified by the coordinator.
package client
