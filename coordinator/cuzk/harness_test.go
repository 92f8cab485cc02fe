package cuzk_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/c2cluster/c2cluster/coordinator/cuzk"
	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
	"github.com/c2cluster/c2cluster/worker/node"
	"github.com/c2cluster/c2cluster/worker/node/nodetest"
)

// testShape is the smallest registered shape with several partitions.
const testShape = "test-micro"

// testMiner is the miner actor the test sectors are sealed for (f01000).
const testMiner = 1000

var (
	redisSrv  *jobstoretest.Redis
	paramsDir string
)

func TestMain(m *testing.M) {
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) {
		redisSrv = r
		var err error
		paramsDir, err = os.MkdirTemp("", "c2-cuzk-params-")
		return func() { os.RemoveAll(paramsDir) }, err
	}, queuetest.LeakOptions()...)
}

// params runs the real, seeded Groth16 setup of the test shape once per
// package into paramsDir, where the worker and the coordinator read it.
func params(t testing.TB) *groth16.ProvingKey {
	t.Helper()
	return poreptest.Params(t, paramsDir, testShape, "cuzk API tests")
}

func shape(t testing.TB) *porep.Shape {
	t.Helper()
	s, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	return s
}

// sealedC1 seals a random sector of the test shape (deterministic from
// seed) for miner and sector number, as Curio's C1 would be, and returns
// its C1 JSON.
func sealedC1(t testing.TB, miner, number, seed uint64) []byte {
	t.Helper()
	return poreptest.SealedSectorC1(t, testShape, seed, miner, number)
}

// envelope wraps a C1 output in lotus-bench's Commit2In envelope.
func envelope(t testing.TB, doc []byte, number, sectorSize uint64, miner string) []byte {
	t.Helper()
	return poreptest.Commit2In(t, doc, number, sectorSize, miner)
}

// verifyIndependently checks a proof partition by partition with the
// single-proof verifier, the shape's verifying key and the public inputs
// computed from the C1 output: an oracle independent of the coordinator's
// batch verification.
func verifyIndependently(t testing.TB, doc, proof []byte) {
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

// cluster is one test's infrastructure: a real embedded NATS JetStream, a
// private key space on a real Redis, the real coordinator, and the cuzk API
// served from it on a TCP port and a unix socket, as `coordinator serve
// -cuzk-listen -cuzk-socket` does.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	q     *queue.Queue
	store *jobstore.Store
	srv   *server.Server
	log   *slog.Logger
	tcp   string // host:port
	sock  string // unix socket path
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	params(t) // the setup first: its time must not eat the test's deadline
	ns := queuetest.Server(t)
	nc := queuetest.Conn(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	q, err := queue.Open(ctx, nc, queue.Config{NakDelay: 100 * time.Millisecond, AckWait: 5 * time.Second})
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	log := nodetest.Logger(t)
	srv, err := server.New(server.Config{Logger: log, Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		q, store, &server.PoRep{ParamsDir: paramsDir})
	require.NoError(t, err)
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(srv.Stop)

	eng, err := cuzk.New(srv, cuzk.Config{Metrics: srv.Metrics(), Logger: log})
	require.NoError(t, err)
	c := &cluster{t: t, ctx: ctx, q: q, store: store, srv: srv, log: log}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c.tcp = ln.Addr().String()
	c.serve(cuzk.NewHTTPServer(eng.Mux()), ln)

	dir, err := os.MkdirTemp("", "cuzk-") // short: a socket path has at most ~100 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.sock = filepath.Join(dir, "cuzk.sock")
	uln, err := cuzk.ListenUnix(c.sock)
	require.NoError(t, err)
	c.serve(cuzk.NewHTTPServer(eng.Mux()), uln)
	return c
}

func (c *cluster) serve(hs *http.Server, ln net.Listener) {
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	c.t.Cleanup(func() {
		require.NoError(c.t, hs.Close())
		require.ErrorIs(c.t, <-done, http.ErrServerClosed)
	})
}

// workerConfig is a one-slot CPU worker of the test shape with fast timings.
func workerConfig(id string) node.Config { return nodetest.CPUConfig(id, testShape, paramsDir) }

// startWorker creates and starts a worker (the real worker/node); it is
// stopped at cleanup.
func (c *cluster) startWorker(cfg node.Config) *node.Node {
	c.t.Helper()
	return nodetest.Start(c.t, c.ctx, cfg, c.q, c.store, c.log)
}

// dial connects to the cuzk API as Curio's lib/cuzk client does: grpc-go,
// no TLS, "unix:///path" or a bare host:port (then "dns:///host:port"),
// 256 MiB messages.
func dial(t *testing.T, addr string) cuzkv1.ProvingEngineClient {
	t.Helper()
	target := addr
	if !strings.Contains(target, "://") && !strings.HasPrefix(target, "unix:") {
		target = "dns:///" + target
	}
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, conn.Close()) })
	return cuzkv1.NewProvingEngineClient(conn)
}

// job is the coordinator's view of a job (its own API).
func (c *cluster) job(id string) *c2clusterv1.JobStatus {
	c.t.Helper()
	res, err := c.srv.Status(c.ctx, connect.NewRequest(&c2clusterv1.StatusRequest{JobId: id}))
	require.NoError(c.t, err)
	return res.Msg.Job
}

// jobs lists every job the coordinator knows.
func (c *cluster) jobs() []*c2clusterv1.JobStatus {
	c.t.Helper()
	res, err := c.srv.ListJobs(c.ctx, connect.NewRequest(&c2clusterv1.ListJobsRequest{Limit: 1000}))
	require.NoError(c.t, err)
	return res.Msg.Jobs
}

// waitState polls the coordinator until the job is in state.
func (c *cluster) waitState(id string, state c2clusterv1.JobState) {
	c.t.Helper()
	require.Eventually(c.t, func() bool { return c.job(id).State == state }, time.Minute, 20*time.Millisecond,
		"job %s never reached %s", id, state)
}

// requireCode requires a gRPC error with code whose message contains every
// part.
func requireCode(t *testing.T, err error, code codes.Code, parts ...string) {
	t.Helper()
	require.Error(t, err)
	st, ok := status.FromError(err)
	require.True(t, ok, "not a gRPC status: %v", err)
	require.Equal(t, code, st.Code(), "%v", err)
	for _, p := range parts {
		require.Contains(t, st.Message(), p)
	}
}

// porepRequest is the SubmitProofRequest Curio's PoRepSnarkCuzk sends for
// a sector (request id "porep-<miner>-<number>", NORMAL priority).
func porepRequest(t testing.TB, vanilla []byte, number uint64) *cuzkv1.SubmitProofRequest {
	s := shape(t)
	return &cuzkv1.SubmitProofRequest{
		RequestId: fmt.Sprintf("porep-%d-%d", testMiner, number), ProofKind: cuzkv1.ProofKind_POREP_SEAL_COMMIT,
		SectorSize: s.SectorSize(), RegisteredProof: s.ProofID, Priority: cuzkv1.Priority_NORMAL,
		VanillaProof: vanilla, SectorNumber: number, MinerId: testMiner,
	}
}
