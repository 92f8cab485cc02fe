package singlenode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/coordinator/web"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/node"
)

// Defaults of Config.
const (
	StateDirDefault  = ".c2/single"
	ShapeDefault     = porep.TestShapeDefault
	RedisDefault     = "127.0.0.1:6379"
	NATSDefault      = "127.0.0.1:4222"
	ListenDefault    = "127.0.0.1:8080"
	RedisPrefix      = "c2single"
	ProveTimeout     = 30 * time.Minute
	TraceWaitTimeout = 60 * time.Second
)

// Config configures Run. Zero values mean the defaults.
type Config struct {
	// StateDir holds the private Redis, JetStream's files, the cached
	// parameters, sealed sectors, Jaeger's config and the log. Default
	// .c2/single.
	StateDir string
	// Shape is the demo's proof shape. Default test-micro (2 partitions).
	Shape string
	// Seed of the sealed sector; 0 draws one.
	Seed uint64
	// Redis is used when it answers; otherwise a private redis-server is
	// started. Default 127.0.0.1:6379.
	Redis string
	// NATS is where the embedded NATS server listens when free (else a
	// free port). Default 127.0.0.1:4222.
	NATS string
	// Listen is the coordinator's API address when free (else a free
	// port). Default 127.0.0.1:8080.
	Listen string
	// Jaeger is where Jaeger listens (or is found). JaegerBinary, when set,
	// is used instead of building tools/jaeger.
	Jaeger       JaegerConfig
	JaegerBinary string
	// NoJaeger runs without tracing export.
	NoJaeger bool
	// RepoRoot is the repository (for scripts/build-jaeger.sh). Default:
	// found upward from the working directory.
	RepoRoot string
	// Slots of the in-process worker. Default 1 (the CPU backend uses
	// every core per proof).
	Slots int
	// Interlock mode of the worker. Default compute.
	Interlock string
	// Keep serves after the demo until ctx ends.
	Keep bool
	// RedisPrefix prefixes the run's Redis keys. Default: a fresh
	// "c2single-<8 hex digits>" (the constant RedisPrefix) per run, so a run shows only its own jobs
	// and never touches another run's (the keys expire with the job TTL).
	RedisPrefix string
	// Out receives the progress lines and the results. Default os.Stdout.
	Out io.Writer
	// hooks are the in-process worker's test hooks.
	hooks node.Hooks
}

func (c *Config) defaults() error {
	if c.StateDir == "" {
		c.StateDir = StateDirDefault
	}
	abs, err := filepath.Abs(c.StateDir)
	if err != nil {
		return err
	}
	c.StateDir = abs
	if c.Shape == "" {
		c.Shape = ShapeDefault
	}
	if _, err := porep.ShapeByName(c.Shape); err != nil {
		return fmt.Errorf("single: shape: %w", err)
	}
	if c.Redis == "" {
		c.Redis = RedisDefault
	}
	if c.NATS == "" {
		c.NATS = NATSDefault
	}
	if c.Listen == "" {
		c.Listen = ListenDefault
	}
	if c.Slots == 0 {
		c.Slots = 1
	}
	if c.Slots < 0 {
		return fmt.Errorf("single: slots %d is negative", c.Slots)
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	return nil
}

// Result is what a run produced.
type Result struct {
	JobID   string
	TraceID string
	Proof   []byte
	// Trace is the job's trace as read back from Jaeger (nil without it).
	Trace *Trace
	// JaegerURL is the query API's base URL ("" without Jaeger).
	JaegerURL string
}

// runner holds what Run started, to stop it in reverse order.
type runner struct {
	cfg   Config
	out   io.Writer
	start time.Time
	stops []func()
}

func (r *runner) step(format string, a ...any) {
	fmt.Fprintf(r.out, "[%6.1fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, a...))
}

func (r *runner) atExit(f func()) { r.stops = append(r.stops, f) }

func (r *runner) stopAll() {
	for i := len(r.stops) - 1; i >= 0; i-- {
		r.stops[i]()
	}
}

// prefixWriter prefixes each line (progress of sub-steps).
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, sc.Text())
	}
	return len(b), nil
}

