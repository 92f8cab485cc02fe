package client

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingTransport counts the requests a client makes.
type countingTransport struct {
	n    atomic.Int64
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// While the coordinator is unreachable, Watch retries with growing pauses
// instead of reconnecting in a tight loop, and ends with the context.
func TestWatchBacksOffWhileUnreachable(t *testing.T) {
	// A port nothing listens on: take one and close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	tr := &countingTransport{base: &http.Transport{}}
	c := New("http://"+addr, WithHTTPClient(&http.Client{Transport: tr}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.Watch(ctx, "job", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second)
	// Pauses of 0.1, 0.2, 0.4, 0.8 s fit in 2 s: at most 5 attempts.
	n := tr.n.Load()
	require.GreaterOrEqual(t, n, int64(2), "Watch gave up instead of retrying")
	require.LessOrEqual(t, n, int64(6), "Watch reconnected %d times in 2 s", n)
	tr.base.(*http.Transport).CloseIdleConnections()
}
