// Command worker is the c2cluster worker: one process per host that proves
// partition tasks from NATS JetStream on the host's devices (slots =
// devices × gpu_workers_per_device, each pinned to its device), writes the
// results to Redis and drains gracefully on SIGTERM.
//
//	worker -shapes 32GiB -params-dir /var/lib/c2/params -nats nats://q:4222 -redis r:6379
//	worker -config /etc/c2/worker.yaml
//
// See docs/worker.md for every setting (flags, $C2_* variables, YAML keys).
package main

import (
	"os"

	"github.com/c2cluster/c2cluster/worker/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv))
}