// Run starts everything, proves one sealed test sector end to end, prints
// the proof, the Jaeger link and the trace waterfall, and stops everything
// again (or, with Keep, serves until ctx ends).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, out: cfg.Out, start: time.Now()}
	defer r.stopAll()
	sub := prefixWriter{w: cfg.Out, prefix: "           "}

	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("single: state dir: %w", err)
	}
	logPath := filepath.Join(cfg.StateDir, "c2.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("single: log: %w", err)
	}
	r.atExit(func() { logf.Close() })
	log, err := telemetry.NewLogger(logf, telemetry.LogConfig{Level: "info"})
	if err != nil {
		return nil, err
	}
	r.step("c2cluster single node: state in %s, component logs in %s", cfg.StateDir, logPath)

	// Redis.
	rd, err := EnsureRedis(ctx, cfg.Redis, filepath.Join(cfg.StateDir, "redis"), sub)
	if err != nil {
		return nil, err
	}
	r.atExit(rd.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: rd.Addr})
	r.atExit(func() { rdb.Close() })
	prefix := cfg.RedisPrefix
	if prefix == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		prefix = RedisPrefix + "-" + hex.EncodeToString(b[:])
	}
	store, err := jobstore.New(rdb, jobstore.Config{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	r.step("redis ready at %s (keys of this run under %q)", rd.Addr, prefix+":")

	// NATS with JetStream on disk.
	host, port, err := hostPort(cfg.NATS)
	if err != nil {
		return nil, fmt.Errorf("single: NATS address: %w", err)
	}
	if !portFree(cfg.NATS) {
		port = 0
	}
	emb, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: filepath.Join(cfg.StateDir, "jetstream"), Host: host, Port: port})
	if err != nil {
		return nil, err
	}
	r.atExit(emb.Shutdown)
	nc, err := queue.Connect(emb.URL(), "c2-single")
	if err != nil {
		return nil, err
	}
	r.atExit(nc.Close)
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		return nil, err
	}
	r.step("NATS JetStream (embedded) ready at %s", emb.URL())

	// Jaeger and tracing.
	var jg *Jaeger
	if !cfg.NoJaeger {
		jg, err = r.ensureJaeger(ctx, sub)
		if err != nil {
			r.step("jaeger unavailable, running without trace export: %v", err)
		}
	}
	tcfg := telemetry.TracingConfig{ServiceName: "c2-single"}
	if jg != nil {
		tcfg.Endpoint, tcfg.Insecure = jg.OTLPEndpoint, true
	}
	tr, err := telemetry.Setup(ctx, tcfg)
	if err != nil {
		return nil, err
	}
	r.atExit(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tr.Shutdown(sctx)
	})

	// Parameters (cached).
	paramsDir := filepath.Join(cfg.StateDir, "params")
	if err := r.ensureParams(ctx, paramsDir, sub); err != nil {
		return nil, err
	}

	// Coordinator.
	metrics := telemetry.NewMetrics()
	srv, err := server.New(server.Config{Logger: log.With("component", "coordinator"), Metrics: metrics}, q, store,
		&server.PoRep{ParamsDir: paramsDir})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	r.atExit(srv.Stop)
	listen := cfg.Listen
	if !portFree(listen) {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("single: listen %s: %w", listen, err)
	}
	wcfg := web.Config{Logger: log.With("component", "web")}
	if jg != nil {
		wcfg.JaegerQuery, wcfg.JaegerUI = jg.QueryURL, jg.UI
	}
	page, err := web.New(srv, wcfg)
	if err != nil {
		return nil, err
	}
	mux := srv.Mux()
	page.Register(mux)
	hs := &http.Server{Handler: mux, Protocols: server.Protocols(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	r.atExit(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	})
	api := "http://" + ln.Addr().String()
	r.step("coordinator serving at %s (gRPC + HTTP/JSON, /metrics, web page %s)", api, web.Prefix)

	// Worker, in process, on the CPU.
	wn, err := node.New(ctx, node.Config{
		ID: "single-cpu", Shapes: []string{cfg.Shape}, ParamsDir: paramsDir,
		TrustedParams: true, // generated by this command just now or on an earlier run
		Backend:       "cpu", GPUWorkersPerDevice: cfg.Slots, Interlock: cfg.Interlock,
		Logger: log.With("component", "worker"), Metrics: metrics, Hooks: cfg.hooks,
	}, q, store)
	if err != nil {
		return nil, err
	}
	if err := wn.Start(ctx); err != nil {
		return nil, err
	}
	r.atExit(func() {
		if err := wn.Stop(context.Background()); err != nil {
			r.step("worker stop: %v", err)
		}
	})
	r.step("worker %s running %d slot(s) on the CPU backend", wn.ID(), wn.Slots())

	// A sealed test sector.
	doc, c1Path, err := r.seal(ctx, sub)
	if err != nil {
		return nil, err
	}

	// Submit and wait, with progress.
	cl := client.New(api)
	subRes, err := cl.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: "single-" + hex.EncodeToString(seedBytes(cfg.Seed))})
	if err != nil {
		return nil, fmt.Errorf("single: submit: %w", err)
	}
	r.step("submitted %s: job %s, shape %s, %d partitions", filepath.Base(c1Path), subRes.JobId, subRes.Shape, subRes.Partitions)
	wctx, cancel := context.WithTimeout(ctx, ProveTimeout)
	defer cancel()
	last := ""
	final, err := cl.Watch(wctx, subRes.JobId, func(j *c2clusterv1.JobStatus) {
		if line := client.ProgressLine(j); line != last {
			last = line
			r.step("%s", line)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("single: job %s: %w", subRes.JobId, err)
	}
	res := &Result{JobID: final.JobId, TraceID: final.TraceId, Proof: final.Proof}

	// Verify here again, independently of the coordinator.
	if err := verifyLocally(paramsDir, cfg.Shape, doc, final.Proof); err != nil {
		return res, fmt.Errorf("single: local verification: %w", err)
	}
	t := final.GetTimings()
	r.step("proof verified here too (groth16.Verify, every partition, public inputs from the C1 output)")
	r.step("timings: total %.0f ms; summed over partitions: queue wait %.0f ms, synthesis %.0f ms, prove %.0f ms, lock wait %.0f ms, verify %.0f ms; assembly %.0f ms",
		t.GetTotalMs(), t.GetQueueWaitMs(), t.GetSynthesisMs(), t.GetProveMs(), t.GetLockWaitMs(), t.GetVerifyMs(), t.GetAssembleMs())
	fmt.Fprintf(r.out, "\nproof (%d bytes, %d partitions × 192):\n", len(final.Proof), len(final.Proof)/groth16.ProofSize)
	h := hex.EncodeToString(final.Proof)
	for i := 0; i < len(h); i += 96 {
		fmt.Fprintf(r.out, "  %s\n", h[i:min(i+96, len(h))])
	}
	fmt.Fprintln(r.out)

	// The trace, read back from Jaeger.
	if jg != nil {
		res.JaegerURL = jg.QueryURL
		fctx, fcancel := context.WithTimeout(ctx, 10*time.Second)
		_ = tr.Provider.ForceFlush(fctx)
		fcancel()
		if jg.UI != "" {
			r.step("trace in Jaeger: %s/trace/%s", jg.UI, final.TraceId)
		} else {
			r.step("trace from Jaeger's query API: %s/api/traces/%s", jg.QueryURL, final.TraceId)
		}
		tctx, tcancel := context.WithTimeout(ctx, TraceWaitTimeout)
		trace, err := WaitForTrace(tctx, jg.QueryURL, final.TraceId, ExpectedSpans(int(final.Partitions)))
		tcancel()
		if trace != nil {
			res.Trace = trace
			fmt.Fprintln(r.out)
			Waterfall(r.out, trace)
			fmt.Fprintln(r.out)
		}
		if err != nil {
			r.step("trace incomplete: %v", err)
		}
	}

	jobPage := api + web.Prefix + "job/" + final.JobId
	if cfg.Keep {
		r.step("job and trace in a browser: open %s", jobPage)
	} else {
		r.step("job and trace in a browser: %s (served only while the node runs: run with -keep, as make run does)", jobPage)
	}
	if cfg.Keep {
		r.step("serving until Ctrl-C (SIGINT or SIGTERM): coordinator %s, NATS %s, Redis %s (prefix %s), params %s", api, emb.URL(), rd.Addr, prefix, paramsDir)
		otlp := ""
		if jg != nil {
			otlp = jg.OTLPEndpoint
		}
		r.step("  more workers: go run ./worker %s", shellJoin(workerArgs(emb.URL(), rd.Addr, prefix, cfg.Shape, paramsDir, otlp)))
		r.step("  more proofs:  go run ./coordinator prove -addr %s -c1 %s", api, shellQuote(c1Path))
		<-ctx.Done()
	}
	r.step("stopping")
	return res, nil
}

// ExpectedSpans are the spans of a job of n partitions proved under the
// compute interlock (docs/cluster.md, "Telemetry"): what WaitForTrace
// should wait for.
func ExpectedSpans(n int) map[string]int {
	return map[string]int{
		telemetry.SpanSubmit: 1, telemetry.SpanJob: 1, telemetry.SpanPublish: n, telemetry.SpanPartition: n,
		telemetry.SpanSynthesize: n, telemetry.SpanInterlockWait: n, telemetry.SpanGPUUpload: n,
		telemetry.SpanGPUCompute: n, telemetry.SpanEpilogue: n, telemetry.SpanVerify: n, telemetry.SpanAssemble: 1,
	}
}

func (r *runner) ensureJaeger(ctx context.Context, progress io.Writer) (*Jaeger, error) {
	jc := r.cfg.Jaeger
	jc.defaults()
	base := "http://" + jc.QueryHTTP
	if queryReady(ctx, base) {
		j := &Jaeger{OTLPEndpoint: jc.OTLPGRPC, QueryURL: base}
		if hasUI(ctx, base) {
			j.UI = base
		}
		r.step("jaeger: using the Jaeger answering at %s (spans to %s)", base, jc.OTLPGRPC)
		return j, nil
	}
	bin := r.cfg.JaegerBinary
	if bin == "" {
		root := r.cfg.RepoRoot
		if root == "" {
			var err error
			if root, err = FindRepoRoot(); err != nil {
				return nil, err
			}
		}
		r.step("jaeger: building it from tools/jaeger if not cached (first time ~6.5 min on 2 cores)")
		var err error
		if bin, err = BuildJaeger(ctx, root, progress); err != nil {
			return nil, err
		}
	}
	jc.Binary, jc.Dir = bin, filepath.Join(r.cfg.StateDir, "jaeger")
	j, err := StartJaeger(ctx, jc)
	if err != nil {
		return nil, err
	}
	r.atExit(j.Stop)
	r.step("jaeger %s started: OTLP %s, query %s", filepath.Base(bin), j.OTLPEndpoint, j.QueryURL)
	return j, nil
}

func (r *runner) ensureParams(ctx context.Context, dir string, progress io.Writer) error {
	pp, vp := circuit.ParamsPath(dir, r.cfg.Shape), circuit.VKPath(dir, r.cfg.Shape)
	fp := circuit.FingerprintPath(dir, r.cfg.Shape)
	s, err := porep.ShapeByName(r.cfg.Shape)
	if err != nil {
		return err
	}
	// Cached parameters are used only if they were made for the circuit as
	// it is now: Setup writes the circuit's R1CS hash beside them, and a
	// circuit that changed since (or parameters without a fingerprint) are
	// made again. The in-process worker gets this recording from
	// ForShape's cache.
	c, err := circuit.ForShape(s)
	if err != nil {
		return err
	}
	_, e1 := os.Stat(pp)
	_, e2 := os.Stat(vp)
	if e1 == nil && e2 == nil {
		err := c.CheckFingerprint(ctx, fp)
		if err == nil {
			h, _ := c.Hash(ctx, nil)
			r.step("parameters of %s cached in %s (circuit R1CS hash %.16s…)", r.cfg.Shape, dir, h)
			return nil
		}
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("no circuit fingerprint %s beside them", fp)
		}
		r.step("cached parameters of %s not used: %v", r.cfg.Shape, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("single: params dir: %w", err)
	}
	r.step("generating Groth16 parameters for %s (fresh toxic waste; cached for later runs)", r.cfg.Shape)
	start := time.Now()
	if _, err := circuit.Setup(ctx, s, circuit.SetupConfig{ParamsPath: pp, VKPath: vp, FingerprintPath: fp,
		Progress: groth16.ProgressLines(progress)}); err != nil {
		return err
	}
	r.step("parameters written in %.1fs: %s", time.Since(start).Seconds(), pp)
	return nil
}

func (r *runner) seal(ctx context.Context, progress io.Writer) ([]byte, string, error) {
	r.step("sealing a random %s sector (seed %d)", r.cfg.Shape, r.cfg.Seed)
	var buf bytes.Buffer
	res, err := sealer.WriteRandomC1(ctx, sealer.RandomC1Config{Shape: r.cfg.Shape, Seed: r.cfg.Seed, Progress: progress}, &buf)
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Join(r.cfg.StateDir, "sectors")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.c1.json", r.cfg.Shape, r.cfg.Seed))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return nil, "", err
	}
	r.step("sealed: comm_r %x…, C1 output %d bytes in %s", res.CommR[:8], buf.Len(), path)
	return buf.Bytes(), path, nil
}

