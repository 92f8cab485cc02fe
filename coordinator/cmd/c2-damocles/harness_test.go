package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	"github.com/c2cluster/c2cluster/worker/node/nodetest"
)

// testShape is the smallest registered shape with several partitions.
const testShape = "test-micro"

// envProcess makes the test binary run c2-damocles' main instead of the
// tests: the processor process damocles would start.
const envProcess = "C2_DAMOCLES_TEST_PROCESS"

var (
	redisSrv  *jobstoretest.Redis
	paramsDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(envProcess) == "1" {
		main() // exits
	}
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) {
		redisSrv = r
		var err error
		paramsDir, err = os.MkdirTemp("", "c2-damocles-params-")
		return func() { os.RemoveAll(paramsDir) }, err
	}, queuetest.LeakOptions()...)
}

// cluster is a real c2cluster: embedded NATS JetStream, a private key space
// on the package's redis-server, the coordinator serving HTTP in this
// process, and (startWorker) a CPU worker node.
type cluster struct {
	t     testing.TB
	ctx   context.Context
	q     *queue.Queue
	store *jobstore.Store
	url   string
	api   *client.Client
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	poreptest.Params(t, paramsDir, testShape, "c2-damocles tests") // before the deadline starts
	ns := queuetest.Server(t)
	nc := queuetest.Conn(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	q, err := queue.Open(ctx, nc, queue.Config{NakDelay: 100 * time.Millisecond, AckWait: 30 * time.Second, MaxDeliver: 5})
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	srv, err := server.New(server.Config{Logger: quietLogger(), Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
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
	return &cluster{t: t, ctx: ctx, q: q, store: store, url: hs.URL, api: client.New(hs.URL)}
}

// startWorker runs a worker node (worker/node, the worker binary's code)
// with one CPU slot until the test ends.
func (c *cluster) startWorker() {
	c.t.Helper()
	cfg := nodetest.CPUConfig("cpu-worker", testShape, paramsDir)
	cfg.Logger = quietLogger()
	nodetest.Start(c.t, c.ctx, cfg, c.q, c.store, nil)
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// sector is a sealed test sector of a miner, with what damocles knows of
// it and what the chain would verify its proof with.
type sector struct {
	miner, number uint64
	c1            []byte
	check         seal.Sector
}

// sealSector seals random data of the test shape for miner's sector number
// (its replica id derived from the miner's prover id and the number) and
// writes its C1 output as rust-fil-proofs does.
func sealSector(t testing.TB, miner, number, seed uint64) *sector {
	t.Helper()
	s, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 0xda})
	data := make([]porep.Domain, s.Nodes)
	for i := range data {
		rng.Read(data[i][:])
		data[i].TruncateTo254()
	}
	var ticket, seedV [32]byte
	rng.Read(ticket[:])
	rng.Read(seedV[:])
	id := sealer.Identity{ProverID: seal.ProverID(miner), SectorID: number, Ticket: ticket}
	sec, err := sealer.Seal(context.Background(), s, data, id, nil)
	require.NoError(t, err)
	out, err := sealer.Commit1(context.Background(), s, sec, ticket, seedV, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = out.WriteTo(&buf)
	require.NoError(t, err)
	return &sector{miner: miner, number: number, c1: buf.Bytes(), check: seal.Sector{
		Shape: s, CommR: sec.CommR, CommD: sec.CommD, ProverID: seal.ProverID(miner), SectorNumber: number, Ticket: ticket, Seed: seedV,
	}}
}

// verifyProof checks a proof as verify_seal does, from the sector's public
// values alone, with the test shape's verifying key.
func verifyProof(t testing.TB, s *sector, proof []byte) {
	t.Helper()
	vk, err := groth16.ReadVerifyingKeyFile(circuit.VKPath(paramsDir, testShape))
	require.NoError(t, err)
	pvk, err := groth16.PrepareVerifyingKey(vk)
	require.NoError(t, err)
	require.NoError(t, seal.Verify(pvk, &s.check, proof))
}

// c2Task and c2Request are damocles' C2 request as serde_json writes it:
// fields in declaration order, [u8; 32] as an array of integers.
type c2Task struct {
	C1Out    json.RawMessage `json:"c1out"`
	ProverID porep.Domain    `json:"prover_id"`
	SectorID uint64          `json:"sector_id"`
	MinerID  uint64          `json:"miner_id"`
}

type c2Request struct {
	ID   uint64 `json:"id"`
	Task c2Task `json:"task"`
}

// task is the C2 task damocles sends for s.
func (s *sector) task() c2Task {
	return c2Task{C1Out: s.c1, ProverID: seal.ProverID(s.miner), SectorID: s.number, MinerID: s.miner}
}

// c2Response is damocles' Response<SealCommitPhase2Output>.
type c2Response struct {
	ID     uint64  `json:"id"`
	ErrMsg *string `json:"err_msg"`
	Output *struct {
		Proof []byte `json:"proof"` // a JSON array of integers
	} `json:"output"`
}

// procHandle is a c2-damocles process driven as damocles-worker drives it:
// requests written to its stdin, one per line; responses read from its
// stdout, one per line.
type procHandle struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at its end
	stderr *syncBuffer
	done   chan struct{}
}

// startProcessor starts the processor with args (this test binary
// re-executed as c2-damocles' main).
func startProcessor(t testing.TB, args ...string) *procHandle {
	t.Helper()
	p := &procHandle{t: t, lines: make(chan string, 64), stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), envProcess+"=1")
	p.cmd.Stderr = p.stderr
	var err error
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	// Our own pipe, not StdoutPipe: Wait must not close it before the
	// reader has seen every line.
	stdout, w, err := os.Pipe()
	require.NoError(t, err)
	p.cmd.Stdout = w
	require.NoError(t, p.cmd.Start())
	w.Close()
	go func() {
		defer close(p.lines)
		defer stdout.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		for range p.lines { // unblock the reader
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("c2-damocles stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// line returns the next stdout line ("" and false at its end), failing
// the test when none comes within the deadline.
func (p *procHandle) line(within time.Duration) (string, bool) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-time.After(within):
		p.t.Fatalf("no line from c2-damocles within %v", within)
		return "", false
	}
}

// response reads and decodes the next response line.
func (p *procHandle) response(within time.Duration) c2Response {
	p.t.Helper()
	l, ok := p.line(within)
	require.True(p.t, ok, "c2-damocles closed stdout")
	var r c2Response
	require.NoError(p.t, json.Unmarshal([]byte(l), &r), "response line %q", l)
	require.True(p.t, (r.ErrMsg == nil) != (r.Output == nil), "exactly one of err_msg and output: %q", l)
	return r
}

func (p *procHandle) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(p.t, err)
	p.sendLine(string(b))
}

func (p *procHandle) sendLine(s string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, s+"\n")
	require.NoError(p.t, err)
}

// exitCode waits for the process to exit.
func (p *procHandle) exitCode(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		p.t.Fatalf("c2-damocles did not exit within %v", within)
		return -1
	}
}

// syncBuffer is a bytes.Buffer safe for the process's writes and the
// test's reads.
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
