package node_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/backend"
	"github.com/c2cluster/c2cluster/worker/interlock"
	"github.com/c2cluster/c2cluster/worker/node"
)

func TestConfigValidationNamesTheField(t *testing.T) {
	c := newCluster(t, queue.Config{})
	dir := t.TempDir()
	for _, tc := range []struct {
		mutate func(*node.Config)
		want   string
	}{
		{func(c *node.Config) { c.Shapes = nil }, "Config.Shapes is empty"},
		{func(c *node.Config) { c.Shapes = []string{"1TiB"} }, "Config.Shapes"},
		{func(c *node.Config) { c.Shapes = []string{testShape, testShape} }, "listed twice"},
		{func(c *node.Config) { c.ParamsDir = "" }, "Config.ParamsDir is empty"},
		{func(c *node.Config) { c.ParamsDir = filepath.Join(dir, "nope") }, "Config.ParamsDir"},
		{func(c *node.Config) { c.Interlock = "turbo" }, "Config.Interlock"},
		{func(c *node.Config) { c.Backend = "fpga" }, "Config.Backend"},
		{func(c *node.Config) { c.Devices = []int{3} }, "device 3 is configured but not present"},
		{func(c *node.Config) { c.GPUWorkersPerDevice = -1 }, "Config.GPUWorkersPerDevice"},
		{func(c *node.Config) { c.GPUWorkersPerDevice = 1000 }, "exceeds"},
		{func(c *node.Config) { c.VRAMBudget = -1 }, "Config.VRAMBudget"},
		{func(c *node.Config) { c.HeartbeatInterval = time.Microsecond }, "Config.HeartbeatInterval"},
		{func(c *node.Config) { c.Residency = "moon" }, "Config.Residency"},
		{func(c *node.Config) { c.Lanes = []string{"urgent"} }, "Config.Lanes"},
		{func(c *node.Config) { c.ID = "has space" }, "Config.ID"},
	} {
		cfg := workerConfig("w-config")
		tc.mutate(&cfg)
		_, err := node.New(c.ctx, cfg, c.q, c.store)
		require.ErrorContains(t, err, tc.want)
	}
}

// A missing, corrupt or mismatched parameter file is an error at start,
// naming the file; nothing is left running.
func TestBadParametersFailAtStart(t *testing.T) {
	c := newCluster(t, queue.Config{})
	pk := params(t)
	good, err := os.ReadFile(circuit.ParamsPath(paramsDir, testShape))
	require.NoError(t, err)

	try := func(setup func(dir string)) error {
		dir := t.TempDir()
		setup(dir)
		cfg := workerConfig("w-params")
		cfg.ParamsDir = dir
		_, err := node.New(c.ctx, cfg, c.q, c.store)
		return err
	}

	err = try(func(string) {})
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, testShape+".params")
	require.ErrorContains(t, err, "no such file")

	err = try(func(dir string) {
		require.NoError(t, os.WriteFile(circuit.ParamsPath(dir, testShape), good[:len(good)/2], 0o600))
	})
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, testShape+".params")

	// Parameters that decode but are not this circuit's.
	err = try(func(dir string) {
		short := *pk
		short.L = pk.L[:len(pk.L)-1]
		require.NoError(t, groth16.WriteParamsFile(circuit.ParamsPath(dir, testShape), &short))
	})
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "section l (aux variables)")

	// A .vk beside the .params that does not match it.
	err = try(func(dir string) {
		require.NoError(t, os.WriteFile(circuit.ParamsPath(dir, testShape), good, 0o600))
		vk := pk.VK
		_, _, g1, _ := curve.Generators()
		vk.AlphaG1 = g1
		require.NoError(t, groth16.WriteVerifyingKeyFile(circuit.VKPath(dir, testShape), &vk))
	})
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "alpha_g1 differs")

	// Parameters whose circuit fingerprint (written by the setup beside
	// them) is another circuit's.
	err = try(func(dir string) {
		require.NoError(t, os.WriteFile(circuit.ParamsPath(dir, testShape), good, 0o600))
		require.NoError(t, os.WriteFile(circuit.FingerprintPath(dir, testShape), []byte("0123 "+testShape+"\n"), 0o600))
	})
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorIs(t, err, circuit.ErrStaleParams)
}

