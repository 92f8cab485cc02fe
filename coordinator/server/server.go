package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/coordinator/auth"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	"github.com/c2cluster/c2cluster/proto/c2cluster/v1/c2clusterv1connect"
)

// Defaults of Config.
const (
	MaxC1BytesDefault    = 64 << 20
	AwaitMaxDefault      = 10 * time.Minute
	DepthIntervalDefault = 5 * time.Second
	ReconcileLimit       = 10000
)

// Config configures a Server. Zero values mean the defaults.
type Config struct {
	// MaxC1Bytes rejects a larger c1_json (a C1 output or a Commit2In
	// envelope) at submit; each C1 output must also keep within its own
	// shape's limit (c1.MaxBytes: 82 KB for test-micro, 49 MB for 64 GiB).
	// Default 64 MiB: the envelope (base64, 4/3) of the largest shape's
	// largest C1 output. API messages are read up to ReadMaxBytes.
	MaxC1Bytes int64
	// VerifyVanilla runs the native vanilla-proof check on every submit
	// (otherwise only when the request asks). Default false.
	VerifyVanilla bool
	// AwaitMax caps one Await call's wait. Default 10 min.
	AwaitMax time.Duration
	// BodyTimeout is how long a request's body may take to arrive, from
	// the request's start; negative: no limit. Default BodyTimeoutDefault.
	BodyTimeout time.Duration
	// DepthInterval is how often the queue-depth gauge is refreshed.
	// Default 5 s.
	DepthInterval time.Duration
	// Loop tunes the assembler and dead-letter loops.
	Loop queue.LoopConfig
	// Watchdog tunes the reconciliation of open jobs with the stream and
	// the dependency checks (watchdog.go).
	Watchdog WatchdogConfig
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Metrics; default a fresh telemetry.NewMetrics().
	Metrics *telemetry.Metrics
	// Trust sets the re-queue of bad partition proofs and the quarantine
	// of the workers that make them (trust.go).
	Trust TrustConfig
	// Auth authenticates the requests Protect serves; nil: no
	// authentication (every caller sees every job).
	Auth *auth.Authenticator
	// Limits are the submit rate and open-job quota of an identity whose
	// tokens-file entry sets none. Zero fields: unlimited.
	Limits auth.Limits
}

func (c Config) withDefaults() (Config, error) {
	if c.MaxC1Bytes == 0 {
		c.MaxC1Bytes = MaxC1BytesDefault
	}
	if c.MaxC1Bytes < 0 {
		return c, fmt.Errorf("server: Config.MaxC1Bytes %d is negative", c.MaxC1Bytes)
	}
	if c.AwaitMax == 0 {
		c.AwaitMax = AwaitMaxDefault
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = BodyTimeoutDefault
	}
	if c.AwaitMax < 0 {
		return c, fmt.Errorf("server: Config.AwaitMax %v is negative", c.AwaitMax)
	}
	if c.DepthInterval == 0 {
		c.DepthInterval = DepthIntervalDefault
	}
	if c.DepthInterval < 0 {
		return c, fmt.Errorf("server: Config.DepthInterval %v is negative", c.DepthInterval)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Loop.Logger == nil {
		c.Loop.Logger = c.Logger
	}
	if c.Metrics == nil {
		c.Metrics = telemetry.NewMetrics()
	}
	c.Watchdog = c.Watchdog.withDefaults()
	return c, nil
}

// Server is the coordinator. Create it with New, run its background loops
// with Start, serve Handler, and Stop it.
type Server struct {
	cfg   Config
	q     *queue.Queue
	store *jobstore.Store
	ps    ProofSystem
	log   *slog.Logger
	api   apiLimits
	// limiter holds each identity's submit rate bucket.
	limiter *auth.RateLimiter
	wd      watchdogState // watchdog.go

	mu      sync.Mutex
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started bool
}

var _ c2clusterv1connect.ProofServiceHandler = (*Server)(nil)

// New returns a coordinator over an opened queue, a job store and a proof
// system.
func New(cfg Config, q *queue.Queue, store *jobstore.Store, ps ProofSystem) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if q == nil || store == nil || ps == nil {
		return nil, errors.New("server: New needs a queue, a job store and a proof system")
	}
	return &Server{cfg: cfg, q: q, store: store, ps: ps, log: cfg.Logger, limiter: auth.NewRateLimiter()}, nil
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *telemetry.Metrics { return s.cfg.Metrics }

// Handler returns the connect handler of ProofService (gRPC, gRPC-Web and
// Connect/HTTP-JSON on one path prefix). Messages larger than ReadMaxBytes
// are refused, compressed or not (limits.go).
func (s *Server) Handler() (string, http.Handler) {
	return c2clusterv1connect.NewProofServiceHandler(s, s.apiOptions(), authInterceptor())
}

// Mux returns an HTTP mux serving the API, /metrics and /healthz.
func (s *Server) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	path, h := s.Handler()
	mux.Handle(path, s.bodyLimits(h))
	mux.Handle("/metrics", s.cfg.Metrics.Handler())
	mux.HandleFunc("/healthz", s.healthz) // 503 naming Redis or NATS when either is down (watchdog.go)
	return mux
}

