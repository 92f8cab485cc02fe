package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/cli"
	"github.com/c2cluster/c2cluster/worker/node"
)

const testShape = "test-micro"

// Environment of a re-executed worker process.
const (
	envWorker     = "C2_FAULTS_WORKER"      // "1": run cli.Main instead of the tests
	envWorkerArgs = "C2_FAULTS_WORKER_ARGS" // JSON array of the worker's arguments
	envHook       = "C2_FAULTS_HOOK"        // "block:STAGE": block before STAGE until aborted
	envCoord      = "C2_FAULTS_COORD"       // JSON coordArgs: run a coordinator instead of the tests
)

var paramsDir string

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "1" {
		os.Exit(workerProcess())
	}
	if a := os.Getenv(envCoord); a != "" {
		os.Exit(coordinatorProcess(a))
	}
	var err error
	paramsDir, err = os.MkdirTemp("", "c2-faults-params-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(paramsDir)
	os.Exit(code)
}

func workerProcess() int {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(envWorkerArgs)), &args); err != nil {
		fmt.Fprintf(os.Stderr, "faults worker: %s: %v\n", envWorkerArgs, err)
		return 2
	}
	var hooks node.Hooks
	if stage, ok := strings.CutPrefix(os.Getenv(envHook), "block:"); ok {
		hooks.BeforeStage = func(ctx context.Context, s string, d *queue.Delivery) error {
			if s == stage {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
	}
	return cli.Main(args, os.Stdout, os.Stderr, os.LookupEnv, cli.WithHooks(hooks))
}

// coordArgs configure a coordinator process.
type coordArgs struct {
	NATS, Redis, Prefix, Listen, Params string
}

// coordinatorProcess is the main of a re-executed coordinator: the
// coordinator's server (coordinator/server, as `coordinator serve` runs it)
// on the given NATS, Redis and listen address, until it is killed.
func coordinatorProcess(spec string) int {
	var a coordArgs
	if err := json.Unmarshal([]byte(spec), &a); err != nil {
		fmt.Fprintf(os.Stderr, "faults coordinator: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx := context.Background()
	nc, err := nats.Connect(a.NATS, nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		log.Error("nats", "err", err)
		return 1
	}
	q, err := queue.Open(ctx, nc, queue.Config{NakDelay: 100 * time.Millisecond})
	if err != nil {
		log.Error("queue", "err", err)
		return 1
	}
	store, err := jobstore.New(redis.NewClient(&redis.Options{Addr: a.Redis}), jobstore.Config{Prefix: a.Prefix})
	if err != nil {
		log.Error("store", "err", err)
		return 1
	}
	srv, err := server.New(server.Config{Logger: log, Watchdog: server.WatchdogConfig{Interval: time.Second},
		Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		q, store, &server.PoRep{ParamsDir: a.Params})
	if err != nil {
		log.Error("server", "err", err)
		return 1
	}
	if err := srv.Start(ctx); err != nil {
		log.Error("start", "err", err)
		return 1
	}
	hs := &http.Server{Addr: a.Listen, Handler: srv.Mux(), Protocols: server.Protocols(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("coordinator serving", "listen", a.Listen)
	if err := hs.ListenAndServe(); err != nil {
		log.Error("serve", "err", err)
	}
	return 1
}

// startCoordinator starts a coordinator process serving on listen and
// waits until its /healthz answers 200.
func (c *cluster) startCoordinator(listen string) *workerProc {
	c.t.Helper()
	b, err := json.Marshal(coordArgs{NATS: c.nats.url(), Redis: c.redis.addr, Prefix: c.prefix, Listen: listen, Params: paramsDir})
	require.NoError(c.t, err)
	p := &workerProc{id: "coordinator@" + listen, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), envCoord+"="+string(b))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	require.NoError(c.t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	c.workers = append(c.workers, p)
	c.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		if c.t.Failed() {
			c.t.Logf("%s output:\n%s", p.id, p.out.String())
		}
	})
	waitFor(c.t, p.id+" to answer /healthz", time.Minute, func() bool {
		select {
		case <-p.done:
			c.t.Fatalf("%s exited at start:\n%s", p.id, p.out.String())
		default:
		}
		r, err := httptestGet("http://" + listen + "/healthz")
		return err == nil && r.code == 200
	})
	return p
}

// freePort returns a loopback port free at the time of the call.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// redisProc is a redis-server child process with an append-only file
// (fsync on every write), killed and started again on the same port and
// folder.
type redisProc struct {
	t    testing.TB
	addr string
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedis(t testing.TB) *redisProc {
	t.Helper()
	r := &redisProc{t: t, port: freePort(t), dir: t.TempDir()}
	r.addr = "127.0.0.1:" + strconv.Itoa(r.port)
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *redisProc) start() {
	r.t.Helper()
	bin, err := exec.LookPath("redis-server")
	require.NoError(r.t, err, "redis-server must be on PATH (apt-get install redis-server)")
	r.cmd = exec.Command(bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--dir", r.dir, "--loglevel", "warning")
	require.NoError(r.t, r.cmd.Start())
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	waitFor(r.t, "redis-server to answer", 20*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return c.Ping(ctx).Err() == nil
	})
}

// kill SIGKILLs the server (no shutdown save: what survives is what the
// append-only file holds).
func (r *redisProc) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// natsProc is the embedded NATS JetStream server, stopped and started again
// on the same port and store folder.
type natsProc struct {
	t    testing.TB
	port int
	dir  string
	srv  *queue.Embedded
	// configure adjusts the server's options (users and permissions).
	configure func(*natsserver.Options)
}

func startNATS(t testing.TB, configure func(*natsserver.Options)) *natsProc {
	t.Helper()
	n := &natsProc{t: t, port: freePort(t), dir: t.TempDir(), configure: configure}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsProc) start() {
	n.t.Helper()
	srv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: n.dir, Port: n.port, Configure: n.configure})
	require.NoError(n.t, err)
	n.srv = srv
}

func (n *natsProc) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv = nil
	}
}

func (n *natsProc) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// cluster is one scenario's cluster: NATS, Redis, the coordinator in this
// process (serving HTTP), and worker processes.
type cluster struct {
	t       *testing.T
	ctx     context.Context
	nats    *natsProc
	redis   *redisProc
	q       *queue.Queue
	qcfg    queue.Config
	store   *jobstore.Store
	prefix  string
	srv     *server.Server
	api     *client.Client
	health  string
	logs    *syncBuffer
	workers []*workerProc
	// auth is how the cluster's NATS server authenticates and what it
	// permits; the zero value: no authentication.
	auth natsAuth
}

// natsAuth is a NATS server's authorization and the credentials its clients
// connect with.
type natsAuth struct {
	configure  func(*natsserver.Options) // sets the server's users
	client     []nats.Option             // what the test's own clients connect with
	workerArgs []string                  // a worker's flags for the same
}

func newCluster(t *testing.T, qcfg queue.Config, wd server.WatchdogConfig, auth ...natsAuth) *cluster {
	t.Helper()
	c := newBareCluster(t, qcfg, auth...)
	var err error
	log := slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c.srv, err = server.New(server.Config{Logger: log, Watchdog: wd,
		Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		c.q, c.store, &server.PoRep{ParamsDir: paramsDir})
	require.NoError(t, err)
	require.NoError(t, c.srv.Start(c.ctx))
	hs := httptest.NewUnstartedServer(c.srv.Mux())
	hs.Config.Protocols = server.Protocols()
	hs.Start()
	c.health = hs.URL + "/healthz"
	c.api = client.New(hs.URL)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		c.srv.Stop()
		if t.Failed() {
			t.Logf("coordinator log:\n%s", c.logs.String())
		}
	})
	return c
}

