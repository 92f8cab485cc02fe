package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// TestProveWithTwoWorkers: a 3-partition job proved by two workers (their
// own slots, ids and keys) comes back done with a proof that verifies
// independently, and every span of the job shares one trace.
func TestProveWithTwoWorkers(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := telemetry.Setup(context.Background(), telemetry.TracingConfig{ServiceName: "c2-test", Exporter: exp, SyncExport: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, tr.Shutdown(context.Background())) }()

	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	w1, w2 := c.newWorker("w1"), c.newWorker("w2")
	// Each worker's first partition waits until the other has one too, so
	// both take part (two separate consumers of the same lane).
	started1, started2 := make(chan struct{}), make(chan struct{})
	var once1, once2 sync.Once
	w1.delay = func(*c2clusterv1.PartitionTask) {
		once1.Do(func() { close(started1) })
		<-started2
	}
	w2.delay = func(*c2clusterv1.PartitionTask) {
		once2.Do(func() { close(started2) })
		<-started1
	}
	w1.run(1)
	w2.run(1)

	doc := poreptest.SealedSectorC1(t, testShape, 1, 1000, 42)
	var progress []string
	st, err := co.client.Prove(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc, Shape: testShape,
		Sector: &c2clusterv1.SectorRef{MinerId: u64(1000), SectorNumber: u64(42)}}, func(j *c2clusterv1.JobStatus) {
		progress = append(progress, client.ProgressLine(j))
	})
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, st.State)
	require.EqualValues(t, 3, st.Partitions)
	require.EqualValues(t, 3, st.PartitionsDone)
	require.Len(t, st.Proof, 3*192)
	verifyIndependently(t, doc, st.Proof)
	require.EqualValues(t, 1000, st.Sector.GetMinerId())
	require.EqualValues(t, 42, st.Sector.GetSectorNumber())
	require.Greater(t, st.Timings.SynthesisMs, 0.0)
	require.Greater(t, st.Timings.ProveMs, 0.0)
	require.Greater(t, st.Timings.AssembleMs, 0.0)
	require.GreaterOrEqual(t, st.Timings.TotalMs, st.Timings.AssembleMs)
	require.NotEmpty(t, progress)
	require.Contains(t, progress[len(progress)-1], "done")
	require.Equal(t, 3, w1.provedCount()+w2.provedCount())
	require.Positive(t, w1.provedCount())
	require.Positive(t, w2.provedCount())

	// Trace shape: submit → job → publish partition ×3 → partition ×3 →
	// synthesize/gpu.compute/verify; assemble under job. One trace id.
	// The assemble span ends after the job is recorded done, which is what
	// the client saw: wait for it to be exported.
	require.NotEmpty(t, st.TraceId)
	want := map[string]int{
		telemetry.SpanSubmit: 1, telemetry.SpanJob: 1, telemetry.SpanPublish: 3, telemetry.SpanPartition: 3,
		telemetry.SpanSynthesize: 3, telemetry.SpanGPUCompute: 3, telemetry.SpanVerify: 3, telemetry.SpanAssemble: 1,
	}
	count := map[string]int{}
	spansOfJob := func() bool {
		count = map[string]int{}
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() == st.TraceId {
				count[s.Name]++
			}
		}
		return count[telemetry.SpanAssemble] > 0
	}
	require.Eventually(t, spansOfJob, 30*time.Second, 10*time.Millisecond, "the assemble span of trace %s", st.TraceId)
	require.Equal(t, want, count)

	// Status shows the finished job; the queue is empty.
	status, err := co.client.Status(c.ctx, st.JobId)
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, status.Job.State)
	require.Eventually(t, func() bool { // the last partition's ack may trail the assembly
		status, err := co.client.Status(c.ctx, "")
		return err == nil && len(status.Queue) == 0
	}, 30*time.Second, 20*time.Millisecond)
	jobs, err := co.client.List(c.ctx, c2clusterv1.JobState_JOB_STATE_DONE, 10)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Nil(t, jobs[0].Proof, "lists leave proofs out")
}

