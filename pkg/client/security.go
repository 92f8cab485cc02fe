package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/c2cluster/c2cluster/pkg/tlsfiles"
)

// WithToken sends token on every call as the header Authorization: Bearer
// (the coordinator's -tokens-file). The token never appears in an error of
// this package.
func WithToken(token string) Option { return func(o *options) { o.token = strings.TrimSpace(token) } }

// WithTLS uses cfg for an https:// coordinator: a private CA
// (cfg.RootCAs), a client certificate (cfg.Certificates). Ignored when
// WithHTTPClient gives the client.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// TLSFiles are a client's TLS settings as PEM files; every field is
// optional.
type TLSFiles struct {
	// CA is the CA file the coordinator's certificate must chain to
	// ("": the system's roots).
	CA string
	// Cert and Key are the client certificate and its key (mTLS).
	Cert, Key string
}

// Config returns the TLS configuration of f (nil when f is empty).
func (f TLSFiles) Config() (*tls.Config, error) {
	if f == (TLSFiles{}) {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pool, err := tlsfiles.CAPool(f.CA)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		cfg.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, errors.New("client: a client certificate needs both its certificate file and its key file")
	}
	if f.Cert != "" {
		c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("client: client certificate %s and key %s: %w", f.Cert, f.Key, err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}

// ReadTokenFile reads a bearer token from a file: its first line, trimmed.
// An empty file is an error naming the file (never the token).
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("client: token file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("client: token file %s is empty", path)
}

// tlsClient is an HTTP client of an https:// coordinator with cfg,
// speaking HTTP/2 (gRPC) or HTTP/1.1 as the server offers.
func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}}
}

// bearer adds the token to every request.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			req.Header().Set("Authorization", "Bearer "+string(b))
		}
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// The environment variables of a command-line client's credentials.
const (
	EnvToken     = "C2_TOKEN"       // the bearer token itself
	EnvTokenFile = "C2_TOKEN_FILE"  // a file holding the bearer token
	EnvCA        = "C2_CA"          // CA file of the coordinator's certificate
	EnvCert      = "C2_CLIENT_CERT" // client certificate file (mTLS)
	EnvKey       = "C2_CLIENT_KEY"  // its key file
)

// Credentials are how a command-line client authenticates: a bearer token
// (itself, or a file holding it) and TLS files.
type Credentials struct {
	// Token is the bearer token (from $C2_TOKEN; a command line would
	// show it to every user of the machine).
	Token string
	// TokenFile holds the bearer token; used when Token is empty.
	TokenFile string
	TLS       TLSFiles
}

// CredentialsFromEnv reads $C2_TOKEN, $C2_TOKEN_FILE, $C2_CA,
// $C2_CLIENT_CERT and $C2_CLIENT_KEY.
func CredentialsFromEnv() Credentials {
	return Credentials{Token: os.Getenv(EnvToken), TokenFile: os.Getenv(EnvTokenFile),
		TLS: TLSFiles{CA: os.Getenv(EnvCA), Cert: os.Getenv(EnvCert), Key: os.Getenv(EnvKey)}}
}

// Options are the client options of c: WithToken and WithTLS as given.
func (c Credentials) Options() ([]Option, error) {
	var opts []Option
	token := strings.TrimSpace(c.Token)
	if token == "" && c.TokenFile != "" {
		t, err := ReadTokenFile(c.TokenFile)
		if err != nil {
			return nil, err
		}
		token = t
	}
	if token != "" {
		opts = append(opts, WithToken(token))
	}
	cfg, err := c.TLS.Config()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, WithTLS(cfg))
	}
	return opts, nil
}
