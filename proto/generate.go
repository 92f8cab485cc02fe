// Package proto holds c2cluster's protobuf definitions; the generated Go code
// lives in proto/c2cluster/v1 (package c2clusterv1) and proto/cuzk/v1
// (package cuzkv1: Curio's cuzk proving-engine API, which the coordinator
// also serves).
//
// Regenerate with `go generate ./proto/` (needs protoc on PATH; the Go
// plugins come from the module's tool directives).
package proto

//go:generate ./generate.sh