// TestIdempotentResubmit: the same idempotency key returns the same job and
// queues nothing more.
func TestIdempotentResubmit(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	params(t)
	doc := sealedC1(t, 2)
	req := &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: "sector-42-attempt-1", Priority: c2clusterv1.Priority_PRIORITY_HIGH}
	first, err := co.client.Submit(c.ctx, req)
	require.NoError(t, err)
	require.False(t, first.Deduplicated)
	require.Equal(t, testShape, first.Shape)
	require.EqualValues(t, 3, first.Partitions)
	got, err := co.client.Status(c.ctx, first.JobId)
	require.NoError(t, err)
	require.Nil(t, got.Job.Sector, "no sector given, none recorded")
	again, err := co.grpc.Submit(c.ctx, req) // same service over gRPC
	require.NoError(t, err)
	require.True(t, again.Deduplicated)
	require.Equal(t, first.JobId, again.JobId)
	// A different key is a different job.
	other, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: "other"})
	require.NoError(t, err)
	require.NotEqual(t, first.JobId, other.JobId)

	depth, err := c.q.Depth(c.ctx)
	require.NoError(t, err)
	require.Equal(t, []queue.LaneDepth{{Shape: testShape, Lane: "high", Pending: 3}, {Shape: testShape, Lane: "normal", Pending: 3}}, depth)
	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, jobs, 2)

	// Status: queue depth per lane and the worker registry.
	require.NoError(t, c.store.Heartbeat(c.ctx, jobstore.Worker{ID: "gpu-host-1", Host: "gpu-host", Devices: []string{"cuda:0", "cuda:1"},
		Slots: 4, Resident: []jobstore.Resident{{Shape: testShape, Residency: "device"}}, Current: []string{queue.MsgID(first.JobId, 0)}}))
	status, err := co.client.Status(c.ctx, "")
	require.NoError(t, err)
	require.Nil(t, status.Job)
	require.Len(t, status.Queue, 2)
	require.Equal(t, "high", status.Queue[0].Lane)
	require.Len(t, status.Workers, 1)
	require.Equal(t, []string{"cuda:0", "cuda:1"}, status.Workers[0].Devices)
	require.Equal(t, "device", status.Workers[0].Resident[0].Residency)
	require.Equal(t, []string{first.JobId + ".0"}, status.Workers[0].Current)
}

// TestBadC1RejectedAtSubmit: malformed, wrong shape, tampered and
// oversized C1 outputs are refused with a clear error and nothing is queued
// or recorded.
func TestBadC1RejectedAtSubmit(t *testing.T) {
	c := newCluster(t, queue.Config{})
	params(t)
	co := c.startCoordinator(server.Config{MaxC1Bytes: 1 << 20})
	doc := sealedC1(t, 3)

	tampered := tamperC1(t, doc)
	cases := []struct {
		name string
		req  *c2clusterv1.SubmitRequest
		want string
	}{
		{"malformed JSON", &c2clusterv1.SubmitRequest{C1Json: doc[:len(doc)/2]}, "invalid C1 output"},
		{"not JSON", &c2clusterv1.SubmitRequest{C1Json: []byte("hello")}, "invalid C1 output"},
		{"empty", &c2clusterv1.SubmitRequest{}, "c1_json is empty"},
		{"wrong shape", &c2clusterv1.SubmitRequest{C1Json: doc, Shape: "32GiB"}, `says shape "32GiB" but the C1 output is of shape "test-mini"`},
		{"tampered vanilla proof", &c2clusterv1.SubmitRequest{C1Json: tampered, VerifyVanilla: true}, "vanilla proof check"},
		{"oversized", &c2clusterv1.SubmitRequest{C1Json: make([]byte, 1<<20+1)}, "exceeds the limit"},
	}
	for _, tc := range cases {
		_, err := co.client.Submit(c.ctx, tc.req)
		require.Error(t, err, tc.name)
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%s: %v", tc.name, err)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	depth, err := c.q.Depth(c.ctx)
	require.NoError(t, err)
	require.Empty(t, depth, "nothing queued")
	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, jobs, "nothing recorded")
	// The tampered document is accepted without the vanilla check (it is
	// structurally fine): the check is what catches it.
	_, err = co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: tampered})
	require.NoError(t, err)
}