// An official shape is proved with Filecoin's parameter files only: a
// worker for it looks for them in OfficialParamsDir by their official
// names, and a missing one fails the start naming the file and the
// command that fetches it (c2cluster's own <shape>.params are not used).
func TestOfficialShapeNeedsFilecoinsFiles(t *testing.T) {
	c := newCluster(t, queue.Config{})
	s, err := porep.ShapeByName("2KiB")
	require.NoError(t, err)
	files, err := ceremony.ForShape(s)
	require.NoError(t, err)
	cfg := workerConfig("w-official")
	cfg.Shapes = []string{"2KiB"}
	cfg.ParamsDir = t.TempDir()
	cfg.OfficialParamsDir = t.TempDir()
	// A c2cluster-made file under the shape's own name changes nothing.
	require.NoError(t, os.WriteFile(circuit.ParamsPath(cfg.ParamsDir, "2KiB"), []byte("not used"), 0o600))
	_, err = node.New(c.ctx, cfg, c.q, c.store)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, filepath.Join(cfg.OfficialParamsDir, files.VK.Name))
	require.ErrorContains(t, err, "fetch-params 2KiB")

	// Files under the official names whose digests are not parameters.json's.
	for _, f := range []ceremony.File{files.Params, files.VK} {
		require.NoError(t, os.WriteFile(filepath.Join(cfg.OfficialParamsDir, f.Name), []byte("not Filecoin's "+f.Name), 0o600))
	}
	_, err = node.New(c.ctx, cfg, c.q, c.store)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorIs(t, err, ceremony.ErrDigestMismatch)
	require.ErrorContains(t, err, files.VK.Digest)
}

// recordingChecker is a groth16.SubgroupChecker on the CPU (gnark-crypto's
// IsInSubGroup) that counts its calls: the stand-in for a GPU's check in
// the worker's start-up path.
type recordingChecker struct{ calls atomic.Int64 }

func (c *recordingChecker) FirstNotInSubgroupG1(pts []curve.G1Affine) (int, error) {
	c.calls.Add(1)
	return slices.IndexFunc(pts, func(p curve.G1Affine) bool { return !p.IsInSubGroup() }), nil
}

func (c *recordingChecker) FirstNotInSubgroupG2(pts []curve.G2Affine) (int, error) {
	c.calls.Add(1)
	return slices.IndexFunc(pts, func(p curve.G2Affine) bool { return !p.IsInSubGroup() }), nil
}

var (
	checkedBackendOnce sync.Once
	checkedBackend     = &recordingChecker{}
)

// registerCheckedBackend registers "cpu-checked": the CPU backend with a
// subgroup checker, as the cuda backend has one.
func registerCheckedBackend(t *testing.T) string {
	checkedBackendOnce.Do(func() {
		cpu, ok := backend.Lookup(backend.NameCPU)
		require.True(t, ok)
		f := cpu
		f.Name = "cpu-checked"
		f.SubgroupChecker = func(backend.Options) (groth16.SubgroupChecker, error) { return checkedBackend, nil }
		require.NoError(t, backend.Register(f))
	})
	return "cpu-checked"
}

// A backend with a subgroup checker checks the parameter points at start
// (not the decoder): a point outside the subgroup fails the start naming
// its section and index, and trusted parameters are not checked at all.
func TestStartChecksSubgroupsOnTheBackend(t *testing.T) {
	c := newCluster(t, queue.Config{})
	params(t)
	good, err := os.ReadFile(circuit.ParamsPath(paramsDir, testShape))
	require.NoError(t, err)
	l, err := groth16.ParseParamsLayout(good)
	require.NoError(t, err)
	bad := groth16test.NotInSubgroupG1(t, 5)
	raw := bad.RawBytes()
	b := append([]byte(nil), good...)
	copy(b[l.H.Offset:], raw[:]) // h's first point: the checker's first call finds it
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(circuit.ParamsPath(dir, testShape), b, 0o600))

	cfg := workerConfig("w-checked")
	cfg.Backend = registerCheckedBackend(t)
	cfg.ParamsDir = dir
	cfg.TrustedParams = false
	before := checkedBackend.calls.Load()
	_, err = node.New(c.ctx, cfg, c.q, c.store)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorIs(t, err, groth16.ErrNotInSubgroup)
	require.ErrorContains(t, err, "section h: point 0")
	require.Equal(t, before+1, checkedBackend.calls.Load())

	cfg.TrustedParams = true
	n, err := node.New(c.ctx, cfg, c.q, c.store)
	require.NoError(t, err, "trusted parameters: no subgroup check")
	require.NoError(t, n.Stop(c.ctx))
	require.Equal(t, before+1, checkedBackend.calls.Load())
}

