package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve with a password-protected Redis given as a redis:// URL: the
// "serving" log line names it with the password redacted; a wrong password
// fails the start with an error that names Redis and the problem and shows
// no secret, nor does the log.
func TestServeKeepsRedisAndNATSSecretsOut(t *testing.T) {
	const pw = "serve-redis-pw-not-for-logs"
	r, err := jobstoretest.StartWith(jobstoretest.Options{Password: pw})
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	nats := queuetest.Server(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs lockedBuffer
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-listen", addr, "-nats", nats.URL(), "-redis", "redis://default:" + pw + "@" + r.Addr,
			"-redis-prefix", jobstoretest.Prefix(), "-params-dir", filepath.Join(dir, "params"), "-log-format", "json"}, io.Discard, &logs)
	}()
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond)
	require.Contains(t, logs.String(), `"redis":"redis://default:xxxxx@`+r.Addr+`"`)
	require.NotContains(t, logs.String(), pw)
	cancel()
	select {
	case code := <-served:
		require.Equal(t, 0, code)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}

	var out lockedBuffer
	code := run(context.Background(), []string{"serve", "-listen", "127.0.0.1:0", "-nats", nats.URL(),
		"-redis", "redis://default:x" + pw + "@" + r.Addr, "-params-dir", filepath.Join(dir, "params")}, io.Discard, &out)
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "redis redis://default:xxxxx@"+r.Addr+": WRONGPASS")
	require.NotContains(t, out.String(), pw)

	out = lockedBuffer{}
	code = run(context.Background(), []string{"serve", "-listen", "127.0.0.1:0", "-nats", "nats://c2:" + pw + "@127.0.0.1:1",
		"-redis", r.Addr, "-params-dir", filepath.Join(dir, "params")}, io.Discard, &out)
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "queue: connect nats://c2:xxxxx@127.0.0.1:1")
	require.False(t, strings.Contains(out.String(), pw), out.String())
}

func TestServeConnectionFlags(t *testing.T) {
	t.Setenv("C2_REDIS_CLUSTER", "r1:6379,r2:6379")
	t.Setenv("C2_NATS_CREDS_FILE", "/etc/c2/c2.creds")
	cfg, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"r1:6379", "r2:6379"}, cfg.conn.redisDial(cfg.redisAddr).ClusterAddrs)
	require.Empty(t, cfg.conn.redisDial(cfg.redisAddr).Addr, "no default address beside Cluster addresses")
	require.Equal(t, "/etc/c2/c2.creds", cfg.conn.natsConn(cfg.natsURL, false, nil).CredsFile)
	require.Empty(t, cfg.conn.natsConn("nats://127.0.0.1:1", true, nil).CredsFile, "the embedded server takes none")
	_, err = parseServe([]string{"-redis", "r0:6379"}, io.Discard)
	require.ErrorContains(t, err, "give one of a Redis address, Sentinel (master and sentinels) or Cluster addresses")
	_, err = parseServe([]string{"-nats-token", "t"}, io.Discard)
	require.ErrorContains(t, err, "give one way to authenticate, not token and creds file")
}
