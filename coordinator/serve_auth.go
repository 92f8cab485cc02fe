package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/c2cluster/c2cluster/coordinator/auth"
)

// Defaults of an identity's limits (serve's -submit-rate, -submit-burst,
// -max-open-jobs).
const (
	submitRateDefault  = "5/s"
	submitBurstDefault = 50
	maxOpenDefault     = 200
)

// securityConfig is serve's API and cuzk-API security: TLS, tokens,
// client certificates, limits and the -insecure override.
type securityConfig struct {
	tlsCert, tlsKey, tlsClientCA string
	tokensFile                   string
	insecure                     bool
	metricsListen                string
	submitRate                   string
	submitBurst, maxOpen         int
	cuzkTLSCert, cuzkTLSKey      string
	cuzkTLSClientCA              string
}

func (c *securityConfig) register(fs *flag.FlagSet) error {
	fs.StringVar(&c.tlsCert, "tls-cert", envOr("C2_TLS_CERT", ""), "PEM certificate (chain) of the API listener: serve TLS; re-read when the file changes ($C2_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", envOr("C2_TLS_KEY", ""), "PEM private key of -tls-cert ($C2_TLS_KEY)")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", envOr("C2_TLS_CLIENT_CA", ""), "PEM CA file that client certificates must chain to (mTLS); required of every client unless -tokens-file is given too ($C2_TLS_CLIENT_CA)")
	fs.StringVar(&c.tokensFile, "tokens-file", envOr("C2_TOKENS_FILE", ""), "file of API identities: name, scopes, sha256:<hash of token> or cert:<client CN>, limits (docs/security.md); re-read on change and SIGHUP ($C2_TOKENS_FILE)")
	fs.BoolVar(&c.insecure, "insecure", envOr("C2_INSECURE", "false") == "true", "allow serving the API (and a TCP cuzk API) without authentication on a non-loopback address ($C2_INSECURE)")
	fs.StringVar(&c.metricsListen, "metrics-listen", envOr("C2_METRICS_LISTEN", ""), "also serve /metrics and /healthz, without authentication, on this address (e.g. for Prometheus); empty: off ($C2_METRICS_LISTEN)")
	fs.StringVar(&c.submitRate, "submit-rate", envOr("C2_SUBMIT_RATE", submitRateDefault), "submissions per identity: a number per second, or N/s, N/m, N/h; 0: unlimited; a tokens-file rate= overrides ($C2_SUBMIT_RATE)")
	burst, err := strconv.Atoi(envOr("C2_SUBMIT_BURST", strconv.Itoa(submitBurstDefault)))
	if err != nil {
		return fmt.Errorf("C2_SUBMIT_BURST: %w", err)
	}
	fs.IntVar(&c.submitBurst, "submit-burst", burst, "submissions an identity may make at once above -submit-rate ($C2_SUBMIT_BURST)")
	maxOpen, err := strconv.Atoi(envOr("C2_MAX_OPEN_JOBS", strconv.Itoa(maxOpenDefault)))
	if err != nil {
		return fmt.Errorf("C2_MAX_OPEN_JOBS: %w", err)
	}
	fs.IntVar(&c.maxOpen, "max-open-jobs", maxOpen, "open (queued, proving, assembling) jobs per identity; 0: unlimited; a tokens-file max-open= overrides ($C2_MAX_OPEN_JOBS)")
	fs.StringVar(&c.cuzkTLSCert, "cuzk-tls-cert", envOr("C2_CUZK_TLS_CERT", ""), "PEM certificate of the TCP cuzk API listener (with -cuzk-tls-key and -cuzk-tls-client-ca: mTLS) ($C2_CUZK_TLS_CERT)")
	fs.StringVar(&c.cuzkTLSKey, "cuzk-tls-key", envOr("C2_CUZK_TLS_KEY", ""), "PEM private key of -cuzk-tls-cert ($C2_CUZK_TLS_KEY)")
	fs.StringVar(&c.cuzkTLSClientCA, "cuzk-tls-client-ca", envOr("C2_CUZK_TLS_CLIENT_CA", ""), "PEM CA file that Curio's client certificate must chain to on the TCP cuzk API ($C2_CUZK_TLS_CLIENT_CA)")
	return nil
}

// check validates the flags and the listen rule for the addresses.
func (c *securityConfig) check(listen, cuzkListen string) error {
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return errors.New("-tls-cert and -tls-key go together")
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return errors.New("-tls-client-ca needs -tls-cert and -tls-key (client certificates are part of TLS)")
	}
	if (c.cuzkTLSCert == "") != (c.cuzkTLSKey == "") || (c.cuzkTLSClientCA != "" && c.cuzkTLSCert == "") {
		return errors.New("-cuzk-tls-cert and -cuzk-tls-key go together, and -cuzk-tls-client-ca needs them")
	}
	if _, err := auth.ParseRate(c.submitRate); err != nil {
		return fmt.Errorf("-submit-rate: %w", err)
	}
	if c.submitBurst < 1 {
		return fmt.Errorf("-submit-burst %d: want ≥ 1", c.submitBurst)
	}
	if c.maxOpen < 0 {
		return fmt.Errorf("-max-open-jobs %d: want ≥ 0", c.maxOpen)
	}
	if err := auth.CheckListen("the API", listen, c.authenticated(), c.insecure,
		"give -tokens-file (bearer tokens) or -tls-client-ca (client certificates)"); err != nil {
		return err
	}
	if cuzkListen != "" {
		if err := auth.CheckListen("the cuzk API", cuzkListen, c.cuzkTLSClientCA != "", c.insecure,
			"Curio sends no token: use -cuzk-socket, or -cuzk-tls-cert, -cuzk-tls-key and -cuzk-tls-client-ca (mTLS)"); err != nil {
			return err
		}
	}
	return nil
}