// One worker with two slots on the CPU "device" proves a whole job under
// the compute interlock; the first attempt of partition 0 panics and comes
// back as a retried error with its file and line. The worker is registered
// with its resident parameters while it runs.
func TestWorkerProvesJobAndRecoversFromPanic(t *testing.T) {
	c := newCluster(t, queue.Config{})
	var mu sync.Mutex
	var events []interlock.Event
	var panicked atomic.Bool
	cfg := workerConfig("w-prove")
	cfg.GPUWorkersPerDevice = 2
	cfg.Observer = func(e interlock.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage == node.StageSynthesize && d.Task.Partition == 0 && d.Attempt == 1 && panicked.CompareAndSwap(false, true) {
			panic("injected fault")
		}
		return nil
	}
	n := c.startWorker(cfg)
	require.Equal(t, 2, n.Slots())

	ws, err := c.store.Workers(c.ctx)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.Equal(t, "w-prove", ws[0].ID)
	require.Equal(t, []string{"cpu0"}, ws[0].Devices)
	require.Equal(t, 2, ws[0].Slots)
	require.Equal(t, []jobstore.Resident{{Shape: testShape, Residency: "host"}}, ws[0].Resident)

	doc := sealedC1(t, 1)
	job := c.submit(doc)
	j := c.waitJob(job, jobstore.StateDone, jobstore.StateFailed)
	requireValidProof(t, doc, j)
	require.True(t, panicked.Load())
	require.Contains(t, j.LastError, "panic")
	require.Contains(t, j.LastError, "injected fault")
	require.Regexp(t, `node_test\.go:\d+`, j.LastError, "the panic's error names its file and line")
	require.Positive(t, j.Timings.Synthesis)
	require.Positive(t, j.Timings.Prove)
	require.Positive(t, j.Timings.Verify)

	// Every proof took the compute lock, and nothing else.
	mu.Lock()
	defer mu.Unlock()
	acquired := 0
	for _, e := range events {
		if e.Kind == interlock.EventAcquired {
			require.Equal(t, interlock.LockCompute, e.Lock)
			acquired++
		}
	}
	require.Equal(t, 2, acquired, "one compute-lock acquisition per proved partition")
}

// A C1 output that passes the coordinator's structural checks but whose
// vanilla proof is wrong cannot be proved: the worker terminates the task
// (no retries) and the job fails naming the reason.
func TestBadInputIsTerminatedNotRetried(t *testing.T) {
	c := newCluster(t, queue.Config{MaxDeliver: 5})
	params(t)
	doc := sealedC1(t, 2)
	bad := poreptest.TamperPath(t, doc)
	var attempts atomic.Int32
	cfg := workerConfig("w-bad")
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage == node.StageInput {
			attempts.Add(1)
		}
		return nil
	}
	c.startWorker(cfg)
	job := c.submit(bad)
	j := c.waitJob(job, jobstore.StateFailed, jobstore.StateDone)
	require.Equal(t, jobstore.StateFailed, j.State)
	require.Contains(t, j.Reason, "partition 1 rejected by a worker")
	require.Regexp(t, "witness does not satisfy|invalid input", j.Reason)
	require.LessOrEqual(t, int(attempts.Load()), 2, "bad input is not retried (one attempt per partition at most)")
}

