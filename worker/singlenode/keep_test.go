package singlenode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/cli"
	"github.com/c2cluster/c2cluster/worker/node"
)

// envWorker, when set, makes the test binary the worker binary: its value
// is the JSON array of the worker's arguments.
const envWorker = "C2_SINGLENODE_TEST_WORKER_ARGS"

func TestMain(m *testing.M) {
	if a, ok := os.LookupEnv(envWorker); ok {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", envWorker, err)
			os.Exit(2)
		}
		os.Exit(cli.Main(args, os.Stdout, os.Stderr, os.LookupEnv))
	}
	os.Exit(m.Run())
}

// `coordinator run -keep` prints a worker command; two workers started
// from it on this host (the worker binary's own main, as processes) both
// serve metrics on ports of their own, and a job proved partly by them has
// their spans in its trace in Jaeger, under the coordinator's publish spans.
func TestKeepPrintsAWorkerCommandThatJoinsTheTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the single node, Jaeger and two worker processes")
	}
	logf := newSafeLog(t)
	root, err := FindRepoRoot()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	jaegerBin, err := BuildJaeger(ctx, root, logf)
	if errors.Is(err, ErrJaegerUnbuildable) {
		t.Skipf("Jaeger cannot be built here: %v", err)
	}
	require.NoError(t, err)
	rs, err := jobstoretest.Start()
	require.NoError(t, err)
	t.Cleanup(rs.Stop)
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })

	// The in-process worker can be held at a partition's start, so that a
	// job's other partition goes to the workers started here.
	var gated atomic.Bool
	release := make(chan struct{})
	var releaseOnce sync.Once
	hooks := node.Hooks{BeforeStage: func(ctx context.Context, stage string, _ *queue.Delivery) error {
		if stage != node.StageInput || !gated.Load() {
			return nil
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	out, outW := io.Pipe()
	cfg := Config{StateDir: t.TempDir(), Shape: "test-micro", Redis: rs.Addr, NATS: freeAddr(t), Listen: freeAddr(t),
		JaegerBinary: jaegerBin, RepoRoot: root, Keep: true, Out: outW, hooks: hooks,
		Jaeger: JaegerConfig{OTLPGRPC: freeAddr(t), OTLPHTTP: freeAddr(t), QueryHTTP: freeAddr(t), QueryGRPC: freeAddr(t), Health: freeAddr(t)}}
	runCtx, stopRun := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		_, err := Run(runCtx, cfg)
		outW.CloseWithError(io.EOF)
		ran <- err
	}()
	// The node's output, read to its end whatever happens, so that Run
	// never blocks on it.
	lines := make(chan string, 1<<12)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			logf.line(sc.Text())
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	// On a failure too: stop the node and wait until it has stopped its
	// Redis and Jaeger children (before this process exits).
	stopped := false
	defer func() {
		releaseOnce.Do(func() { close(release) })
		if !stopped {
			stopRun()
			<-ran
			<-drained
		}
	}()
	var workersLine, proofsLine string
	for line := range lines {
		if _, rest, ok := strings.Cut(line, "more workers: go run ./worker "); ok {
			workersLine = rest
		}
		if _, rest, ok := strings.Cut(line, "more proofs:  go run ./coordinator prove "); ok {
			proofsLine = rest
			break
		}
	}
	require.NotEmpty(t, proofsLine, "the single node ended before printing its commands")

	args := shellSplit(t, workersLine)
	require.Equal(t, []string{"-otlp", cfg.Jaeger.OTLPGRPC}, args[len(args)-2:], "the worker exports to the node's Jaeger")
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f, err := cli.Load(args, func(string) (string, bool) { return "", false }, fs)
	require.NoError(t, err)
	require.Equal(t, cfg.Jaeger.OTLPGRPC, f.OTLP)
	require.Equal(t, "127.0.0.1:0", f.MetricsListen)
	proofArgs := shellSplit(t, proofsLine)
	require.Len(t, proofArgs, 4)
	require.Equal(t, []string{"-addr", "-c1"}, []string{proofArgs[0], proofArgs[2]})
	api, c1Path := proofArgs[1], proofArgs[3]

	// Two workers of the printed command on this host.
	gated.Store(true)
	host, err := os.Hostname()
	require.NoError(t, err)
	ids := map[string]bool{}
	var metrics []string
	var workers []*worker
	for range 2 {
		w := startWorker(t, logf, args)
		workers = append(workers, w)
		ids[fmt.Sprintf("%s-%d", host, w.cmd.Process.Pid)] = true
		select {
		case addr := <-w.metrics:
			metrics = append(metrics, addr)
		case err := <-w.exited:
			t.Fatalf("worker exited before serving metrics: %v", err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	require.NotEqual(t, metrics[0], metrics[1])
	for _, addr := range metrics {
		res, err := http.Get("http://" + addr + "/metrics")
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Contains(t, string(b), "c2_", "the worker's own metrics at %s", addr)
	}

	doc, err := os.ReadFile(c1Path)
	require.NoError(t, err)
	cl := client.New(api)
	sub, err := cl.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(t, err)
	final, err := cl.Watch(ctx, sub.JobId, func(j *c2clusterv1.JobStatus) {
		if j.PartitionsDone >= 1 { // proved by a worker started here: let the in-process one go on
			releaseOnce.Do(func() { close(release) })
		}
	})
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, final.State, "%s", final.Reason)

	trace, err := WaitForTrace(ctx, "http://"+cfg.Jaeger.QueryHTTP, final.TraceId, ExpectedSpans(2))
	require.NoError(t, err)
	var wf strings.Builder
	Waterfall(&wf, trace)
	logf.line(wf.String())
	byID := map[string]Span{}
	for _, s := range trace.Spans {
		byID[s.SpanID] = s
	}
	joined := 0
	for _, s := range trace.Spans {
		if s.Name != telemetry.SpanPartition || s.Service != "c2-worker" {
			continue
		}
		require.True(t, ids[s.Tags["c2.worker"]], "partition span of worker %q, not one started here (%v)", s.Tags["c2.worker"], ids)
		parent := byID[s.ParentID]
		require.Equal(t, telemetry.SpanPublish, parent.Name)
		require.Equal(t, "c2-single", parent.Service)
		joined++
	}
	require.GreaterOrEqual(t, joined, 1, "the trace has a partition span of a worker started from the printed command")

	for _, w := range workers {
		w.stop(t)
	}
	stopped = true
	stopRun()
	require.NoError(t, <-ran, "an interrupted -keep run ends cleanly")
	<-drained
}

// worker is a worker process of the test binary (TestMain runs cli.Main).
type worker struct {
	cmd     *exec.Cmd
	metrics chan string
	exited  chan error
	stopped bool
}

func startWorker(t *testing.T, logf *safeLog, args []string) *worker {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envWorker+"="+string(b))
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = logf
	require.NoError(t, cmd.Start())
	w := &worker{cmd: cmd, metrics: make(chan string, 1), exited: make(chan error, 1)}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logf.line(line)
			if strings.Contains(line, `msg="worker: serving /metrics and /healthz"`) {
				_, rest, _ := strings.Cut(line, " addr=")
				w.metrics <- strings.Fields(rest + " ")[0]
			}
		}
	}()
	go func() {
		<-logged // Wait closes the pipe: read it all first
		w.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { // after a failure: the process must not outlive the test
		if !w.stopped {
			_ = cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

// stop sends SIGTERM and requires a clean drain (exit status 0).
func (w *worker) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-w.exited:
		w.stopped = true
		require.NoError(t, err, "the worker drains and exits 0 on SIGTERM")
	case <-time.After(time.Minute):
		t.Fatal("the worker did not exit within a minute of SIGTERM")
	}
}

// shellSplit splits a command line as a POSIX shell would for words that
// are plain or single-quoted (what shellQuote writes).
func shellSplit(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	require.False(t, quoted, "unterminated quote in %q", line)
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

func TestShellQuoteRoundTrips(t *testing.T) {
	args := []string{"-params-dir", "/a b/it's", "-x", "", "plain:1/2"}
	require.Equal(t, args, shellSplit(t, shellJoin(args)))
	require.Equal(t, "-params-dir '/a b/it'\\''s' -x '' plain:1/2", shellJoin(args))
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// safeLog logs to t until the test's last cleanup, and drops what comes
// later (from goroutines reading processes' output).
type safeLog struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func newSafeLog(t *testing.T) *safeLog {
	l := &safeLog{t: t}
	t.Cleanup(func() { l.mu.Lock(); l.done = true; l.mu.Unlock() }) // registered first: runs last
	return l
}

func (l *safeLog) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(s)
	}
}

func (l *safeLog) Write(p []byte) (int, error) {
	l.line(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