// authenticated reports whether the API authenticates its callers.
func (c *securityConfig) authenticated() bool { return c.tokensFile != "" || c.tlsClientCA != "" }

// limits are the flags' default limits of an identity.
func (c *securityConfig) limits() auth.Limits {
	r, _ := auth.ParseRate(c.submitRate)
	return auth.Limits{SubmitRate: r, SubmitBurst: c.submitBurst, MaxOpen: c.maxOpen}
}

// apiSecurity is what serve runs the API with.
type apiSecurity struct {
	auth *auth.Authenticator // nil: no authentication
	tls  *tls.Config         // nil: plain text
}

// setup loads the tokens file and the TLS material, and reloads the tokens
// file on SIGHUP until ctx ends.
func (c *securityConfig) setup(ctx context.Context, listen string, log *slog.Logger) (*apiSecurity, error) {
	sec := &apiSecurity{}
	if c.tlsCert != "" {
		cfg, _, err := auth.ServerTLS(auth.TLSFiles{Cert: c.tlsCert, Key: c.tlsKey, ClientCA: c.tlsClientCA,
			RequireClientCert: c.tlsClientCA != "" && c.tokensFile == ""}, log)
		if err != nil {
			return nil, err
		}
		sec.tls = cfg
	}
	if !c.authenticated() {
		if !auth.IsLoopback(listen) {
			log.Warn("coordinator: the API has no authentication (-insecure): anyone who reaches it can submit, read and cancel every job", slog.String("addr", listen))
		}
		return sec, nil
	}
	a := &auth.Authenticator{}
	if c.tokensFile != "" {
		tokens, err := auth.LoadTokens(c.tokensFile, log)
		if err != nil {
			return nil, err
		}
		a.Tokens = tokens
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		go func() {
			defer signal.Stop(hup)
			for {
				select {
				case <-ctx.Done():
					return
				case <-hup:
					if err := tokens.Reload(); err != nil {
						log.Error("coordinator: SIGHUP: the tokens file does not load; the loaded tokens stay in force", slog.Any("err", err))
					}
				}
			}
		}()
	} else {
		// Client certificates alone: each verified certificate is an
		// identity named by its Common Name.
		a.CertScopes = auth.Submit | auth.Read | auth.Cancel
	}
	if sec.tls == nil && !auth.IsLoopback(listen) {
		log.Warn("coordinator: bearer tokens over plain text: give -tls-cert and -tls-key unless a TLS proxy is in front", slog.String("addr", listen))
	}
	sec.auth = a
	return sec, nil
}

// cuzkTLS is the TCP cuzk API's TLS configuration (nil: plain text).
func (c *securityConfig) cuzkTLS(log *slog.Logger) (*tls.Config, error) {
	if c.cuzkTLSCert == "" {
		return nil, nil
	}
	cfg, _, err := auth.ServerTLS(auth.TLSFiles{Cert: c.cuzkTLSCert, Key: c.cuzkTLSKey, ClientCA: c.cuzkTLSClientCA,
		RequireClientCert: c.cuzkTLSClientCA != ""}, log)
	if err != nil {
		return nil, fmt.Errorf("cuzk API: %w", err)
	}
	return cfg, nil
}

// cuzkIdentity is who the cuzk API's requests are: Curio, the owner of the
// jobs it submits, under the default limits (-submit-rate, -max-open-jobs).
var cuzkIdentity = &auth.Identity{Name: "cuzk", Scopes: auth.Submit | auth.Read | auth.Cancel}

// serveMetrics serves /metrics and /healthz of h on addr, unauthenticated.
func serveMetrics(addr string, h http.Handler, log *slog.Logger, errc chan<- error) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.Handle("/healthz", h)
	s := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics on %s: %w", ln.Addr(), err)
		}
	}()
	log.Info("coordinator: serving /metrics and /healthz without authentication", slog.String("addr", ln.Addr().String()))
	return s, nil
}

// cuzkTLSConfig is cfg offering HTTP/2 (gRPC) and HTTP/1.1 by ALPN, for a
// listener made with tls.NewListener.
func cuzkTLSConfig(cfg *tls.Config) *tls.Config {
	c := cfg.Clone()
	c.NextProtos = []string{"h2", "http/1.1"}
	return c
}

// cuzkHandler gives every cuzk API request the cuzk identity: the jobs
// Curio submits are owned by "cuzk" and count against no API identity.
func cuzkHandler(h http.Handler) http.Handler { return auth.WithIdentity(cuzkIdentity, h) }