// Tasks that name a real job but do not match it (a partition it does not
// have, another partition count, another C1 blob) are rejected by the worker
// without touching the job: no attempt, no error, no failure; the coordinator
// counts them as rejected dead letters, and the job completes.
func TestForgedTasksLeaveTheirJobAlone(t *testing.T) {
	c := newCluster(t, queue.Config{})
	doc := sealedC1(t, 5)
	job := c.submit(doc)
	j, err := c.store.Get(c.ctx, job)
	require.NoError(t, err)
	real := &c2clusterv1.PartitionTask{JobId: job, Partition: 0, Partitions: uint32(j.Partitions), Shape: j.Shape, Lane: j.Lane,
		BlobRef: j.BlobRef, BlobSize: j.BlobSize, BlobSha256: j.BlobSHA256, EnqueuedUnixMs: time.Now().UnixMilli()}
	forge := func(change func(*c2clusterv1.PartitionTask)) *c2clusterv1.PartitionTask {
		f := proto.Clone(real).(*c2clusterv1.PartitionTask)
		change(f)
		return f
	}
	js, err := jetstream.New(c.nc)
	require.NoError(t, err)
	for i, f := range []*c2clusterv1.PartitionTask{
		forge(func(f *c2clusterv1.PartitionTask) { f.Partition, f.Partitions = 7, 8 }),
		forge(func(f *c2clusterv1.PartitionTask) { f.Partition = uint32(j.Partitions) }),
		forge(func(f *c2clusterv1.PartitionTask) { f.Partitions = uint32(j.Partitions + 1) }),
		forge(func(f *c2clusterv1.PartitionTask) { f.BlobRef = "another-c1" }),
	} {
		data, err := proto.Marshal(f) // as a forger would: no validation
		require.NoError(t, err)
		msg := &nats.Msg{Subject: c.q.Subject(f.Shape, f.Lane), Header: nats.Header{}, Data: data}
		msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("forged-%d", i))
		_, err = js.PublishMsg(c.ctx, msg)
		require.NoError(t, err)
	}
	c.startWorker(workerConfig("w-forged"))
	done := c.waitJob(job, jobstore.StateDone, jobstore.StateFailed)
	requireValidProof(t, doc, done)
	require.Empty(t, done.LastError)
	rejected := c.srv.Metrics().FailuresTotal.WithLabelValues("task", "rejected")
	require.Eventually(t, func() bool { return testutil.ToFloat64(rejected) == 4 }, 30*time.Second, 20*time.Millisecond,
		"the coordinator counted %v rejected tasks, want 4", testutil.ToFloat64(rejected))
	ev, err := c.store.Events(c.ctx, job)
	require.NoError(t, err)
	for _, e := range ev {
		require.NotEqual(t, "error", e.Fields["type"], "the job records no error of a forged task")
	}
}

// A partition that fails every time fails its job after MaxDeliver with the
// worker's reason, while a concurrent job on the same worker completes.
func TestFailingPartitionFailsOnlyItsJob(t *testing.T) {
	c := newCluster(t, queue.Config{MaxDeliver: 3})
	params(t)
	docA, docB := sealedC1(t, 3), sealedC1(t, 4)
	var badJob atomic.Value
	badJob.Store("")
	var failures atomic.Int32
	cfg := workerConfig("w-fail")
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage == node.StageInput && d.Task.JobId == badJob.Load().(string) && d.Task.Partition == 1 {
			failures.Add(1)
			return errors.New("injected device fault")
		}
		return nil
	}
	c.startWorker(cfg)
	jobA := c.submit(docA)
	badJob.Store(jobA)
	jobB := c.submit(docB)

	a := c.waitJob(jobA, jobstore.StateFailed, jobstore.StateDone)
	require.Equal(t, jobstore.StateFailed, a.State)
	require.Contains(t, a.Reason, "partition 1 failed after 3 deliveries")
	require.Contains(t, a.Reason, "injected device fault")
	require.EqualValues(t, 3, failures.Load(), "retried until MaxDeliver")

	b := c.waitJob(jobB, jobstore.StateDone, jobstore.StateFailed)
	requireValidProof(t, docB, b)
}