// verifyLocally checks a job's proof partition by partition against the
// shape's .vk and the public inputs computed from the C1 output.
func verifyLocally(paramsDir, shape string, doc, proof []byte) error {
	vk, err := groth16.ReadVerifyingKeyFile(circuit.VKPath(paramsDir, shape))
	if err != nil {
		return err
	}
	out, err := c1.ParseBytes(doc)
	if err != nil {
		return err
	}
	proofs, err := groth16.SplitProofs(proof)
	if err != nil {
		return err
	}
	if len(proofs) != out.Shape.Partitions {
		return fmt.Errorf("%d partition proofs for %d partitions", len(proofs), out.Shape.Partitions)
	}
	for k, p := range proofs {
		in, err := circuit.PublicInputs(out, k)
		if err != nil {
			return err
		}
		if err := groth16.Verify(vk, p, in); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
	}
	return nil
}

func seedBytes(seed uint64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	return b[:]
}

func hostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	var port int
	if _, err := fmt.Sscanf(p, "%d", &port); err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	return h, port, nil
}

// FindRepoRoot walks up from the working directory to the folder whose
// go.mod declares the c2cluster module.
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/c2cluster/c2cluster\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("single: not inside the c2cluster repository (no go.mod of github.com/c2cluster/c2cluster above the working directory); pass -jaeger-bin or -repo")
		}
		dir = parent
	}
}

