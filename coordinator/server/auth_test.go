package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/auth"
	"github.com/c2cluster/c2cluster/coordinator/auth/authtest"
	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// secureCoordinator is a coordinator behind TLS and the tokens file, as
// coordinator serve runs it with -tls-cert, -tls-key and -tokens-file.
type secureCoordinator struct {
	url    string
	ca     *authtest.CA
	tokens string
	logs   *logBuffer
}

// logBuffer is the coordinator's log, written and read concurrently.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (c *cluster) startSecureCoordinator(limits auth.Limits, toks ...authtest.Token) *secureCoordinator {
	c.t.Helper()
	dir := c.t.TempDir()
	ca := authtest.NewCA(c.t, "test CA")
	certFile, keyFile := ca.Server(c.t, "server", "coordinator")
	path := filepath.Join(dir, "tokens")
	authtest.WriteTokens(c.t, path, toks...)
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tokens, err := auth.LoadTokens(path, log)
	require.NoError(c.t, err)
	tokens.CheckEvery = 0
	tlsCfg, _, err := auth.ServerTLS(auth.TLSFiles{Cert: certFile, Key: keyFile}, log)
	require.NoError(c.t, err)
	cfg := server.Config{Logger: log, Auth: &auth.Authenticator{Tokens: tokens}, Limits: limits}
	co := c.startCoordinator(cfg) // also on plain HTTP, unused
	return &secureCoordinator{url: authtest.ServeTLS(c.t, co.srv.Protect(co.srv.Mux()), tlsCfg), ca: ca, tokens: path, logs: logs}
}

// client is a client of the coordinator with token (none: "").
func (sc *secureCoordinator) client(t *testing.T, token string, opts ...client.Option) *client.Client {
	t.Helper()
	cfg, err := client.TLSFiles{CA: sc.ca.File}.Config()
	require.NoError(t, err)
	opts = append(opts, client.WithTLS(cfg))
	if token != "" {
		opts = append(opts, client.WithToken(token))
	}
	return client.New(sc.url, opts...)
}

// get fetches a plain HTTP path with token.
func (sc *secureCoordinator) get(t *testing.T, path, token string) int {
	t.Helper()
	cfg, err := client.TLSFiles{CA: sc.ca.File}.Config()
	require.NoError(t, err)
	req, err := http.NewRequest("GET", sc.url+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}).Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func ids(jobs []*c2clusterv1.JobStatus) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.JobId)
	}
	return out
}