// Cancelling a job while a worker synthesizes one of its partitions: the
// worker drops it at the next stage boundary (no result recorded, no
// retry).
func TestCancelledJobIsDroppedAtStageBoundary(t *testing.T) {
	c := newCluster(t, queue.Config{})
	g := newGate()
	var proved atomic.Int32
	cfg := workerConfig("w-cancel")
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		switch stage {
		case node.StageSynthesize:
			return g.wait(ctx, d)
		case node.StageProve:
			proved.Add(1)
		}
		return nil
	}
	n := c.startWorker(cfg)
	job := c.submit(sealedC1(t, 5))
	d := g.next(t)
	require.Equal(t, job, d.Task.JobId)
	_, err := c.srv.Cancel(c.ctx, connect.NewRequest(&c2clusterv1.CancelRequest{JobId: job, Reason: "test"}))
	require.NoError(t, err)
	g.release()
	j := c.waitJob(job, jobstore.StateCancelled)
	require.Equal(t, "test", j.Reason)
	// The worker drops the partition at its next stage boundary: it never
	// reaches the prover and nothing is recorded. (Cancel deleted the other,
	// pending task, so no new delivery comes.)
	require.NoError(t, n.Stop(context.Background()))
	require.Zero(t, proved.Load())
	proofs, err := c.store.Proofs(c.ctx, job, 2)
	require.NoError(t, err)
	require.Nil(t, proofs[0])
	require.Nil(t, proofs[1])
}

// Stop lets an in-flight partition finish (phase one) and fetches nothing
// new; the worker unregisters.
func TestStopDrainsInFlight(t *testing.T) {
	c := newCluster(t, queue.Config{})
	g := newGate()
	cfg := workerConfig("w-drain")
	cfg.DrainTimeout = 10 * time.Minute // phase one must not end before the proof, however slow the machine
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage == node.StageProve {
			return g.wait(ctx, d)
		}
		return nil
	}
	n := c.startWorker(cfg)
	job := c.submit(sealedC1(t, 6))
	first := g.next(t)

	stopped := make(chan error, 1)
	go func() { stopped <- n.Stop(context.Background()) }()
	// The worker is draining: it finishes the partition it holds.
	g.release()
	select {
	case err := <-stopped:
		require.NoError(t, err)
	case <-time.After(3 * time.Minute):
		t.Fatal("Stop did not return")
	}
	proofs, err := c.store.Proofs(c.ctx, job, 2)
	require.NoError(t, err)
	require.NotNil(t, proofs[first.Task.Partition], "the in-flight partition finished during the drain")
	require.Nil(t, proofs[1-first.Task.Partition], "a draining worker fetches nothing new")
	ws, err := c.store.Workers(c.ctx)
	require.NoError(t, err)
	require.Empty(t, ws, "a stopped worker unregisters")
}

// When in-flight partitions outlast DrainTimeout they are aborted and
// handed back at once; another worker finishes the job.
func TestStopHandsBackAfterDrainTimeout(t *testing.T) {
	c := newCluster(t, queue.Config{AckWait: 5 * time.Minute})
	g := newGate()
	cfg := workerConfig("w-slow")
	cfg.DrainTimeout = 50 * time.Millisecond
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage == node.StageSynthesize {
			return g.wait(ctx, d) // held until aborted
		}
		return nil
	}
	n := c.startWorker(cfg)
	doc := sealedC1(t, 7)
	job := c.submit(doc)
	held := g.next(t)
	start := time.Now()
	require.NoError(t, n.Stop(context.Background()))

	next := workerConfig("w-next")
	next.GPUWorkersPerDevice = 2 // takes both partitions at once
	c.startWorker(next)
	// The held partition is delivered again long before the 5-minute
	// AckWait could expire: it was handed back with a Nak.
	for {
		attempt, err := c.store.Attempt(c.ctx, job, held.Task.Partition)
		require.NoError(t, err)
		if attempt == 2 {
			break
		}
		require.Less(t, time.Since(start), 2*time.Minute, "the held partition was not handed back")
		time.Sleep(20 * time.Millisecond) // poll interval of an eventual check
	}
	j := c.waitJob(job, jobstore.StateDone, jobstore.StateFailed)
	requireValidProof(t, doc, j)
	require.Empty(t, j.LastError, "a handed-back partition is no failure")
}
