package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/auth"
	"github.com/c2cluster/c2cluster/coordinator/auth/authtest"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
)

// TestServeRefusesOpenListener: a non-loopback address without
// authentication is refused, saying why, unless -insecure; the same rule
// holds for a TCP cuzk API (Curio sends no token: mTLS or loopback).
func TestServeRefusesOpenListener(t *testing.T) {
	var errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "-listen", "0.0.0.0:0", "-nats-embedded-dir", t.TempDir()}, io.Discard, &errb)
	require.Equal(t, 1, code)
	require.Contains(t, errb.String(), "refusing to serve the API on 0.0.0.0:0 without authentication")
	require.Contains(t, errb.String(), "-tokens-file")
	require.Contains(t, errb.String(), "-insecure")

	_, err := parseServe([]string{"-listen", ":8080"}, io.Discard)
	require.ErrorContains(t, err, "refusing to serve the API on :8080")
	for _, args := range [][]string{
		{"-listen", "0.0.0.0:8080", "-insecure"},
		{"-listen", "0.0.0.0:8080", "-tokens-file", "/etc/c2cluster/tokens"},
		{"-listen", "0.0.0.0:8080", "-tls-cert", "c.pem", "-tls-key", "k.pem", "-tls-client-ca", "ca.pem"},
		{"-listen", "127.0.0.1:8080"},
		{"-listen", "[::1]:8080", "-cuzk-listen", "127.0.0.1:9820"},
	} {
		_, err := parseServe(args, io.Discard)
		require.NoError(t, err, "%v", args)
	}
	t.Setenv("C2_INSECURE", "true")
	_, err = parseServe([]string{"-listen", "0.0.0.0:8080"}, io.Discard)
	require.NoError(t, err, "$C2_INSECURE")
	t.Setenv("C2_INSECURE", "")

	_, err = parseServe([]string{"-listen", "127.0.0.1:8080", "-cuzk-listen", "0.0.0.0:9820", "-tokens-file", "x"}, io.Discard)
	require.ErrorContains(t, err, "refusing to serve the cuzk API on 0.0.0.0:9820")
	require.ErrorContains(t, err, "Curio sends no token")
	_, err = parseServe([]string{"-cuzk-listen", "0.0.0.0:9820", "-cuzk-tls-cert", "c", "-cuzk-tls-key", "k", "-cuzk-tls-client-ca", "ca"}, io.Discard)
	require.NoError(t, err)
	_, err = parseServe([]string{"-tls-cert", "c.pem"}, io.Discard)
	require.ErrorContains(t, err, "-tls-cert and -tls-key go together")
	_, err = parseServe([]string{"-submit-rate", "fast"}, io.Discard)
	require.ErrorContains(t, err, "-submit-rate")
}

// TestServeTLSTokensCLI runs `coordinator serve` with TLS and a tokens
// file and its client commands against it with a token ($C2_TOKEN or
// -token-file) and the CA (-ca), over Connect and gRPC; SIGHUP reloads the
// tokens file; no token appears in the coordinator's log or the client's
// output.
func TestServeTLSTokensCLI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir()
	ca := authtest.NewCA(t, "test CA")
	certFile, keyFile := ca.Server(t, "server", "coordinator")
	alice := authtest.NewToken("alice", "submit,read,cancel", "")
	ops := authtest.NewToken("ops", "admin", "")
	tokens := filepath.Join(dir, "tokens")
	authtest.WriteTokens(t, tokens, alice, ops)

	serveLog := &lockedBuffer{}
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-listen", addr, "-nats-embedded-dir", filepath.Join(dir, "nats"),
			"-redis", redisSrv.Addr, "-redis-prefix", jobstoretest.Prefix(), "-params-dir", filepath.Join(dir, "params"),
			"-tls-cert", certFile, "-tls-key", keyFile, "-tokens-file", tokens, "-log-level", "debug"}, io.Discard, serveLog)
	}()
	pool, err := auth.LoadCAs(ca.File)
	require.NoError(t, err)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + addr
	require.Eventually(t, func() bool {
		res, err := hc.Get(url + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}, 60*time.Second, 20*time.Millisecond, "serve log:\n%s", serveLog.String())

	cli := func(env map[string]string, args ...string) (int, string, string) {
		for k, v := range env {
			t.Setenv(k, v)
		}
		var out, errb bytes.Buffer
		code := run(ctx, append(args[:1:1], append([]string{"-addr", url, "-ca", ca.File}, args[1:]...)...), &out, &errb)
		for k := range env {
			t.Setenv(k, "")
		}
		for _, tk := range []authtest.Token{alice, ops} {
			require.NotContains(t, out.String()+errb.String(), tk.Secret, "a client prints no token")
		}
		return code, out.String(), errb.String()
	}
	code, _, errs := cli(nil, "list")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "unauthenticated")
	code, _, errs = cli(map[string]string{"C2_TOKEN": "c2t_forged"}, "list")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "unauthenticated")
	require.NotContains(t, errs, "c2t_forged")

	code, out, errs := cli(map[string]string{"C2_TOKEN": alice.Secret}, "list")
	require.Equal(t, 0, code, errs)
	require.Empty(t, out, "no jobs yet")
	code, _, errs = cli(map[string]string{"C2_TOKEN": alice.Secret}, "status", "-grpc")
	require.Equal(t, 0, code, "gRPC over TLS: %s", errs)
	code, _, errs = cli(map[string]string{"C2_TOKEN": alice.Secret}, "cancel", "0123456789abcdef0123456789abcdef")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "not_found")
	c1 := filepath.Join(dir, "c1.json")
	require.NoError(t, os.WriteFile(c1, []byte(`{"registered_proof":"nope"}`), 0o600))
	code, _, errs = cli(map[string]string{"C2_TOKEN": alice.Secret}, "submit", "-c1", c1)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "invalid_argument", "authenticated: the submission itself is judged")

	tokenFile := filepath.Join(dir, "ops.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(ops.Secret+"\n"), 0o600))
	code, _, errs = cli(nil, "status", "-token-file", tokenFile)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(map[string]string{"C2_TOKEN_FILE": filepath.Join(dir, "missing")}, "list")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "token file")

	// SIGHUP: a rewritten file of the same size and modification time is
	// seen only because of the signal.
	st, err := os.Stat(tokens)
	require.NoError(t, err)
	bob := authtest.NewToken("bobby", "read", "") // same length as alice's line
	bob.Scopes = "submit,read,cancel"
	authtest.WriteTokens(t, tokens, bob, ops)
	st2, err := os.Stat(tokens)
	require.NoError(t, err)
	require.Equal(t, st.Size(), st2.Size())
	require.NoError(t, os.Chtimes(tokens, st.ModTime(), st.ModTime()))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool {
		code, _, _ := cli(map[string]string{"C2_TOKEN": bob.Secret}, "list")
		return code == 0
	}, 30*time.Second, 20*time.Millisecond)
	code, _, errs = cli(map[string]string{"C2_TOKEN": alice.Secret}, "list")
	require.Equal(t, 1, code, "alice's token is gone")
	require.Contains(t, errs, "unauthenticated")

	cancel()
	select {
	case code := <-served:
		require.Equal(t, 0, code, "serve exits cleanly on cancellation")
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	logs := serveLog.String()
	require.Contains(t, logs, "auth: tokens file loaded", "the log was captured")
	for _, tk := range []authtest.Token{alice, ops, bob} {
		require.NotContains(t, logs, tk.Secret, "the coordinator logs no token")
	}
	require.False(t, strings.Contains(logs, "c2t_forged"))
}
