package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
)

// TestAwaitVerifiesTheProof: a job marked done in Redis with random proof
// bytes is refused by `coordinator await -c1` (exit 1, nothing written);
// without -c1 the proof is written with a note that it was not checked,
// unless -verify require. `coordinator workers` quarantines, lists and
// releases a worker.
func TestAwaitVerifiesTheProof(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const shape = "test-mini"
	dir := t.TempDir()
	params := filepath.Join(dir, "params")
	require.NoError(t, os.MkdirAll(params, 0o755))
	poreptest.Params(t, params, shape, "coordinator await verifies")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	prefix := jobstoretest.Prefix()
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-listen", addr, "-nats-embedded-dir", filepath.Join(dir, "nats"),
			"-redis", redisSrv.Addr, "-redis-prefix", prefix, "-params-dir", params, "-log-level", "warn"}, io.Discard, io.Discard)
	}()
	url := "http://" + addr
	require.Eventually(t, func() bool {
		res, err := http.Get(url + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}, 30*time.Second, 20*time.Millisecond)
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, append(args[:1:1], append([]string{"-addr", url}, args[1:]...)...), &out, &errb)
		return code, out.String(), errb.String()
	}

	c1File := filepath.Join(dir, "sector.c1.json")
	require.NoError(t, os.WriteFile(c1File, poreptest.SealedC1(t, shape, 61), 0o644))
	code, out, errs := cli("submit", "-c1", c1File)
	require.Equal(t, 0, code, errs)
	job := strings.TrimSpace(out)

	// No worker: forge the job done with random bytes straight in Redis.
	rdb := redisSrv.Client(t)
	forged := make([]byte, 3*192)
	_, err = rand.Read(forged)
	require.NoError(t, err)
	require.NoError(t, rdb.HSet(ctx, prefix+":{"+job+"}:job", "state", "done", "proof", forged).Err())

	proofFile := filepath.Join(dir, "proof.bin")
	code, _, errs = cli("await", "-c1", c1File, "-params-dir", params, "-out", proofFile, job)
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "returned proof does not verify")
	require.Contains(t, errs, "the proof is not written")
	require.NoFileExists(t, proofFile)

	code, _, errs = cli("await", "-params-dir", params, "-out", proofFile, job)
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "proof NOT verified here: give -c1")
	require.FileExists(t, proofFile)
	code, _, errs = cli("await", "-verify", "require", "-c1", c1File, "-params-dir", t.TempDir(), job)
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "cannot be checked here")
	code, _, errs = cli("await", "-verify", "maybe", job)
	require.Equal(t, 2, code, errs)

	code, _, errs = cli("workers", "quarantine")
	require.Equal(t, 2, code, errs)
	code, out, errs = cli("workers", "quarantine", "w9", "-reason", "bad GPU")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "worker w9 quarantined")
	code, out, _ = cli("workers")
	require.Equal(t, 0, code)
	require.Contains(t, out, "w9  not registered  bad proofs 0  QUARANTINED")
	require.Contains(t, out, "by operator: bad GPU")
	code, out, _ = cli("workers", "release", "w9")
	require.Equal(t, 0, code)
	require.Contains(t, out, "worker w9 released")
	code, out, _ = cli("workers", "release", "w9")
	require.Equal(t, 0, code)
	require.Contains(t, out, "was not quarantined")

	cancel()
	select {
	case code := <-served:
		require.Equal(t, 0, code)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}
