package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// testShape is the smallest registered shape with several partitions.
const testShape = "test-mini"

var (
	redisSrv  *jobstoretest.Redis
	paramsDir string
)

func TestMain(m *testing.M) {
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) {
		redisSrv = r
		var err error
		paramsDir, err = os.MkdirTemp("", "c2-params-")
		return func() { os.RemoveAll(paramsDir) }, err
	}, queuetest.LeakOptions()...)
}

// params runs the real, seeded Groth16 setup of the test shape once per
// package into paramsDir, where the workers and the coordinator read it.
func params(t testing.TB) *groth16.ProvingKey {
	t.Helper()
	return poreptest.Params(t, paramsDir, testShape, "coordinator tests")
}

// sealedC1 seals a random sector of the test shape and returns its C1 JSON.
func sealedC1(t testing.TB, seed uint64) []byte {
	t.Helper()
	return poreptest.SealedC1(t, testShape, seed)
}

// cluster is the shared infrastructure of one test: a real embedded NATS
// JetStream server and a private Redis key space.
type cluster struct {
	t     testing.TB
	ctx   context.Context
	q     *queue.Queue
	store *jobstore.Store
}

func newCluster(t testing.TB, qcfg queue.Config) *cluster {
	t.Helper()
	params(t) // the setup first: its time must not eat the test's deadline
	srv := queuetest.Server(t)
	nc := queuetest.Conn(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	q, err := queue.Open(ctx, nc, qcfg)
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: 500 * time.Millisecond})
	require.NoError(t, err)
	return &cluster{t: t, ctx: ctx, q: q, store: store}
}

// coordinator is one running coordinator process (server + HTTP).
type coordinator struct {
	srv    *server.Server
	http   *httptest.Server
	client *client.Client // Connect protocol (HTTP/1.1, JSON-compatible)
	grpc   *client.Client // gRPC over HTTP/2 cleartext
	stop   sync.Once
}

func (c *cluster) startCoordinator(cfg server.Config) *coordinator {
	c.t.Helper()
	cfg.Loop = queue.LoopConfig{FetchWait: 200 * time.Millisecond, RetryDelay: 100 * time.Millisecond}
	srv, err := server.New(cfg, c.q, c.store, &server.PoRep{ParamsDir: paramsDir, MaxC1Bytes: cfg.MaxC1Bytes})
	require.NoError(c.t, err)
	require.NoError(c.t, srv.Start(c.ctx))
	hs := httptest.NewUnstartedServer(srv.Mux())
	hs.Config.Protocols = server.Protocols() // gRPC without TLS, as coordinator serve does
	hs.Start()
	co := &coordinator{srv: srv, http: hs, client: client.New(hs.URL), grpc: client.New(hs.URL, client.WithGRPC())}
	c.t.Cleanup(co.Stop)
	return co
}

// Stop stops the coordinator like a process exit: HTTP server and loops.
func (co *coordinator) Stop() {
	co.stop.Do(func() {
		co.http.CloseClientConnections()
		co.http.Close()
		co.srv.Stop()
	})
}

// testWorker is a minimal worker written from pkg/queue and pkg/jobstore
// (the real code paths; the full worker binary lives in worker/): Begin,
// fetch the blob, synthesize, prove on the CPU backend, verify, Complete,
// request assembly when the last partition is in.
type testWorker struct {
	c     *cluster
	id    string
	key   groth16.Key
	comp  *circuit.Compiled
	vk    *groth16.PreparedVerifyingKey
	delay func(*c2clusterv1.PartitionTask) // optional hook before the work
	fail  func(*c2clusterv1.PartitionTask) error

	mu     sync.Mutex
	proved []string
}

func (c *cluster) newWorker(id string) *testWorker {
	c.t.Helper()
	pk := params(c.t)
	key, err := groth16.NewCPUBackend().Load(c.ctx, pk)
	require.NoError(c.t, err)
	c.t.Cleanup(func() { _ = key.Close() })
	shape, err := porep.ShapeByName(testShape)
	require.NoError(c.t, err)
	comp, err := circuit.ForShape(shape)
	require.NoError(c.t, err)
	pvk, err := groth16.PrepareVerifyingKey(&pk.VK)
	require.NoError(c.t, err)
	return &testWorker{c: c, id: id, key: key, comp: comp, vk: pvk}
}

// run starts n slots of the worker until the test ends.
func (w *testWorker) run(n int) {
	t := w.c.t
	ctx, cancel := context.WithCancel(w.c.ctx)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		slot, err := w.c.q.NewSlot(queue.SlotConfig{Name: fmt.Sprintf("%s/%d", w.id, i), Shapes: []string{testShape},
			Handler: w.handle, IdlePoll: 100 * time.Millisecond})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = slot.Run(ctx)
		}()
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