// TestAPIAuth: over real TLS (Connect and gRPC), with real NATS and Redis:
// no token is unauthenticated, a missing scope is permission_denied,
// another identity's job is not_found everywhere, admin sees all, the
// HTTP paths need read (but /healthz), and no token reaches the logs.
func TestAPIAuth(t *testing.T) {
	c := newCluster(t, queue.Config{})
	alice := authtest.NewToken("alice", "submit,read,cancel", "")
	bob := authtest.NewToken("bob", "submit,read,cancel", "")
	reader := authtest.NewToken("reader", "read", "")
	ops := authtest.NewToken("ops", "admin", "")
	sc := c.startSecureCoordinator(auth.Limits{}, alice, bob, reader, ops)
	doc := sealedC1(t, 31)
	ctx := c.ctx

	_, err := sc.client(t, "").List(ctx, 0, 10)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
	_, err = sc.client(t, "", client.WithGRPC()).List(ctx, 0, 10)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "gRPC over TLS: %v", err)
	_, err = sc.client(t, "c2t_forged").List(ctx, 0, 10)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
	require.NotContains(t, err.Error(), "c2t_forged")
	_, err = sc.client(t, reader.Secret).Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "identity reader lacks the submit scope")
	_, err = sc.client(t, reader.Secret).Cancel(ctx, "0123", "")
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)

	ac, bc := sc.client(t, alice.Secret), sc.client(t, bob.Secret, client.WithGRPC())
	aj, err := ac.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: "sector-1"})
	require.NoError(t, err)
	bj, err := bc.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: "sector-1"})
	require.NoError(t, err)
	require.NotEqual(t, aj.JobId, bj.JobId, "an idempotency key is its identity's own")
	require.False(t, bj.Deduplicated)
	again, err := ac.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: "sector-1"})
	require.NoError(t, err)
	require.Equal(t, aj.JobId, again.JobId, "the same identity's key still deduplicates")
	j, err := c.store.Get(ctx, aj.JobId)
	require.NoError(t, err)
	require.Equal(t, "alice", j.Owner)

	// Bob cannot tell alice's job from one that does not exist.
	st, err := bc.Status(ctx, aj.JobId)
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	_, errMissing := bc.Status(ctx, "0123456789abcdef0123456789abcdef")
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(errMissing))
	require.Nil(t, st)
	_, err = bc.Cancel(ctx, aj.JobId, "mine now")
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	_, err = bc.Await(ctx, aj.JobId)
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	_, err = bc.Watch(ctx, aj.JobId, nil)
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	jobs, err := bc.List(ctx, 0, 100)
	require.NoError(t, err)
	require.Equal(t, []string{bj.JobId}, ids(jobs))
	jobs, err = sc.client(t, reader.Secret).List(ctx, 0, 100)
	require.NoError(t, err)
	require.Empty(t, jobs, "reader submitted nothing")

	// Alice sees and cancels her own; admin sees both and cancels bob's.
	st, err = ac.Status(ctx, aj.JobId)
	require.NoError(t, err)
	require.Equal(t, aj.JobId, st.Job.JobId)
	_, err = ac.Cancel(ctx, aj.JobId, "test")
	require.NoError(t, err)
	oc := sc.client(t, ops.Secret)
	jobs, err = oc.List(ctx, 0, 100)
	require.NoError(t, err)
	require.True(t, slices.Contains(ids(jobs), aj.JobId) && slices.Contains(ids(jobs), bj.JobId), ids(jobs))
	can, err := oc.Cancel(ctx, bj.JobId, "admin")
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_CANCELLED, can.State)

	// Plain HTTP paths.
	require.Equal(t, http.StatusOK, sc.get(t, "/healthz", ""), "probes need no token")
	require.Equal(t, http.StatusUnauthorized, sc.get(t, "/metrics", ""))
	require.Equal(t, http.StatusOK, sc.get(t, "/metrics", reader.Secret))
	require.Equal(t, http.StatusForbidden, sc.get(t, "/metrics", authtestSubmitOnly(t, sc)))

	for _, tk := range []authtest.Token{alice, bob, reader, ops} {
		require.NotContains(t, sc.logs.String(), tk.Secret, "the log holds no token")
	}
	require.Contains(t, sc.logs.String(), "job cancelled", "the log was captured")
}

// authtestSubmitOnly adds a submit-only identity to the tokens file (a
// reload on change) and returns its token.
func authtestSubmitOnly(t *testing.T, sc *secureCoordinator) string {
	t.Helper()
	tk := authtest.NewToken("submitter", "submit", "")
	authtest.AppendToken(t, sc.tokens, tk)
	return tk.Secret
}

// TestAPILimits: a submit rate and a quota of open jobs answer
// resource_exhausted naming the limit; a cancelled job frees its place.
func TestAPILimits(t *testing.T) {
	c := newCluster(t, queue.Config{})
	quota := authtest.NewToken("quota", "submit,read,cancel", "max-open=1")
	rate := authtest.NewToken("rate", "submit", "rate=1/h burst=2")
	sc := c.startSecureCoordinator(auth.Limits{MaxOpen: 100}, quota, rate)
	ctx := c.ctx

	rc := sc.client(t, rate.Secret)
	for range 2 { // an empty C1 is refused after the rate is taken
		_, err := rc.Submit(ctx, &c2clusterv1.SubmitRequest{})
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	}
	_, err := rc.Submit(ctx, &c2clusterv1.SubmitRequest{})
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "identity rate exceeds its submit rate limit")

	doc := sealedC1(t, 32)
	qc := sc.client(t, quota.Secret)
	first, err := qc.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(t, err)
	_, err = qc.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "identity quota has 1 open jobs")
	require.ErrorContains(t, err, "max-open is 1")
	_, err = qc.Cancel(ctx, first.JobId, "")
	require.NoError(t, err)
	_, err = qc.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(t, err, "the cancelled job no longer counts")
}

// TestTokenReload: a token added to the file works without a restart, a
// removed one stops working.
func TestTokenReload(t *testing.T) {
	c := newCluster(t, queue.Config{})
	old := authtest.NewToken("old", "read", "")
	sc := c.startSecureCoordinator(auth.Limits{}, old)
	ctx := context.Background()
	_, err := sc.client(t, old.Secret).List(ctx, 0, 1)
	require.NoError(t, err)
	fresh := authtest.NewToken("fresh", "read", "")
	authtest.WriteTokens(t, sc.tokens, fresh)
	authtest.Touch(t, sc.tokens)
	_, err = sc.client(t, fresh.Secret).List(ctx, 0, 1)
	require.NoError(t, err)
	_, err = sc.client(t, old.Secret).List(ctx, 0, 1)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
}
