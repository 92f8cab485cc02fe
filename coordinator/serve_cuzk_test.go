package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
)

// TestServeCuzkWiring runs `coordinator serve` with -cuzk-listen and
// $C2_CUZK_SOCKET and calls Curio's cuzk API on both with a grpc-go client;
// on shutdown the socket file is gone.
func TestServeCuzkWiring(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		return l.Addr().String()
	}
	addr, cuzkAddr := free(), free()
	dir := t.TempDir()
	sockDir, err := os.MkdirTemp("", "cuzk-") // short: a socket path has at most ~100 bytes
	require.NoError(t, err)
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "run", "cuzk.sock")
	t.Setenv("C2_CUZK_SOCKET", sock)

	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-listen", addr, "-cuzk-listen", cuzkAddr, "-nats-embedded-dir", filepath.Join(dir, "nats"),
			"-redis", redisSrv.Addr, "-redis-prefix", jobstoretest.Prefix(), "-params-dir", filepath.Join(dir, "params"),
			"-log-level", "warn"}, io.Discard, io.Discard)
	}()
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}, 30*time.Second, 20*time.Millisecond)

	for _, target := range []string{"dns:///" + cuzkAddr, "unix://" + sock} {
		conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		cl := cuzkv1.NewProvingEngineClient(conn)
		st, err := cl.GetStatus(ctx, &cuzkv1.GetStatusRequest{})
		require.NoError(t, err, target)
		require.Empty(t, st.Gpus, target)
		require.Len(t, st.Queues, 1, target)
		_, err = cl.SubmitProof(ctx, &cuzkv1.SubmitProofRequest{ProofKind: cuzkv1.ProofKind_POREP_SEAL_COMMIT, VanillaProof: []byte(`{"registered_proof":"nope"}`)})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", target, err)
		_, err = cl.SubmitProof(ctx, &cuzkv1.SubmitProofRequest{ProofKind: cuzkv1.ProofKind_WINNING_POST, VanillaProof: []byte("x")})
		require.Equal(t, codes.Unimplemented, status.Code(err), "%s: %v", target, err)
		require.NoError(t, conn.Close())
	}
	fi, err := os.Stat(sock)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o660), fi.Mode().Perm())

	cancel()
	select {
	case code := <-served:
		require.Equal(t, 0, code, "serve exits cleanly on cancellation")
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	_, err = os.Lstat(sock)
	require.ErrorIs(t, err, os.ErrNotExist, "the socket is removed at shutdown")
}

// TestServeCuzkFlags: both cuzk listeners are off by default; the
// environment sets them, flags override it.
func TestServeCuzkFlags(t *testing.T) {
	cfg, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Empty(t, cfg.cuzkListen)
	require.Empty(t, cfg.cuzkSocket)
	t.Setenv("C2_CUZK_LISTEN", "127.0.0.1:9820")
	t.Setenv("C2_CUZK_SOCKET", "/run/curio/cuzk.sock")
	cfg, err = parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9820", cfg.cuzkListen)
	require.Equal(t, "/run/curio/cuzk.sock", cfg.cuzkSocket)
	cfg, err = parseServe([]string{"-cuzk-listen", "", "-cuzk-socket", "/tmp/c.sock"}, io.Discard)
	require.NoError(t, err)
	require.Empty(t, cfg.cuzkListen)
	require.Equal(t, "/tmp/c.sock", cfg.cuzkSocket)
}
