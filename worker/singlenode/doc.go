// Package singlenode is c2cluster on one machine with one command (the
// README's `make run`, i.e. `coordinator run`): it starts what it needs,
// proves a freshly sealed test sector end to end and shows the result.
//
// Run, in order, with progress lines for everything long:
//
//   - Redis: the one answering on 127.0.0.1:6379 if any, else a private
//     redis-server (AOF on, noeviction) under the state folder;
//   - NATS: an embedded nats-server with JetStream on disk under the state
//     folder (127.0.0.1:4222 when free);
//   - Jaeger: the one answering on 127.0.0.1:16686 if any, else the binary
//     built from tools/jaeger (scripts/build-jaeger.sh), run with an explicit
//     loopback configuration (OTLP 4317/4318, query 16686); without it the
//     run goes on untraced and says so;
//   - parameters for the demo shape, generated once and cached (with the
//     compiled circuit's fingerprint beside them; made again when the
//     circuit's layout no longer matches it);
//   - the coordinator (coordinator/server, HTTP on 127.0.0.1:8080 when free)
//     and an in-process CPU worker (worker/node);
//   - a sealed random sector of the demo shape, submitted, awaited with
//     progress, its proof verified here again, printed, with the Jaeger link
//     of its trace and the trace as a text waterfall read back from Jaeger's
//     query API.
//
// With -keep it then serves until interrupted, so more workers (worker -nats
// … -redis …) and clients (coordinator prove -addr …) can join.
//
// The package also holds what tests need to run a real Jaeger: StartJaeger,
// FetchTrace and Waterfall.
package singlenode
