package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
)

// TestServeWebPage runs `coordinator serve` with $C2_JAEGER_QUERY and
// -jaeger-ui: the web page is on the API's listener, / leads to it, and its
// cluster endpoint says traces are available with the Jaeger UI given.
func TestServeWebPage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir()
	t.Setenv("C2_JAEGER_QUERY", "http://127.0.0.1:16686/")

	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-listen", addr, "-nats-embedded-dir", filepath.Join(dir, "nats"),
			"-redis", redisSrv.Addr, "-redis-prefix", jobstoretest.Prefix(), "-params-dir", filepath.Join(dir, "params"),
			"-jaeger-ui", "https://jaeger.example.org", "-log-level", "warn"}, io.Discard, io.Discard)
	}()
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond)

	res, err := http.Get("http://" + addr + "/")
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "/ui/", res.Request.URL.Path, "/ leads to the page")
	require.Contains(t, string(b), `data-page="jobs"`)

	res, err = http.Get("http://" + addr + "/ui/api/cluster")
	require.NoError(t, err)
	var cl struct {
		Traces   bool   `json:"traces"`
		JaegerUI string `json:"jaeger_ui"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&cl))
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, cl.Traces)
	require.Equal(t, "https://jaeger.example.org", cl.JaegerUI)

	cancel()
	select {
	case code := <-served:
		require.Equal(t, 0, code)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestServeJaegerFlags: off by default, set by the environment, overridden
// by flags; what is not an http(s) base URL is refused at start.
func TestServeJaegerFlags(t *testing.T) {
	cfg, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Empty(t, cfg.jaegerQuery)
	require.Empty(t, cfg.jaegerUI)
	t.Setenv("C2_JAEGER_QUERY", "http://jaeger:16686/")
	t.Setenv("C2_JAEGER_UI", "http://127.0.0.1:16686")
	cfg, err = parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "http://jaeger:16686", cfg.jaegerQuery)
	require.Equal(t, "http://127.0.0.1:16686", cfg.jaegerUI)
	cfg, err = parseServe([]string{"-jaeger-query", "", "-jaeger-ui", "https://jaeger.example.org/"}, io.Discard)
	require.NoError(t, err)
	require.Empty(t, cfg.jaegerQuery)
	require.Equal(t, "https://jaeger.example.org", cfg.jaegerUI)
	_, err = parseServe([]string{"-jaeger-query", "jaeger:16686"}, io.Discard)
	require.ErrorContains(t, err, "-jaeger-query")
	_, err = parseServe([]string{"-jaeger-ui", "javascript:alert(1)"}, io.Discard)
	require.ErrorContains(t, err, "-jaeger-ui")
}