// tamperC1 flips one byte of a label column value: structure intact, the
// vanilla proof wrong.
func tamperC1(t *testing.T, doc []byte) []byte {
	t.Helper()
	s := string(doc)
	i := strings.Index(s, `"rows":[[`)
	require.Positive(t, i, "C1 has column rows")
	j := i + len(`"rows":[[`)
	k := strings.IndexAny(s[j:], ",]")
	n := s[j : j+k]
	alt := "1"
	if n == "1" {
		alt = "2"
	}
	return []byte(s[:j] + alt + s[j+k:])
}

// TestDeadLetterFailsOnlyItsJob: a partition that always fails exhausts
// MaxDeliver; its job fails with the last error while a concurrent job
// completes.
func TestDeadLetterFailsOnlyItsJob(t *testing.T) {
	c := newCluster(t, queue.Config{MaxDeliver: 2, NakDelay: 50 * time.Millisecond})
	co := c.startCoordinator(server.Config{})
	w := c.newWorker("w")
	good, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, 4)})
	require.NoError(t, err)
	bad, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, 5)})
	require.NoError(t, err)
	w.fail = func(task *c2clusterv1.PartitionTask) error {
		if task.JobId == bad.JobId && task.Partition == 1 {
			return fmt.Errorf("GPU fell off the bus")
		}
		return nil
	}
	w.run(1)

	st, err := co.client.Await(c.ctx, bad.JobId)
	require.ErrorIs(t, err, client.ErrJobFailed)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_FAILED, st.State)
	require.Contains(t, st.Reason, "partition 1 failed after 2 deliveries")
	require.Contains(t, st.Reason, "GPU fell off the bus")

	st, err = co.client.Await(c.ctx, good.JobId)
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, st.State)
}

// TestTerminatedPartitionFailsJob: a worker that finds the input bad
// terminates the task; the job fails at once with the worker's reason.
func TestTerminatedPartitionFailsJob(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	w := c.newWorker("w")
	w.fail = func(task *c2clusterv1.PartitionTask) error {
		return queue.Permanent(fmt.Errorf("partition %d: circuit unsatisfied", task.Partition))
	}
	w.run(1)
	sub, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, 6)})
	require.NoError(t, err)
	st, err := co.client.Await(c.ctx, sub.JobId)
	require.ErrorIs(t, err, client.ErrJobFailed)
	require.Contains(t, st.Reason, "rejected by a worker: bad input: partition")
	require.Contains(t, st.Reason, "circuit unsatisfied")
}

// TestCoordinatorRestartMidJob: the coordinator stops after accepting a
// job; workers prove every partition meanwhile (the assembly request waits
// in JetStream); a new coordinator finishes the job.
func TestCoordinatorRestartMidJob(t *testing.T) {
	c := newCluster(t, queue.Config{})
	first := c.startCoordinator(server.Config{})
	doc := sealedC1(t, 7)
	sub, err := first.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(t, err)
	first.Stop()

	c.newWorker("w").run(1)
	waitState(t, c, sub.JobId, jobstore.StateAssembling)

	second := c.startCoordinator(server.Config{})
	st, err := second.client.Await(c.ctx, sub.JobId)
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, st.State)
	verifyIndependently(t, doc, st.Proof)
}

// TestHalfSubmittedJobRepublishedOnRestart: a coordinator that died after
// recording a job but before publishing its tasks leaves it queued with
// nothing published; the next coordinator publishes them.
func TestHalfSubmittedJobRepublishedOnRestart(t *testing.T) {
	c := newCluster(t, queue.Config{})
	params(t)
	doc := sealedC1(t, 8)
	blob, err := c.q.PutBlob(c.ctx, "halfjob", doc)
	require.NoError(t, err)
	_, err = c.store.Create(c.ctx, jobstore.NewJob{ID: "halfjob", Shape: testShape, Lane: "low", Partitions: 3,
		BlobRef: blob.Name, BlobSize: blob.Size, BlobSHA256: blob.SHA256[:]})
	require.NoError(t, err)
	c.startCoordinator(server.Config{})
	depth, err := c.q.Depth(c.ctx)
	require.NoError(t, err)
	require.Equal(t, []queue.LaneDepth{{Shape: testShape, Lane: "low", Pending: 3}}, depth)
	j, err := c.store.Get(c.ctx, "halfjob")
	require.NoError(t, err)
	require.Equal(t, 3, j.Published)
}

