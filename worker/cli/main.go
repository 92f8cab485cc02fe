package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/memlimit"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	"github.com/c2cluster/c2cluster/worker/node"
)

// Version is reported in the worker registry and as the trace resource's
// service.version. Empty (the default) means the build's own
// (buildinfo.Info.Short: the module version, or the VCS commit of a build
// from a checkout); -ldflags "-X …/worker/cli.Version=…" sets another.
var Version = ""

// version is Version or, when empty, the build's.
func version() string {
	if Version != "" {
		return Version
	}
	return buildinfo.Read().Short()
}

// Env reads environment variables (os.LookupEnv in the binary).
type Env func(string) (string, bool)

// Main runs the worker until SIGTERM or SIGINT (a second signal cuts the
// drain's first phase short) and returns the exit code: 0 after a clean
// drain, 1 on an error (printed to stderr), 2 on a usage error.
func Main(args []string, stdout, stderr io.Writer, env Env, opts ...Option) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if buildinfo.Requested(args) {
		fmt.Fprintln(stdout, buildinfo.Line("worker"))
		return 0
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	buildinfo.Register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: worker [flags]\n\nThe c2cluster worker: proves partition tasks from NATS JetStream on this host's devices.\nSettings come from -config FILE (YAML), then $C2_* variables, then flags.\n\nflags:")
		fs.PrintDefaults()
	}
	cfg, err := Load(args, env, fs)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 2
	}
	// After the first signal, a second one (NotifyContext is done then)
	// cuts the drain short.
	second := make(chan os.Signal, 1)
	o := RunOptions{Interrupt: func() <-chan os.Signal {
		<-ctx.Done()
		stop()
		signal.Notify(second, os.Interrupt, syscall.SIGTERM)
		return second
	}}
	for _, opt := range opts {
		opt(&o)
	}
	if err := Run(ctx, cfg, stderr, o); err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 1
	}
	return 0
}

// Option adjusts how Main runs the worker.
type Option func(*RunOptions)

// WithHooks installs test and fault-injection hooks (node.Config.Hooks).
func WithHooks(h node.Hooks) Option { return func(o *RunOptions) { o.Hooks = h } }

// RunOptions are Run's non-configuration inputs.
type RunOptions struct {
	// Interrupt, when set, is called after ctx ended and returns a channel
	// whose first value cuts the drain's first phase short.
	Interrupt func() <-chan os.Signal
	// Hooks are passed to the node.
	Hooks node.Hooks
}

// Run runs a worker with cfg until ctx ends, then drains it.
func Run(ctx context.Context, cfg *File, logOut io.Writer, o RunOptions) error {
	log, err := telemetry.NewLogger(logOut, telemetry.LogConfig{Level: cfg.LogLevel, Format: cfg.LogFormat})
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	log.Info("worker: c2cluster "+buildinfo.Read().String(), "version", version())
	// Go's soft memory limit: a 32 GiB worker holds tens of GB live, and
	// the collector's default target (twice the live heap) would not fit.
	ml, err := memlimit.Parse(cfg.MemoryLimit)
	if err != nil {
		return fmt.Errorf("memory_limit: %w", err)
	}
	limit, why := memlimit.Apply(ml)
	log.Info("worker: Go soft memory limit "+memlimit.Format(limit), "bytes", limit, "memory_limit", ml.String(), "why", why)
	tr, err := telemetry.Setup(ctx, telemetry.TracingConfig{ServiceName: "c2-worker", ServiceVersion: version(),
		Endpoint: cfg.OTLP, Insecure: *cfg.OTLPInsecure})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tr.Shutdown(sctx)
	}()

	natsConn := cfg.NATS
	natsConn.Name, natsConn.Logger = "c2-worker", log
	nc, err := queue.Dial(natsConn)
	if err != nil {
		return err
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, queue.Config{AckWait: cfg.AckWait, MaxDeliver: cfg.MaxDeliver})
	if err != nil {
		return err
	}
	store, err := jobstore.Dial(ctx, cfg.Redis, jobstore.Config{Prefix: cfg.RedisPrefix})
	if err != nil {
		return err
	}
	defer store.Close()

	metrics := telemetry.NewMetrics()
	ncfg := cfg.Config
	ncfg.Logger, ncfg.Metrics, ncfg.Version, ncfg.Hooks = log, metrics, version(), o.Hooks
	n, err := node.New(ctx, ncfg, q, store)
	if err != nil {
		return err
	}

	var hs *http.Server
	if cfg.MetricsListen != "" && cfg.MetricsListen != "off" {
		ln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			return fmt.Errorf("metrics listen %s: %w", cfg.MetricsListen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler())
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
			if err := store.Client().Ping(r.Context()).Err(); err != nil {
				http.Error(w, "redis: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			if !nc.IsConnected() {
				http.Error(w, "nats: not connected", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok\n"))
		})
		hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		// The address actually bound: with port 0 (-metrics-listen
		// 127.0.0.1:0, several workers on one host) this is where to scrape.
		log.Info("worker: serving /metrics and /healthz", slog.String("addr", ln.Addr().String()))
	}

	if err := n.Start(ctx); err != nil {
		_ = n.Stop(context.Background())
		return err
	}
	<-ctx.Done()
	log.Info("worker: signal received: draining (a second signal hands in-flight partitions back at once)")
	stopCtx, cut := context.WithCancel(context.Background())
	defer cut()
	if o.Interrupt != nil {
		sig := o.Interrupt()
		go func() {
			select {
			case <-sig:
				log.Warn("worker: second signal: cutting the drain short")
				cut()
			case <-stopCtx.Done():
			}
		}()
	}
	err = n.Stop(stopCtx)
	if hs != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}
	return err
}