// newBareCluster starts NATS and Redis and opens the queue and the store,
// with no coordinator.
func newBareCluster(t *testing.T, qcfg queue.Config, auth ...natsAuth) *cluster {
	t.Helper()
	params(t)
	c := &cluster{t: t, prefix: "faults", logs: &syncBuffer{}}
	if len(auth) > 0 {
		c.auth = auth[0]
	}
	c.nats, c.redis = startNATS(t, c.auth.configure), startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), scenarioLimit())
	t.Cleanup(cancel)
	c.ctx = ctx
	nc, err := nats.Connect(c.nats.url(), append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(200 * time.Millisecond)}, c.auth.client...)...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	if qcfg.NakDelay == 0 {
		qcfg.NakDelay = 100 * time.Millisecond
	}
	c.q, err = queue.Open(ctx, nc, qcfg)
	require.NoError(t, err)
	c.qcfg = c.q.Config()
	rdb := redis.NewClient(&redis.Options{Addr: c.redis.addr})
	t.Cleanup(func() { rdb.Close() })
	c.store, err = jobstore.New(rdb, jobstore.Config{Prefix: c.prefix, WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	return c
}

// scenarioLimit bounds one scenario's cluster (its context): 10 minutes,
// 45 with C2_FAULTS_LONG=1 (a 5-minute outage; 200 jobs through the
// killed coordinators).
func scenarioLimit() time.Duration {
	if os.Getenv("C2_FAULTS_LONG") == "1" {
		return 45 * time.Minute
	}
	return 10 * time.Minute
}

// workerProc is a worker process.
type workerProc struct {
	id   string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// startWorker starts a worker process with one CPU slot and waits until it
// has registered.
func (c *cluster) startWorker(id, hook string) *workerProc {
	c.t.Helper()
	return c.startWorkerWith(id, hook, paramsDir)
}

// startWorkerWith is startWorker with the worker's parameter folder.
func (c *cluster) startWorkerWith(id, hook, params string) *workerProc {
	c.t.Helper()
	args := []string{
		"-id", id, "-nats", c.nats.url(), "-redis", c.redis.addr, "-redis-prefix", c.prefix,
		"-shapes", testShape, "-params-dir", params, "-trusted-params", "-backend", "cpu",
		"-gpu-workers-per-device", "1", "-metrics-listen", "off", "-heartbeat-interval", "500ms",
		"-retry-delay", "100ms", "-ack-wait", c.qcfg.AckWait.String(), "-max-deliver", strconv.Itoa(c.qcfg.MaxDeliver),
		"-log-level", "info",
	}
	args = append(args, c.auth.workerArgs...)
	b, err := json.Marshal(args)
	require.NoError(c.t, err)
	w := &workerProc{id: id, out: &syncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), envWorker+"=1", envWorkerArgs+"="+string(b), envHook+"="+hook)
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	require.NoError(c.t, w.cmd.Start())
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	c.workers = append(c.workers, w)
	c.t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Signal(syscall.SIGKILL)
			<-w.done
		}
		if c.t.Failed() {
			c.t.Logf("worker %s output:\n%s", id, w.out.String())
		}
	})
	waitFor(c.t, "worker "+id+" to register", 2*time.Minute, func() bool {
		select {
		case <-w.done:
			c.t.Fatalf("worker %s exited at start:\n%s", id, w.out.String())
		default:
		}
		return c.registered(id) != nil
	})
	return w
}

