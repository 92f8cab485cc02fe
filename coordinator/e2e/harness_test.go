package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/cli"
	"github.com/c2cluster/c2cluster/worker/node"
)

// testShape is the smallest registered shape with several partitions.
const testShape = "test-micro"

// Environment of a re-executed worker process.
const (
	envWorker     = "C2_E2E_WORKER"      // "1": run cli.Main instead of the tests
	envWorkerArgs = "C2_E2E_WORKER_ARGS" // JSON array of the worker's arguments
	envHook       = "C2_E2E_HOOK"        // test hook, see hooksFromEnv
)

var (
	redisSrv  *jobstoretest.Redis
	paramsDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "1" {
		os.Exit(workerProcess())
	}
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) {
		redisSrv = r
		var err error
		paramsDir, err = os.MkdirTemp("", "c2-e2e-params-")
		return func() { os.RemoveAll(paramsDir) }, err
	}, queuetest.LeakOptions()...)
}

// workerProcess is the main of a re-executed worker: the worker binary's
// own command line (worker/cli), plus the hook the test asked for.
func workerProcess() int {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(envWorkerArgs)), &args); err != nil {
		fmt.Fprintf(os.Stderr, "e2e worker: %s: %v\n", envWorkerArgs, err)
		return 2
	}
	hooks, err := hooksFromEnv(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e worker: %s: %v\n", envHook, err)
		return 2
	}
	return cli.Main(args, os.Stdout, os.Stderr, os.LookupEnv, cli.WithHooks(hooks))
}

// hooksFromEnv builds the worker hook a test names in C2_E2E_HOOK:
//
//	hold-until-begun:N      before synthesis, wait until N partitions of the job have begun
//	block:STAGE             before STAGE, block until the partition is aborted
//	block-until-file:STAGE:PATH  before STAGE, wait until PATH exists
func hooksFromEnv(args []string) (node.Hooks, error) {
	spec := os.Getenv(envHook)
	if spec == "" {
		return node.Hooks{}, nil
	}
	kind, rest, _ := strings.Cut(spec, ":")
	switch kind {
	case "hold-until-begun":
		n, err := strconv.Atoi(rest)
		if err != nil {
			return node.Hooks{}, err
		}
		store, err := storeFromArgs(args)
		if err != nil {
			return node.Hooks{}, err
		}
		return node.Hooks{BeforeStage: func(ctx context.Context, stage string, d *queue.Delivery) error {
			if stage != node.StageSynthesize {
				return nil
			}
			return pollUntil(ctx, 2*time.Minute, func() bool {
				begun := 0
				for p := uint32(0); p < d.Task.Partitions; p++ {
					if a, err := store.Attempt(ctx, d.Task.JobId, p); err == nil && a > 0 {
						begun++
					}
				}
				return begun >= n
			})
		}}, nil
	case "block":
		return node.Hooks{BeforeStage: func(ctx context.Context, stage string, d *queue.Delivery) error {
			if stage == rest {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}}, nil
	case "block-until-file":
		stage, path, ok := strings.Cut(rest, ":")
		if !ok {
			return node.Hooks{}, errors.New("block-until-file:STAGE:PATH")
		}
		return node.Hooks{BeforeStage: func(ctx context.Context, s string, d *queue.Delivery) error {
			if s != stage {
				return nil
			}
			return pollUntil(ctx, 5*time.Minute, func() bool { _, err := os.Stat(path); return err == nil })
		}}, nil
	}
	return node.Hooks{}, fmt.Errorf("unknown hook %q", spec)
}

// storeFromArgs opens the job store the worker's arguments name.
func storeFromArgs(args []string) (*jobstore.Store, error) {
	var addr, prefix string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-redis":
			addr = args[i+1]
		case "-redis-prefix":
			prefix = args[i+1]
		}
	}
	return jobstore.New(redis.NewClient(&redis.Options{Addr: addr}), jobstore.Config{Prefix: prefix})
}

