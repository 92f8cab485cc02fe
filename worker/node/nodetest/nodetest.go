// Package nodetest runs real workers (worker/node with the CPU backend) in
// the tests of packages that need one: a worker configuration with fast
// timings, starting it until the test ends, and a test logger.
package nodetest

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/worker/node"
)

// CPUConfig is a one-slot CPU worker of shape with parameters from
// paramsDir (trusted: tests generate them), with fast heartbeats and
// retries.
func CPUConfig(id, shape, paramsDir string) node.Config {
	return node.Config{
		ID: id, Shapes: []string{shape}, ParamsDir: paramsDir, TrustedParams: true,
		Backend: "cpu", HeartbeatInterval: 200 * time.Millisecond, RetryDelay: 100 * time.Millisecond,
		DrainTimeout: 30 * time.Second, AbortTimeout: 30 * time.Second,
	}
}

// Start creates and starts a worker; it is stopped when the test ends. A
// config without a Logger logs to log, with the worker's id.
func Start(t testing.TB, ctx context.Context, cfg node.Config, q *queue.Queue, store *jobstore.Store, log *slog.Logger) *node.Node {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = log.With("worker", cfg.ID)
	}
	n, err := node.New(ctx, cfg, q, store)
	require.NoError(t, err)
	require.NoError(t, n.Start(ctx))
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	return n
}

// Logger logs at info level to t.Log (shown with -v or on failure).
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