func (c *cluster) registered(id string) *jobstore.Worker {
	ws, err := c.store.Workers(c.ctx)
	if err != nil {
		return nil
	}
	for i := range ws {
		if ws[i].ID == id {
			return &ws[i]
		}
	}
	return nil
}

// submit submits a sealed C1 of the test shape and returns the job id.
func (c *cluster) submit(doc []byte) string {
	c.t.Helper()
	res, err := c.api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(c.t, err)
	return res.JobId
}

// settled waits until every job is terminal (read from the store) and
// returns their statuses through the API.
func (c *cluster) settled(jobs []string, within time.Duration) map[string]*c2clusterv1.JobStatus {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("%d jobs to settle", len(jobs)), within, func() bool {
		for _, id := range jobs {
			st, err := c.store.JobState(c.ctx, id)
			if err != nil || !st.Terminal() {
				return false
			}
		}
		return true
	})
	out := map[string]*c2clusterv1.JobStatus{}
	for _, id := range jobs {
		res, err := c.api.Status(c.ctx, id)
		require.NoError(c.t, err)
		out[id] = res.Job
	}
	return out
}

// requireOutcome asserts what every scenario promises: each accepted job
// is done with a proof that verifies (partition by partition, against the
// public inputs computed from its C1 output, independently of the
// coordinator), none lost, none duplicated, and no process panicked.
func (c *cluster) requireOutcome(docs map[string][]byte, st map[string]*c2clusterv1.JobStatus) {
	c.t.Helper()
	all, err := c.store.List(c.ctx, "", 1000)
	require.NoError(c.t, err)
	require.Len(c.t, all, len(docs), "the store holds exactly the accepted jobs: none lost, none duplicated")
	for id, doc := range docs {
		j := st[id]
		require.NotNil(c.t, j, "job %s", id)
		requireValidProof(c.t, doc, j)
		evs, err := c.store.Events(c.ctx, id)
		require.NoError(c.t, err)
		recorded := map[string]int{}
		for _, e := range evs {
			if e.Fields["type"] == "complete" && e.Fields["outcome"] != "duplicate" && e.Fields["outcome"] != "stale" {
				recorded[e.Fields["partition"]]++
			}
		}
		for p, n := range recorded {
			require.LessOrEqual(c.t, n, 1, "job %s partition %s recorded once", id, p)
		}
	}
	c.requireNoPanic()
}