// TestCancel: pending partitions are removed from the queue and the blob is
// deleted; a worker starting later proves nothing of the job.
func TestCancel(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	params(t)
	sub, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, 9)})
	require.NoError(t, err)
	st, err := co.client.Cancel(c.ctx, sub.JobId, "operator changed their mind")
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_CANCELLED, st.State)
	require.Equal(t, "operator changed their mind", st.Reason)
	depth, err := c.q.Depth(c.ctx)
	require.NoError(t, err)
	require.Empty(t, depth)
	_, err = c.q.GetBlob(c.ctx, sub.JobId, nil)
	require.ErrorIs(t, err, queue.ErrBlobNotFound)
	_, err = co.client.Cancel(c.ctx, sub.JobId, "again")
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	_, err = co.client.Cancel(c.ctx, "nosuchjob", "")
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))

	// In flight: a worker that already holds a partition is told the job
	// is closed at its next stage boundary.
	out, state, err := c.store.Begin(c.ctx, sub.JobId, 0, 1, "late-worker")
	require.NoError(t, err)
	require.Equal(t, jobstore.BeginClosed, out)
	require.Equal(t, jobstore.StateCancelled, state)
	st2, err := co.client.Await(c.ctx, sub.JobId)
	require.True(t, errors.Is(err, client.ErrJobFailed))
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_CANCELLED, st2.State)
}

// TestPriorityLanesAcrossJobs: with no worker running, a low, a normal and
// a high priority job are queued in that order; one slot then begins every
// high partition before any normal one, and normal before low.
func TestPriorityLanesAcrossJobs(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	params(t)
	ids := map[string]string{}
	for i, p := range []c2clusterv1.Priority{c2clusterv1.Priority_PRIORITY_LOW, c2clusterv1.Priority_PRIORITY_NORMAL, c2clusterv1.Priority_PRIORITY_HIGH} {
		sub, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, uint64(20+i)), Priority: p})
		require.NoError(t, err)
		ids[sub.JobId] = strings.ToLower(strings.TrimPrefix(p.String(), "PRIORITY_"))
	}
	var mu sync.Mutex
	var order []string
	all := make(chan struct{})
	slot, err := c.q.NewSlot(queue.SlotConfig{Name: "s", Shapes: []string{testShape}, Handler: func(_ context.Context, d *queue.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, ids[d.Task.JobId])
		if len(order) == 9 {
			close(all)
		}
		return nil
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan error, 1)
	go func() { done <- slot.Run(ctx) }()
	select {
	case <-all:
	case <-time.After(time.Minute):
		t.Fatal("not every partition was delivered")
	}
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, []string{"high", "high", "high", "normal", "normal", "normal", "low", "low", "low"}, order)
}

func u64(v uint64) *uint64 { return &v }

