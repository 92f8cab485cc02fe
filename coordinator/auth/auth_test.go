package auth_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/auth"
	"github.com/c2cluster/c2cluster/coordinator/auth/authtest"
)

// touch moves a file's modification time forward so a change is seen even
// within the file system's timestamp granularity.
func touch(t *testing.T, path string, d time.Duration) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(path, st.ModTime().Add(d), st.ModTime().Add(d)))
}

func TestTokensFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	alice := authtest.NewToken("alice", "submit,read", "rate=10/m burst=3 max-open=7")
	ops := authtest.NewToken("ops", "admin", "")
	authtest.WriteTokens(t, path, alice, ops)
	var logs bytes.Buffer
	tokens, err := auth.LoadTokens(path, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	tokens.CheckEvery = 0

	id := tokens.Lookup(alice.Secret)
	require.NotNil(t, id)
	require.Equal(t, "alice", id.Name)
	require.True(t, id.Has(auth.Submit|auth.Read))
	require.False(t, id.Has(auth.Cancel))
	require.False(t, id.Admin())
	require.InDelta(t, 10.0/60, id.Limits.SubmitRate, 1e-9)
	require.Equal(t, auth.Limits{SubmitRate: 10.0 / 60, SubmitBurst: 3, MaxOpen: 7}, id.Limits)
	require.True(t, tokens.Lookup(ops.Secret).Has(auth.Cancel), "admin has every scope")
	require.Nil(t, tokens.Lookup("c2t_not-a-token"))
	require.Nil(t, tokens.Lookup(""))

	// A changed file is re-read on the next lookup: alice goes, bob comes.
	bob := authtest.NewToken("bob", "read", "")
	authtest.WriteTokens(t, path, bob, ops)
	touch(t, path, time.Second)
	require.Nil(t, tokens.Lookup(alice.Secret))
	require.Equal(t, "bob", tokens.Lookup(bob.Secret).Name)

	// A broken file leaves the loaded entries in force and says why.
	require.NoError(t, os.WriteFile(path, []byte("carol submit sha256:abcd\n"), 0o600))
	touch(t, path, 2*time.Second)
	require.Equal(t, "bob", tokens.Lookup(bob.Secret).Name)
	require.Contains(t, logs.String(), "line 1")
	err = tokens.Reload()
	require.ErrorContains(t, err, "line 1")
	require.Equal(t, 2, tokens.Len())

	// Reload (SIGHUP) reads a fixed file.
	authtest.WriteTokens(t, path, alice)
	require.NoError(t, tokens.Reload())
	require.Nil(t, tokens.Lookup(bob.Secret))
	require.NotNil(t, tokens.Lookup(alice.Secret))

	for _, s := range []string{alice.Secret, bob.Secret, ops.Secret} {
		require.NotContains(t, logs.String(), s, "a token is never logged")
	}
}

func TestTokensFileErrors(t *testing.T) {
	h := auth.HashCredential("x")
	for _, tc := range []struct{ file, want string }{
		{"alice submit", "line 1: want: name scopes"},
		{"# c\n\nalice frob " + h, "line 3: unknown scope \"frob\""},
		{"al/ice read " + h, "outside [A-Za-z0-9._-]"},
		{"alice read c2t_plaintexttoken", "never the token"},
		{"alice read sha256:12", "64 hex digits"},
		{"alice read " + h + "\nalice submit " + auth.HashCredential("y"), "line 2: name \"alice\" is also on line 1"},
		{"alice read " + h + "\nbob submit " + h, "line 2: the same token hash is on line 1"},
		{"alice read " + h + " rate=fast", "rate \"fast\""},
		{"alice read " + h + " max-open=0", "max-open=0"},
		{"alice read " + h + " colour=blue", "unknown option \"colour\""},
	} {
		path := filepath.Join(t.TempDir(), "tokens")
		require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
		_, err := auth.LoadTokens(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.ErrorContains(t, err, tc.want, tc.file)
		require.ErrorContains(t, err, path)
	}
}

func TestCheckListen(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "127.1.2.3:1"} {
		require.True(t, auth.IsLoopback(addr), addr)
		require.NoError(t, auth.CheckListen("the API", addr, false, false, "x"), addr)
	}
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "10.0.0.5:8080", "coordinator:8080", "garbage"} {
		require.False(t, auth.IsLoopback(addr), addr)
		err := auth.CheckListen("the API", addr, false, false, "give -tokens-file")
		require.ErrorContains(t, err, "refusing to serve the API on "+addr+" without authentication")
		require.ErrorContains(t, err, "give -tokens-file")
		require.ErrorContains(t, err, "-insecure")
		require.NoError(t, auth.CheckListen("the API", addr, true, false, "x"), "protected")
		require.NoError(t, auth.CheckListen("the API", addr, false, true, "x"), "insecure")
	}
}