func (w *testWorker) handle(ctx context.Context, d *queue.Delivery) (err error) {
	task := d.Task
	ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanPartition, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(telemetry.AttrJob.String(task.JobId), telemetry.AttrPartition.Int(int(task.Partition)),
			telemetry.AttrAttempt.Int(d.Attempt), telemetry.AttrWorker.String(w.id), telemetry.AttrDevice.String("cpu")))
	defer span.End()
	st := w.c.store
	out, state, err := st.Begin(ctx, task.JobId, task.Partition, d.Attempt, w.id)
	if err != nil {
		return err
	}
	switch out {
	case jobstore.BeginStale, jobstore.BeginClosed:
		return nil
	case jobstore.BeginAlreadyDone:
		if state == jobstore.StateAssembling {
			return w.c.q.RequestAssemblyOf(ctx, task)
		}
		return nil
	}
	defer func() {
		if err != nil {
			_ = st.RecordFailure(context.WithoutCancel(ctx), task.JobId, task.Partition, d.Attempt, w.id, err)
		}
	}()
	if w.delay != nil {
		w.delay(task)
	}
	if w.fail != nil {
		if err := w.fail(task); err != nil {
			return err
		}
	}
	blob, err := w.c.q.GetBlob(ctx, task.BlobRef, task.BlobSha256)
	if err != nil {
		return err
	}
	doc, err := c1.ParseBytes(blob)
	if err != nil {
		return queue.Permanent(err)
	}
	var timings jobstore.PartitionTimings
	timings.QueueWait = time.Since(d.Published)

	t0 := time.Now()
	sctx, s := telemetry.Tracer().Start(ctx, telemetry.SpanSynthesize)
	wit, err := w.comp.Synthesize(sctx, doc, int(task.Partition))
	s.End()
	if err != nil {
		if errors.Is(err, circuit.ErrUnsatisfied) || errors.Is(err, circuit.ErrInvalidInput) {
			return queue.Permanent(err)
		}
		return err
	}
	timings.Synthesis = time.Since(t0)

	t0 = time.Now()
	_, s = telemetry.Tracer().Start(ctx, telemetry.SpanGPUCompute)
	rnd, err := groth16.NewRandomness()
	if err != nil {
		s.End()
		return err
	}
	proof, _, err := groth16.Prove(ctx, w.key, wit, rnd)
	s.End()
	if err != nil {
		return err
	}
	timings.Prove = time.Since(t0)

	t0 = time.Now()
	_, s = telemetry.Tracer().Start(ctx, telemetry.SpanVerify)
	err = w.vk.Verify(proof, wit.Input[1:])
	s.End()
	if err != nil {
		return fmt.Errorf("partition proof does not verify: %w", err)
	}
	timings.Verify = time.Since(t0)

	b, err := proof.MarshalBinary()
	if err != nil {
		return err
	}
	res, err := st.Complete(ctx, task.JobId, task.Partition, d.Attempt, b, timings, w.id)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.proved = append(w.proved, queue.MsgID(task.JobId, task.Partition))
	w.mu.Unlock()
	if res.State == jobstore.StateAssembling {
		return w.c.q.RequestAssemblyOf(ctx, task)
	}
	return nil
}

func (w *testWorker) provedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.proved)
}

// verifyIndependently checks a job's proof partition by partition with the
// single-proof verifier and the natively computed public inputs: an oracle
// independent of the coordinator's batch verification.
func verifyIndependently(t testing.TB, doc []byte, proof []byte) {
	t.Helper()
	out, err := c1.ParseBytes(doc)
	require.NoError(t, err)
	proofs, err := groth16.SplitProofs(proof)
	require.NoError(t, err)
	require.Len(t, proofs, out.Shape.Partitions)
	vk, err := groth16.ReadVerifyingKeyFile(circuit.VKPath(paramsDir, testShape))
	require.NoError(t, err)
	for k, p := range proofs {
		in, err := circuit.PublicInputs(out, k)
		require.NoError(t, err)
		require.NoError(t, groth16.Verify(vk, p, in), "partition %d", k)
	}
}

func waitState(t *testing.T, c *cluster, job string, want jobstore.State) *jobstore.Job {
	t.Helper()
	var j *jobstore.Job
	require.Eventually(t, func() bool {
		var err error
		j, err = c.store.Get(c.ctx, job)
		return err == nil && j.State == want
	}, 3*time.Minute, 20*time.Millisecond, "job %s never reached %s", job, want)
	return j
}
