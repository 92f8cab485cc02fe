package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/c2cluster/c2cluster/coordinator/cuzk"
	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/coordinator/web"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/secret"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

// serveConfig is the serve command's configuration (flags and environment).
type serveConfig struct {
	listen          string
	cuzkListen      string
	cuzkSocket      string
	natsURL         string
	natsEmbeddedDir string
	redisAddr       string
	redisPrefix     string
	paramsDir       string
	officialDir     string
	otlpEndpoint    string
	otlpInsecure    bool
	jaegerQuery     string
	jaegerUI        string
	logLevel        string
	logFormat       string
	maxC1Bytes      int64
	verifyVanilla   bool
	ackWait         time.Duration
	maxDeliver      int
	trust           server.TrustConfig
	shutdownTimeout time.Duration
	bodyTimeout     time.Duration
	conn            connSettings
	security        securityConfig
}

func parseServe(args []string, stderr io.Writer) (*serveConfig, error) {
	fs := newFlags("serve", stderr)
	c := &serveConfig{}
	fs.StringVar(&c.listen, "listen", envOr("C2_LISTEN", "127.0.0.1:8080"), "address of the API, /metrics and /healthz; a non-loopback address needs -tokens-file, -tls-client-ca or -insecure ($C2_LISTEN)")
	fs.StringVar(&c.cuzkListen, "cuzk-listen", envOr("C2_CUZK_LISTEN", ""), "TCP address of Curio's cuzk proving-engine API (gRPC), e.g. "+cuzk.DefaultTCPAddr+"; empty: off ($C2_CUZK_LISTEN)")
	fs.StringVar(&c.cuzkSocket, "cuzk-socket", envOr("C2_CUZK_SOCKET", ""), "unix socket of Curio's cuzk proving-engine API (gRPC), e.g. "+cuzk.DefaultSocketPath+"; empty: off ($C2_CUZK_SOCKET)")
	fs.StringVar(&c.natsURL, "nats", envOr("C2_NATS_URL", queue.URLDefault), "NATS server URL, or several separated by commas ($C2_NATS_URL)")
	fs.StringVar(&c.natsEmbeddedDir, "nats-embedded-dir", envOr("C2_NATS_EMBEDDED_DIR", ""), "run an embedded NATS server with JetStream stored here instead of dialing -nats ($C2_NATS_EMBEDDED_DIR)")
	fs.StringVar(&c.redisAddr, "redis", envOr("C2_REDIS_ADDR", ""), "Redis address: host:port, or a redis:// or rediss:// (TLS) URL; default "+jobstore.AddrDefault+" unless -redis-sentinels or -redis-cluster is set ($C2_REDIS_ADDR)")
	if err := c.conn.register(fs); err != nil {
		return nil, err
	}
	fs.StringVar(&c.redisPrefix, "redis-prefix", envOr("C2_REDIS_PREFIX", jobstore.PrefixDefault), "prefix of every Redis key ($C2_REDIS_PREFIX)")
	fs.StringVar(&c.paramsDir, "params-dir", envOr("C2_PARAMS_DIR", "params"), "folder of <shape>.vk verifying keys ($C2_PARAMS_DIR)")
	fs.StringVar(&c.officialDir, "official-params-dir", ceremony.Dir(), "Filecoin's parameter folder, whose official .vk files the Verify API uses when present ($"+ceremony.EnvDir+")")
	fs.StringVar(&c.otlpEndpoint, "otlp", envOr("C2_OTLP_ENDPOINT", ""), "OTLP/gRPC trace collector host:port, e.g. Jaeger's 127.0.0.1:4317; empty: no export ($C2_OTLP_ENDPOINT)")
	fs.BoolVar(&c.otlpInsecure, "otlp-insecure", envOr("C2_OTLP_INSECURE", "true") == "true", "no TLS to the collector ($C2_OTLP_INSECURE)")
	fs.StringVar(&c.jaegerQuery, "jaeger-query", envOr("C2_JAEGER_QUERY", ""), "base URL of Jaeger's HTTP query API, e.g. http://127.0.0.1:16686, read for the traces on the web page /ui/; empty: the page says traces are unavailable ($C2_JAEGER_QUERY)")
	fs.StringVar(&c.jaegerUI, "jaeger-ui", envOr("C2_JAEGER_UI", ""), "base URL of Jaeger's web UI as a browser reaches it, e.g. http://127.0.0.1:16686, for the web page's trace links; empty: no links ($C2_JAEGER_UI)")
	fs.StringVar(&c.logLevel, "log-level", envOr("C2_LOG_LEVEL", "info"), "debug, info, warn or error ($C2_LOG_LEVEL)")
	fs.StringVar(&c.logFormat, "log-format", envOr("C2_LOG_FORMAT", "text"), "text or json ($C2_LOG_FORMAT)")
	maxC1, err := strconv.ParseInt(envOr("C2_MAX_C1_BYTES", strconv.Itoa(server.MaxC1BytesDefault)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("C2_MAX_C1_BYTES: %w", err)
	}
	fs.Int64Var(&c.maxC1Bytes, "max-c1-bytes", maxC1, "largest C1 output accepted ($C2_MAX_C1_BYTES)")
	fs.BoolVar(&c.verifyVanilla, "verify-vanilla", envOr("C2_VERIFY_VANILLA", "false") == "true", "run the native vanilla-proof check on every submit ($C2_VERIFY_VANILLA)")
	ackWait, err := time.ParseDuration(envOr("C2_ACK_WAIT", queue.AckWaitDefault.String()))
	if err != nil {
		return nil, fmt.Errorf("C2_ACK_WAIT: %w", err)
	}
	fs.DurationVar(&c.ackWait, "ack-wait", ackWait, "JetStream AckWait of partition tasks; workers heartbeat well inside it ($C2_ACK_WAIT)")
	maxDeliver, err := strconv.Atoi(envOr("C2_MAX_DELIVER", strconv.Itoa(queue.MaxDeliverDefault)))
	if err != nil {
		return nil, fmt.Errorf("C2_MAX_DELIVER: %w", err)
	}
	fs.IntVar(&c.maxDeliver, "max-deliver", maxDeliver, "deliveries of a partition before it is a dead letter and fails its job ($C2_MAX_DELIVER)")
	if err := registerTrustFlags(fs, &c.trust); err != nil {
		return nil, err
	}
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish on SIGTERM")
	bodyTimeout, err := time.ParseDuration(envOr("C2_BODY_TIMEOUT", server.BodyTimeoutDefault.String()))
	if err != nil {
		return nil, fmt.Errorf("C2_BODY_TIMEOUT: %w", err)
	}
	fs.DurationVar(&c.bodyTimeout, "body-timeout", bodyTimeout, "how long an API request's body may take to arrive, from the request's start; 0: no limit ($C2_BODY_TIMEOUT)")
	if err := c.security.register(fs); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.bodyTimeout == 0 {
		c.bodyTimeout = -1 // server.Config: negative is no limit
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if err := c.conn.check(c.natsURL, c.redisAddr); err != nil {
		return nil, err
	}
	if c.jaegerQuery, err = web.ParseBaseURL(c.jaegerQuery); err != nil {
		return nil, fmt.Errorf("-jaeger-query: %w", err)
	}
	if c.jaegerUI, err = web.ParseBaseURL(c.jaegerUI); err != nil {
		return nil, fmt.Errorf("-jaeger-ui: %w", err)
	}
	if err := c.security.check(c.listen, c.cuzkListen); err != nil {
		return nil, err
	}
	return c, nil
}

func runServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log, err := telemetry.NewLogger(stderr, telemetry.LogConfig{Level: cfg.logLevel, Format: cfg.logFormat})
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	sec, err := cfg.security.setup(ctx, cfg.listen, log)
	if err != nil {
		return err
	}
	tr, err := telemetry.Setup(ctx, telemetry.TracingConfig{ServiceName: "c2-coordinator", Endpoint: cfg.otlpEndpoint, Insecure: cfg.otlpInsecure})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tr.Shutdown(sctx)
	}()

	natsURL := cfg.natsURL
	if cfg.natsEmbeddedDir != "" {
		emb, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: cfg.natsEmbeddedDir})
		if err != nil {
			return err
		}
		defer emb.Shutdown()
		natsURL = emb.URL()
		log.Info("coordinator: embedded NATS JetStream", slog.String("url", natsURL), slog.String("dir", cfg.natsEmbeddedDir))
	}
	nc, err := queue.Dial(cfg.conn.natsConn(natsURL, cfg.natsEmbeddedDir != "", log))
	if err != nil {
		return err
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, queue.Config{AckWait: cfg.ackWait, MaxDeliver: cfg.maxDeliver})
	if err != nil {
		return err
	}

	redisConn := cfg.conn.redisDial(cfg.redisAddr)
	store, err := jobstore.Dial(ctx, redisConn, jobstore.Config{Prefix: cfg.redisPrefix})
	if err != nil {
		return err
	}
	defer store.Close()
	if st, err := os.Stat(cfg.paramsDir); err != nil || !st.IsDir() {
		log.Warn("coordinator: params dir missing: every submit will be refused until <shape>.vk files are there", slog.String("dir", cfg.paramsDir))
	}
	srv, err := server.New(server.Config{MaxC1Bytes: cfg.maxC1Bytes, BodyTimeout: cfg.bodyTimeout, VerifyVanilla: cfg.verifyVanilla, Logger: log, Trust: cfg.trust,
		Auth: sec.auth, Limits: cfg.security.limits()}, q, store,
		&server.PoRep{ParamsDir: cfg.paramsDir, OfficialDir: cfg.officialDir, MaxC1Bytes: cfg.maxC1Bytes})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	defer srv.Stop()

	page, err := web.New(srv, web.Config{JaegerQuery: cfg.jaegerQuery, JaegerUI: cfg.jaegerUI, Logger: log})
	if err != nil {
		return err
	}
	mux := srv.Mux()
	page.Register(mux)
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.listen, err)
	}
	// No ReadTimeout or WriteTimeout: they would cut Watch streams and
	// Await long-polls. Request bodies have their own deadline
	// (-body-timeout, server.Config.BodyTimeout), lifted once read.
	hs := &http.Server{Handler: mux, Protocols: server.Protocols(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	hs.Handler, hs.TLSConfig = srv.Protect(mux), sec.tls
	scheme := "http://"
	if sec.tls != nil {
		scheme = "https://"
	}
	errc := make(chan error, 4)
	go func() {
		if sec.tls != nil {
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	log.Info("coordinator: serving", slog.String("addr", ln.Addr().String()), slog.String("nats", secret.RedactURL(natsURL)),
		slog.String("redis", redisConn.Where()), slog.String("params", cfg.paramsDir), slog.String("official_params", cfg.officialDir),
		slog.String("page", scheme+ln.Addr().String()+web.Prefix), slog.String("jaeger_query", cfg.jaegerQuery),
		slog.Bool("tls", sec.tls != nil), slog.Bool("auth", sec.auth != nil))
	cuzkServers, err := serveCuzk(cfg, srv, log, errc)
	if err != nil {
		_ = hs.Close()
		return err
	}
	if cfg.security.metricsListen != "" {
		ms, err := serveMetrics(cfg.security.metricsListen, mux, log, errc)
		if err != nil {
			_ = hs.Close()
			for _, s := range cuzkServers {
				_ = s.Close()
			}
			return err
		}
		cuzkServers = append(cuzkServers, ms) // shut down with them
	}
	select {
	case err := <-errc:
		for _, s := range cuzkServers {
			_ = s.Close()
		}
		_ = hs.Close()
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	log.Info("coordinator: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	for _, s := range cuzkServers {
		// A Prove waits for its proof: when the drain times out, close.
		if err := s.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("coordinator: cuzk API: closing with requests in flight", slog.Any("err", err))
			_ = s.Close()
		}
	}
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// serveCuzk serves Curio's cuzk proving-engine API on -cuzk-listen and
// -cuzk-socket (none when both are empty); Serve errors go to errc.
func serveCuzk(cfg *serveConfig, srv *server.Server, log *slog.Logger, errc chan<- error) ([]*http.Server, error) {
	if cfg.cuzkListen == "" && cfg.cuzkSocket == "" {
		return nil, nil
	}
	eng, err := cuzk.New(srv, cuzk.Config{Metrics: srv.Metrics(), MaxMessageBytes: int(cfg.maxC1Bytes) + 1<<20, Logger: log})
	if err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.security.cuzkTLS(log)
	if err != nil {
		return nil, err
	}
	var lns []net.Listener
	if cfg.cuzkListen != "" {
		ln, err := net.Listen("tcp", cfg.cuzkListen)
		if err != nil {
			return nil, fmt.Errorf("cuzk API: listen %s: %w", cfg.cuzkListen, err)
		}
		if tlsCfg != nil {
			ln = tls.NewListener(ln, cuzkTLSConfig(tlsCfg))
		}
		lns = append(lns, ln)
	}
	if cfg.cuzkSocket != "" {
		ln, err := cuzk.ListenUnix(cfg.cuzkSocket)
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	var servers []*http.Server
	for _, ln := range lns {
		s := cuzk.NewHTTPServer(cuzkHandler(eng.Mux()))
		servers = append(servers, s)
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("cuzk API on %s: %w", ln.Addr(), err)
			}
		}()
		log.Info("coordinator: serving Curio's cuzk API (cuzk.v1.ProvingEngine, gRPC)", slog.String("addr", ln.Addr().Network()+":"+ln.Addr().String()))
	}
	return servers, nil
}