func TestRateLimiter(t *testing.T) {
	l := auth.NewRateLimiter()
	lim := auth.Limits{SubmitRate: 1.0 / 3600, SubmitBurst: 2}
	require.NoError(t, l.Allow("alice", lim))
	require.NoError(t, l.Allow("alice", lim))
	err := l.Allow("alice", lim)
	require.ErrorContains(t, err, "identity alice exceeds its submit rate limit")
	require.ErrorContains(t, err, "burst 2")
	require.NoError(t, l.Allow("bob", lim), "each identity has its own bucket")
	for range 100 {
		require.NoError(t, l.Allow("carol", auth.Limits{}), "rate 0 is unlimited")
	}
}

func TestScopes(t *testing.T) {
	s, err := auth.ParseScopes("submit,read")
	require.NoError(t, err)
	require.Equal(t, "submit,read", s.String())
	require.True(t, s.Has(auth.Read))
	require.False(t, s.Has(auth.Read|auth.Cancel))
	_, err = auth.ParseScopes("submit,,read")
	require.Error(t, err)
}

// TestHTTPAuth: the middleware and RequireHTTP over real TLS: a bearer
// token, a client certificate mapped by a cert: entry, none, a wrong one.
func TestHTTPAuth(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "test CA")
	certFile, keyFile := ca.Server(t, "server", "coordinator")
	curioCert, curioKey := ca.Client(t, "curio", "curio.example")
	strangerCert, strangerKey := ca.Client(t, "stranger", "stranger")
	reader := authtest.NewToken("reader", "read", "")
	submitter := authtest.NewToken("submitter", "submit", "")
	path := filepath.Join(dir, "tokens")
	authtest.WriteTokens(t, path, reader, submitter)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("curio submit,read,cancel cert:curio.example\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	tokens, err := auth.LoadTokens(path, nil)
	require.NoError(t, err)
	a := &auth.Authenticator{Tokens: tokens}

	cfg, _, err := auth.ServerTLS(auth.TLSFiles{Cert: certFile, Key: keyFile, ClientCA: ca.File}, nil)
	require.NoError(t, err)
	url := authtest.ServeTLS(t, a.Middleware(auth.RequireHTTP(auth.Read, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := auth.FromContext(r.Context())
		_, _ = io.WriteString(w, id.Name)
	}))), cfg)

	pool, err := auth.LoadCAs(ca.File)
	require.NoError(t, err)
	get := func(token, cert, key string) (int, string) {
		tc := &tls.Config{RootCAs: pool}
		if cert != "" {
			c, err := tls.LoadX509KeyPair(cert, key)
			require.NoError(t, err)
			tc.Certificates = []tls.Certificate{c}
		}
		cl := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
		req, err := http.NewRequest("GET", url+"/x", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := cl.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.TrimSpace(string(b))
	}
	code, body := get(reader.Secret, "", "")
	require.Equal(t, 200, code)
	require.Equal(t, "reader", body)
	code, body = get(submitter.Secret, "", "")
	require.Equal(t, 403, code)
	require.Contains(t, body, "identity submitter lacks the read scope")
	code, body = get("", "", "")
	require.Equal(t, 401, code)
	require.Contains(t, body, "no credentials")
	code, body = get("c2t_wrong", "", "")
	require.Equal(t, 401, code)
	require.NotContains(t, body, "c2t_wrong")
	code, body = get("", curioCert, curioKey)
	require.Equal(t, 200, code)
	require.Equal(t, "curio", body)
	code, body = get("", strangerCert, strangerKey)
	require.Equal(t, 401, code, body)
	require.Contains(t, body, "no cert: entry")
}

// TestCertReload: a new certificate written over the files is served to
// the next connection without a restart; a broken one is not.
func TestCertReload(t *testing.T) {
	ca := authtest.NewCA(t, "test CA")
	certFile, keyFile := ca.Server(t, "server", "first")
	cfg, reloader, err := auth.ServerTLS(auth.TLSFiles{Cert: certFile, Key: keyFile}, nil)
	require.NoError(t, err)
	reloader.CheckEvery = 0
	url := authtest.ServeTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), cfg)
	pool, err := auth.LoadCAs(ca.File)
	require.NoError(t, err)
	served := func() string {
		c, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		require.NoError(t, err)
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	require.Equal(t, "first", served())

	newCert, newKey := ca.Server(t, "renewed", "second")
	for _, p := range [][2]string{{newCert, certFile}, {newKey, keyFile}} {
		b, err := os.ReadFile(p[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p[1], b, 0o600))
		touch(t, p[1], time.Second)
	}
	require.Equal(t, "second", served())

	require.NoError(t, os.WriteFile(certFile, []byte("not a certificate"), 0o600))
	touch(t, certFile, 2*time.Second)
	require.Equal(t, "second", served(), "a broken file leaves the loaded certificate in use")
}

// TestInterceptorCodes: Check gives unauthenticated and permission_denied.
func TestInterceptorCodes(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	a := &auth.Authenticator{}
	var got error
	a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = auth.Check(r.Context(), auth.Read)
	})).ServeHTTP(httptest.NewRecorder(), req)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(got))
	ctx := auth.NewContext(req.Context(), &auth.Identity{Name: "x", Scopes: auth.Submit})
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(auth.Check(ctx, auth.Read)))
	require.NoError(t, auth.Check(ctx, auth.Submit))
	require.NoError(t, auth.Check(req.Context(), auth.Admin), "no authentication ran: not restricted")
}
