package node_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	"github.com/c2cluster/c2cluster/worker/node"
	"github.com/c2cluster/c2cluster/worker/node/nodetest"
)

// A worker whose params_dir lacks a test shape's parameters refuses to
// start, and the error names the exact c2-params command that makes them
// there (the folder made absolute).
func TestMissingTestParamsNameTheCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := queue.Open(ctx, queuetest.Conn(t, queuetest.Server(t)), queue.Config{})
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix()})
	require.NoError(t, err)

	// A relative params_dir, as in a worker.yaml: the command names the
	// folder it resolves to.
	wd, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	rel, err := filepath.Rel(wd, dir)
	require.NoError(t, err)
	cfg := nodetest.CPUConfig("w-hint", "test-mini", rel)
	cfg.Logger = nodetest.Logger(t)
	_, err = node.New(ctx, cfg, q, store)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "no such file")
	require.ErrorContains(t, err, "make them with: c2-params -dir "+dir+" -shapes test-mini")
}