// TestSectorAndEnvelopeAtSubmit: lotus-bench's Commit2In envelope is
// accepted as the C1 output (its sector and miner become the job's), a
// sector that is not the C1 output's replica is refused naming the field,
// and a refused request queues nothing.
func TestSectorAndEnvelopeAtSubmit(t *testing.T) {
	c := newCluster(t, queue.Config{})
	params(t)
	co := c.startCoordinator(server.Config{})
	w := c.newWorker("w")
	w.run(1)
	shape, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	size := shape.SectorSize()
	doc := poreptest.SealedSectorC1(t, testShape, 5, 1000, 42)

	cases := []struct {
		name string
		req  *c2clusterv1.SubmitRequest
		want string
	}{
		{"wrong sector", &c2clusterv1.SubmitRequest{C1Json: doc, Sector: &c2clusterv1.SectorRef{MinerId: u64(1000), SectorNumber: u64(43)}}, "not the replica id of miner 1000, sector 43"},
		{"wrong miner", &c2clusterv1.SubmitRequest{C1Json: doc, Sector: &c2clusterv1.SectorRef{MinerId: u64(1001), SectorNumber: u64(42)}}, "not the replica id of miner 1001, sector 42"},
		{"envelope of another sector", &c2clusterv1.SubmitRequest{C1Json: poreptest.Commit2In(t, doc, 41, size, "f01000")}, "sector 41"},
		{"envelope and request disagree", &c2clusterv1.SubmitRequest{C1Json: poreptest.Commit2In(t, doc, 42, size, "f01000"),
			Sector: &c2clusterv1.SectorRef{SectorNumber: u64(7)}}, "sector_number 7, but the Commit2In envelope's SectorNum is 42"},
		{"envelope miner disagrees", &c2clusterv1.SubmitRequest{C1Json: poreptest.Commit2In(t, doc, 42, size, "f01000"),
			Sector: &c2clusterv1.SectorRef{MinerId: u64(9)}}, "miner_id 9, but the Commit2In envelope's Miner is f01000"},
		{"envelope sector size", &c2clusterv1.SubmitRequest{C1Json: poreptest.Commit2In(t, doc, 42, 2*size, "")}, "SectorSize"},
		{"envelope bad miner", &c2clusterv1.SubmitRequest{C1Json: poreptest.Commit2In(t, doc, 42, size, "f3abc")}, "Miner"},
		{"envelope without Phase1Out", &c2clusterv1.SubmitRequest{C1Json: []byte(`{"SectorNum":42,"SectorSize":2048}`)}, "Phase1Out"},
		{"envelope bad base64", &c2clusterv1.SubmitRequest{C1Json: []byte(`{"SectorNum":42,"Phase1Out":"eyJ!!","SectorSize":2048}`)}, "Phase1Out: Commit2In envelope: not base64"},
		{"envelope unknown proof kind", &c2clusterv1.SubmitRequest{C1Json: poreptest.Commit2In(t,
			bytes.Replace(doc, []byte(`"`+shape.RegisteredProof+`"`), []byte(`"StackedDrg16GiBV1_1"`), 1), 42, size, "")}, "StackedDrg16GiBV1_1"},
	}
	for _, tc := range cases {
		_, err := co.client.Submit(c.ctx, tc.req)
		require.Error(t, err, tc.name)
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%s: %v", tc.name, err)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	depth, err := c.q.Depth(c.ctx)
	require.NoError(t, err)
	require.Empty(t, depth, "nothing queued")
	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, jobs, "nothing recorded")

	// The envelope as Lotus writes it (no Miner) with the miner given
	// beside it, through gRPC and again through plain HTTP/JSON (as curl
	// sends it): one job (the idempotency key) that completes with a proof
	// that verifies, and names the sector.
	env := poreptest.Commit2In(t, doc, 42, size, "")
	req := &c2clusterv1.SubmitRequest{C1Json: env, Sector: &c2clusterv1.SectorRef{MinerId: u64(1000)}, IdempotencyKey: "door"}
	viaGRPC, err := co.grpc.Submit(c.ctx, req)
	require.NoError(t, err)
	body, err := protojson.Marshal(req)
	require.NoError(t, err)
	hres, err := http.Post(co.http.URL+"/c2cluster.v1.ProofService/Submit", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer hres.Body.Close()
	rb, err := io.ReadAll(hres.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, hres.StatusCode, string(rb))
	var viaJSON c2clusterv1.SubmitResponse
	require.NoError(t, protojson.Unmarshal(rb, &viaJSON))
	require.Equal(t, viaGRPC.JobId, viaJSON.JobId)
	require.True(t, viaJSON.Deduplicated)
	st, err := co.client.Await(c.ctx, viaGRPC.JobId)
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, st.State, st.Reason)
	verifyIndependently(t, doc, st.Proof)
	require.EqualValues(t, 1000, st.Sector.GetMinerId())
	require.EqualValues(t, 42, st.Sector.GetSectorNumber())
}