// Protocols are the HTTP protocols to serve Mux with: HTTP/1.1, and HTTP/2
// with TLS and without (so gRPC works on a plain-text port too).
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// Start reconciles jobs a previous coordinator left half-way and starts the
// assembler, the dead-letter handler and the queue-depth refresher. They
// run until Stop.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("server: already started")
	}
	if err := s.reconcile(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.started = true
	s.goLoop("assembler", func() error { return s.q.RunAssembly(ctx, s.cfg.Loop, s.assemble) })
	s.goLoop("dead letters", func() error { return s.q.RunDeadLetters(ctx, s.cfg.Loop, s.deadLetter) })
	s.goLoop("queue depth", func() error { s.refreshDepth(ctx); return nil })
	s.goLoop("worker keys", func() error { s.runKeyCheck(ctx); return nil })
	s.goLoop("dependencies", func() error { s.runDependencies(ctx); return nil })
	s.goLoop("watchdog", func() error { s.runWatchdog(ctx); return nil })
	return nil
}

func (s *Server) goLoop(name string, run func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := run(); err != nil {
			s.log.Error("coordinator: loop stopped", slog.String("loop", name), slog.Any("err", err))
		}
	}()
}

// Stop ends the background loops and waits for them. In-flight RPCs are the
// HTTP server's to drain.
func (s *Server) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}

func (s *Server) refreshDepth(ctx context.Context) {
	t := time.NewTicker(s.cfg.DepthInterval)
	defer t.Stop()
	for {
		if depth, err := s.q.Depth(ctx); err == nil {
			pending := make(map[telemetry.QueueKey]uint64, len(depth))
			var inFlight uint64
			for _, d := range depth {
				pending[telemetry.QueueKey{Shape: d.Shape, Lane: d.Lane}] = d.Pending
				inFlight += d.InFlight
			}
			// Every shape the coordinator knows × every lane: an empty
			// lane reads 0 rather than vanishing from /metrics.
			s.cfg.Metrics.SetQueueDepth(porep.ShapeNames(), s.q.Config().Lanes, pending)
			s.cfg.Metrics.PartitionsInFlight.Set(float64(inFlight))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reconcile finishes what a coordinator that died mid-way left: jobs whose
// tasks were not all published are republished (deduplicated by
// Nats-Msg-Id), and assembling jobs get their assembly requested again.
func (s *Server) reconcile(ctx context.Context) error {
	jobs, err := s.store.List(ctx, "", ReconcileLimit)
	if err != nil {
		return fmt.Errorf("server: reconcile: %w", err)
	}
	for _, j := range jobs {
		switch {
		case (j.State == jobstore.StateQueued || j.State == jobstore.StateProving) && j.Published < j.Partitions:
			s.log.Info("coordinator: republishing a half-submitted job", telemetry.LogJob(j.ID))
			jctx := telemetry.ContextWithTraceParent(ctx, j.TraceParent)
			if err := s.publish(jctx, j); err != nil {
				return fmt.Errorf("server: reconcile %s: %w", j.ID, err)
			}
		case j.State == jobstore.StateAssembling:
			if err := s.q.RequestAssembly(ctx, j.ID); err != nil {
				return fmt.Errorf("server: reconcile %s: %w", j.ID, err)
			}
		}
	}
	return nil
}