// pollUntil polls cond (every 20 ms) until it holds, ctx ends or the
// deadline passes.
func pollUntil(ctx context.Context, within time.Duration, cond func() bool) error {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met within %v", within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// params runs the real, seeded Groth16 setup of the test shape once per
// package into paramsDir, where the workers and the coordinator read it.
func params(t testing.TB) *groth16.ProvingKey {
	t.Helper()
	return poreptest.Params(t, paramsDir, testShape, "e2e tests")
}

// sealedC1 seals a random sector of the test shape and returns its C1 JSON.
func sealedC1(t testing.TB, seed uint64) []byte {
	t.Helper()
	return poreptest.SealedC1(t, testShape, seed)
}

// cluster is one test's cluster: an embedded NATS JetStream server, a
// private key space on the package's Redis, and the coordinator serving
// HTTP in this process. Workers are separate processes.
type cluster struct {
	t      testing.TB
	ctx    context.Context
	nats   *queue.Embedded
	q      *queue.Queue
	qcfg   queue.Config
	store  *jobstore.Store
	prefix string
	srv    *server.Server
	api    *client.Client
}

func newCluster(t testing.TB, qcfg queue.Config) *cluster {
	t.Helper()
	params(t)
	ns := queuetest.Server(t)
	nc := queuetest.Conn(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	if qcfg.NakDelay == 0 {
		qcfg.NakDelay = 100 * time.Millisecond
	}
	if qcfg.AckWait == 0 {
		qcfg.AckWait = 10 * time.Second
	}
	if qcfg.MaxDeliver == 0 {
		qcfg.MaxDeliver = 5
	}
	q, err := queue.Open(ctx, nc, qcfg)
	require.NoError(t, err)
	prefix := jobstoretest.Prefix()
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: prefix, WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	srv, err := server.New(server.Config{Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		q, store, &server.PoRep{ParamsDir: paramsDir})
	require.NoError(t, err)
	require.NoError(t, srv.Start(ctx))
	hs := httptest.NewUnstartedServer(srv.Mux())
	hs.Config.Protocols = server.Protocols()
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Stop()
	})
	return &cluster{t: t, ctx: ctx, nats: ns, q: q, qcfg: q.Config(), store: store, prefix: prefix, srv: srv, api: client.New(hs.URL)}
}

// workerProc is a worker process.
type workerProc struct {
	id   string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// startWorker starts a worker process with one CPU slot, the cluster's
// queue settings, and the named hook ("" for none).
func (c *cluster) startWorker(id, hook string, extra ...string) *workerProc {
	c.t.Helper()
	args := []string{
		"-id", id, "-nats", c.nats.URL(), "-redis", redisSrv.Addr, "-redis-prefix", c.prefix,
		"-shapes", testShape, "-params-dir", paramsDir, "-trusted-params", "-backend", "cpu",
		"-gpu-workers-per-device", "1", "-metrics-listen", "off", "-heartbeat-interval", "200ms",
		"-retry-delay", "100ms", "-ack-wait", c.qcfg.AckWait.String(), "-max-deliver", strconv.Itoa(c.qcfg.MaxDeliver),
		"-log-level", "info",
	}
	args = append(args, extra...)
	b, err := json.Marshal(args)
	require.NoError(c.t, err)
	w := &workerProc{id: id, out: &syncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), envWorker+"=1", envWorkerArgs+"="+string(b), envHook+"="+hook)
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	require.NoError(c.t, w.cmd.Start())
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	c.t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Kill()
			<-w.done
		}
		if c.t.Failed() {
			c.t.Logf("worker %s output:\n%s", id, w.out.String())
		}
	})
	c.waitFor(fmt.Sprintf("worker %s registered", id), func() bool {
		select {
		case <-w.done:
			c.t.Fatalf("worker %s exited at start (%v):\n%s", id, w.err, w.out.String())
		default:
		}
		return c.registered(id) != nil
	})
	return w
}

// registered returns a worker's registration, nil when absent.
func (c *cluster) registered(id string) *jobstore.Worker {
	ws, err := c.store.Workers(c.ctx)
	require.NoError(c.t, err)
	for i := range ws {
		if ws[i].ID == id {
			return &ws[i]
		}
	}
	return nil
}

// signal sends sig to the worker.
func (w *workerProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(sig))
}

// wait waits for the process to exit and returns its exit code.
func (w *workerProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("worker %s did not exit:\n%s", w.id, w.out.String())
	}
	return w.cmd.ProcessState.ExitCode()
}

// waitFor polls cond (every 20 ms) until it holds or fails the test after
// a deadline.
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of an eventual check
	}
}

func (c *cluster) submit(doc []byte) string {
	c.t.Helper()
	res, err := c.api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(c.t, err)
	return res.JobId
}

// await waits for the job through the public API and returns its status.
func (c *cluster) await(job string) *c2clusterv1.JobStatus {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 4*time.Minute)
	defer cancel()
	j, err := c.api.Watch(ctx, job, nil)
	if j == nil {
		require.NoError(c.t, err)
	}
	return j
}

// requireValidProof checks the job's proof partition by partition with the
// Groth16 verifier against the public inputs computed from the C1 output,
// independently of the coordinator's own check.
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
		require.NoError(t, groth16.Verify(&vk, p, in), "partition %d", k)
		other := append([]fr.Element(nil), in...)
		other[0].SetUint64(12345) // another replica id
		require.Error(t, groth16.Verify(&vk, p, other), "partition %d's proof must not verify for another replica", k)
	}
}

// completedBy maps each partition to the worker whose result was recorded.
func (c *cluster) completedBy(job string) map[string]string {
	c.t.Helper()
	evs, err := c.store.Events(c.ctx, job)
	require.NoError(c.t, err)
	m := map[string]string{}
	for _, e := range evs {
		if e.Fields["type"] == "complete" {
			m[e.Fields["partition"]] = e.Fields["worker"]
		}
	}
	return m
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