// Command is the `coordinator run` subcommand.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("coordinator run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.StateDir, "state-dir", StateDirDefault, "folder of the private Redis, JetStream files, cached parameters, sectors, logs")
	fs.StringVar(&cfg.Shape, "shape", ShapeDefault, "proof shape of the demo sector (test-micro, test-mini, 2KiB, …)")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the sealed sector (0: random)")
	fs.StringVar(&cfg.Redis, "redis", RedisDefault, "Redis to use when it answers (else a private redis-server is started)")
	fs.StringVar(&cfg.NATS, "nats", NATSDefault, "address of the embedded NATS server (a free port when taken)")
	fs.StringVar(&cfg.Listen, "listen", ListenDefault, "address of the coordinator API (a free port when taken)")
	fs.StringVar(&cfg.JaegerBinary, "jaeger-bin", "", "Jaeger binary to run (default: build tools/jaeger, cached under bin/)")
	fs.StringVar(&cfg.Jaeger.QueryHTTP, "jaeger-query", "127.0.0.1:16686", "Jaeger query address (used when a Jaeger answers there)")
	fs.StringVar(&cfg.Jaeger.OTLPGRPC, "jaeger-otlp", "127.0.0.1:4317", "Jaeger OTLP/gRPC address")
	fs.BoolVar(&cfg.NoJaeger, "no-jaeger", false, "do not start or use Jaeger (no trace export)")
	fs.StringVar(&cfg.RepoRoot, "repo", "", "repository root (default: found from the working directory)")
	fs.IntVar(&cfg.Slots, "slots", 1, "slots of the in-process CPU worker")
	fs.StringVar(&cfg.Interlock, "interlock", "compute", "interlock mode of the worker: none, exclusive, compute, split")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep serving after the demo until interrupted")
	fs.StringVar(&cfg.RedisPrefix, "redis-prefix", "", "prefix of this run's Redis keys (default: "+RedisPrefix+"-<random>, fresh for each run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	cfg.Out = stdout
	// Component logs go to the state folder; keep slog's default quiet on
	// the terminal.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	_, err := Run(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		// Interrupted (SIGINT, SIGTERM) before the demo ended: Run has
		// stopped everything it started; that is a clean end.
		fmt.Fprintf(stdout, "interrupted; everything started was stopped (%v)\n", err)
		return nil
	}
	return err
}
