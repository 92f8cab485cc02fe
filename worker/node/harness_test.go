package node_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda/cudatest"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/node"
	"github.com/c2cluster/c2cluster/worker/node/nodetest"
)

// testShape is the smallest registered shape with several partitions
// (~250k constraints per partition, domain 2^18).
const testShape = "test-micro"

var (
	redisSrv  *jobstoretest.Redis
	paramsDir string
)

func TestMain(m *testing.M) {
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) {
		redisSrv = r
		var err error
		paramsDir, err = os.MkdirTemp("", "c2-worker-params-")
		return func() { os.RemoveAll(paramsDir); cudatest.Cleanup() }, err
	}, queuetest.LeakOptions()...)
}

// params runs the real, seeded Groth16 setup of the test shape once per
// package into paramsDir, where the workers and the coordinator read it.
func params(t testing.TB) *groth16.ProvingKey {
	t.Helper()
	return poreptest.Params(t, paramsDir, testShape, "worker node tests")
}

// compiledShape returns the test shape's compiled circuit.
func compiledShape(t testing.TB) *circuit.Compiled {
	t.Helper()
	shape, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	compiled, err := circuit.ForShape(shape)
	require.NoError(t, err)
	return compiled
}

// sealedC1 seals a random sector of the test shape and returns its C1 JSON.
func sealedC1(t testing.TB, seed uint64) []byte {
	t.Helper()
	return poreptest.SealedC1(t, testShape, seed)
}

// cluster is one test's infrastructure: a real embedded NATS JetStream
// server, a private key space on a real Redis, and the real coordinator
// (in process, called through its handler methods).
type cluster struct {
	t     *testing.T
	ctx   context.Context
	q     *queue.Queue
	nc    *nats.Conn
	store *jobstore.Store
	srv   *server.Server
	log   *slog.Logger
}

func newCluster(t *testing.T, qcfg queue.Config) *cluster {
	t.Helper()
	params(t) // the setup first: its time must not eat the test's deadline
	ns := queuetest.Server(t)
	nc := queuetest.Conn(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	if qcfg.NakDelay == 0 {
		qcfg.NakDelay = 100 * time.Millisecond
	}
	if qcfg.AckWait == 0 {
		qcfg.AckWait = 5 * time.Second
	}
	q, err := queue.Open(ctx, nc, qcfg)
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	log := nodetest.Logger(t)
	srv, err := server.New(server.Config{Logger: log, Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		q, store, &server.PoRep{ParamsDir: paramsDir})
	require.NoError(t, err)
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(srv.Stop)
	return &cluster{t: t, ctx: ctx, q: q, nc: nc, store: store, srv: srv, log: log}
}

// workerConfig is a one-slot CPU worker of the test shape with fast timings.
func workerConfig(id string) node.Config { return nodetest.CPUConfig(id, testShape, paramsDir) }

// startWorker creates and starts a worker; it is stopped at cleanup.
func (c *cluster) startWorker(cfg node.Config) *node.Node {
	c.t.Helper()
	return nodetest.Start(c.t, c.ctx, cfg, c.q, c.store, c.log)
}

func (c *cluster) submit(doc []byte) string {
	c.t.Helper()
	res, err := c.srv.Submit(c.ctx, connect.NewRequest(&c2clusterv1.SubmitRequest{C1Json: doc}))
	require.NoError(c.t, err)
	return res.Msg.JobId
}

// waitJob waits (on the store's change hints, with a deadline) until the
// job is in one of the states, and returns it.
func (c *cluster) waitJob(job string, states ...jobstore.State) *jobstore.Job {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 3*time.Minute)
	defer cancel()
	var got *jobstore.Job
	err := c.store.Watch(ctx, job, func(j *jobstore.Job) bool {
		got = j
		for _, s := range states {
			if j.State == s {
				return true
			}
		}
		return false
	})
	if err != nil {
		state := "?"
		if got != nil {
			state = fmt.Sprintf("%s (done %d, last error %q, reason %q)", got.State, got.Done, got.LastError, got.Reason)
		}
		c.t.Fatalf("job %s did not reach %v: %v; it is %s", job, states, err, state)
	}
	return got
}

// requireValidProof checks a done job's proof against the Groth16 verifier
// and the natively computed public inputs of every partition, independently
// of the coordinator's own check.
func requireValidProof(t *testing.T, doc []byte, j *jobstore.Job) {
	t.Helper()
	require.Equal(t, jobstore.StateDone, j.State, "job %s: %s", j.ID, j.Reason)
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
		other := make([]fr.Element, len(in))
		copy(other, in)
		other[0].SetUint64(12345) // replica id
		require.Error(t, groth16.Verify(&vk, p, other), "partition %d must not verify for another replica", k)
	}
}

// gate is a hook point a test holds closed: the partitions that reach it
// report on arrived and wait until the test opens it (or their context
// ends).
type gate struct {
	arrived chan *queue.Delivery
	open    chan struct{}
	once    sync.Once
}

func newGate() *gate {
	return &gate{arrived: make(chan *queue.Delivery, 16), open: make(chan struct{})}
}

func (g *gate) wait(ctx context.Context, d *queue.Delivery) error {
	g.arrived <- d
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) next(t *testing.T) *queue.Delivery {
	t.Helper()
	select {
	case d := <-g.arrived:
		return d
	case <-time.After(3 * time.Minute):
		t.Fatal("no partition reached the gate")
		return nil
	}
}
