// Package singlenode is c2cluster on one machine with one command (the
// README's `make run`, i.e. `coordinator run`): it starts what it needs,
// proves a freshly sealed test sector end to end and shows the result.
//
// Run, in order, with progress lines for everything long:
//
//   - Redis: the one answering on 127.0.0.1:6379 if any, else a private
//     redis-server (AOF on, noeviction) under the state folder; each run
//     keeps its keys under a fresh prefix (c2single-<random>), so it lists
//     only its own jobs and leaves other runs' and users' keys alone;
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
//     query API, and the address of the job's web page (coordinator/web,
//     served under /ui/ with the Jaeger query API wired in).
//
// With -keep it then serves until interrupted, so more workers and clients
// can join; it prints their commands: a worker with the node's NATS, Redis
// and prefix, its metrics on a free port (-metrics-listen 127.0.0.1:0) and,
// with Jaeger, -otlp so its spans join the jobs' traces; coordinator prove
// -addr … for another proof. SIGINT or SIGTERM stops everything it started,
// and `coordinator run` then exits 0.
//
// The package also holds what tests need to run a real Jaeger: StartJaeger,
// FetchTrace and Waterfall.
package singlenode