func (c *cluster) requireNoPanic() {
	c.t.Helper()
	require.NotContains(c.t, c.logs.String(), "panic", "coordinator log")
	for _, w := range c.workers {
		require.NotContains(c.t, w.out.String(), "panic", "worker %s output", w.id)
	}
}

// healthz returns the coordinator's /healthz status code and body.
func (c *cluster) healthz() (int, string) {
	res, err := httptestGet(c.health)
	if err != nil {
		return 0, err.Error()
	}
	return res.code, res.body
}

// dependencyUp reads c2_dependency_up{dependency=dep} of the coordinator.
func (c *cluster) dependencyUp(dep string) float64 {
	return gaugeValue(c.t, c.srv.Metrics(), "c2_dependency_up", "dependency", dep)
}

func params(t testing.TB) *groth16.ProvingKey {
	t.Helper()
	return poreptest.Params(t, paramsDir, testShape, "faults tests")
}

func requireValidProof(t testing.TB, doc []byte, j *c2clusterv1.JobStatus) {
	t.Helper()
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, j.State, "job %s: %s", j.JobId, j.Reason)
	out, err := c1.ParseBytes(doc)
	require.NoError(t, err)
	proofs, err := groth16.SplitProofs(j.Proof)
	require.NoError(t, err)
	require.Len(t, proofs, out.Shape.Partitions)
	vk := params(t).VK
	for k, p := range proofs {
		in, err := circuit.PublicInputs(out, k)
		require.NoError(t, err)
		require.NoError(t, groth16.Verify(&vk, p, in), "job %s partition %d", j.JobId, k)
		other := append([]fr.Element(nil), in...)
		other[0].SetUint64(12345)
		require.Error(t, groth16.Verify(&vk, p, other), "partition %d's proof must not verify for another replica", k)
	}
}

// waitFor polls cond every 20 ms until it holds, failing the test after
// within.
func waitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of an eventual check
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ = telemetry.DepRedis
