package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
)

var redisSrv *jobstoretest.Redis

// envMain, when set, makes the test binary the coordinator binary: its
// value is the JSON array of the command line.
const envMain = "C2_COORDINATOR_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if a, ok := os.LookupEnv(envMain); ok {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", envMain, err)
			os.Exit(2)
		}
		os.Exit(runWithSignals(args, os.Stdout, os.Stderr))
	}
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) { redisSrv = r; return nil, nil }, queuetest.LeakOptions()...)
}

func TestUsageAndUnknownCommand(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 2, run(context.Background(), nil, &out, &errb))
	require.Contains(t, errb.String(), "serve")
	errb.Reset()
	require.Equal(t, 2, run(context.Background(), []string{"frobnicate"}, &out, &errb))
	require.Contains(t, errb.String(), `unknown command "frobnicate"`)
	errb.Reset()
	require.Equal(t, 2, run(context.Background(), []string{"submit"}, &out, &errb))
	require.Contains(t, errb.String(), "-c1 is required")
	errb.Reset()
	require.Equal(t, 0, run(context.Background(), []string{"list", "-h"}, &out, &errb))
	require.Contains(t, errb.String(), "-state")
}

// TestServeWiring runs `coordinator serve` in process (embedded NATS, the
// test Redis) and drives it with the client subcommands and plain HTTP/JSON.
func TestServeWiring(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir()
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-listen", addr, "-nats-embedded-dir", filepath.Join(dir, "nats"),
			"-redis", redisSrv.Addr, "-redis-prefix", jobstoretest.Prefix(), "-params-dir", filepath.Join(dir, "params"),
			"-log-level", "warn"}, io.Discard, io.Discard)
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
	code, out, _ := cli("status")
	require.Equal(t, 0, code)
	require.Contains(t, out, "workers: 0")
	require.Contains(t, out, "queue:\n  empty")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"registered_proof":"nope"}`), 0o644))
	code, _, errs := cli("submit", "-c1", bad)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "invalid_argument: invalid C1 output")

	code, _, errs = cli("cancel", "nosuchjob")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "not_found")

	code, out, _ = cli("list", "-grpc")
	require.Equal(t, 0, code)
	require.Empty(t, out)

	// Plain HTTP/JSON on the same port.
	res, err := http.Post(url+"/c2cluster.v1.ProofService/ListJobs", "application/json", strings.NewReader(`{"limit":5}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode, string(body))
	require.JSONEq(t, `{}`, string(body))

	res, err = http.Get(url + "/metrics")
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(body), `c2_submits_total{result="rejected"} 1`)

	cancel()
	select {
	case code := <-served:
		require.Equal(t, 0, code, "serve exits cleanly on cancellation")
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}
