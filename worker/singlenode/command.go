package singlenode

import "strings"

// workerArgs are the arguments of a worker (the worker binary, worker/cli)
// that joins a running single node: its NATS, Redis and key prefix, the
// demo shape with the cached (trusted) parameters, metrics on a port the
// system picks (several workers may run on this host; each logs the port it
// got), and, when Jaeger runs, its OTLP endpoint, so the worker's spans
// join the jobs' traces.
func workerArgs(nats, redis, prefix, shape, paramsDir, otlp string) []string {
	args := []string{"-nats", nats, "-redis", redis, "-redis-prefix", prefix, "-shapes", shape,
		"-params-dir", paramsDir, "-trusted-params", "-metrics-listen", "127.0.0.1:0"}
	if otlp != "" {
		args = append(args, "-otlp", otlp)
	}
	return args
}

// shellJoin joins args into one command line for a POSIX shell.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes s for a POSIX shell unless it needs no quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
