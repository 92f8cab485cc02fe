package server_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// A C1 output of a test shape whose verifying key the coordinator lacks is
// refused at submit (FailedPrecondition), and the client sees the exact
// command that makes the shape's parameters in the coordinator's folder.
func TestSubmitWithoutVerifyingKeyNamesTheParamsCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc := queuetest.Conn(t, queuetest.Server(t))
	q, err := queue.Open(ctx, nc, queue.Config{})
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix()})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "no params")
	srv, err := server.New(server.Config{}, q, store, &server.PoRep{ParamsDir: dir})
	require.NoError(t, err)
	require.NoError(t, srv.Start(ctx))
	defer srv.Stop()
	hs := httptest.NewServer(srv.Mux())
	defer hs.Close()

	_, err = client.New(hs.URL).Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, 31)})
	require.Error(t, err)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	require.ErrorContains(t, err, "no verifying key")
	require.ErrorContains(t, err, filepath.Join(dir, testShape+".vk"))
	// The folder has a space: the command quotes it for the shell.
	require.ErrorContains(t, err, "c2-params -dir '"+dir+"' -shapes "+testShape)
}
