package cuzk_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/c2cluster/c2cluster/coordinator/cuzk"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
	"github.com/c2cluster/c2cluster/worker/node"
)

// TestCurioProvesThroughTheCoordinator drives the coordinator's cuzk API
// with a grpc-go client dialled as Curio's is, over TCP and over the unix
// socket, with a real CPU worker: status and parameters, a sector submitted
// in the Commit2In envelope and awaited, a sector proved with Prove from
// the raw C1 output as Curio's PoRepSnarkCuzk sends it; both proofs verify
// independently; resubmissions find their jobs again; totals and metrics
// count them.
func TestCurioProvesThroughTheCoordinator(t *testing.T) {
	c := newCluster(t)
	c.startWorker(workerConfig("w1"))
	tcp := dial(t, c.tcp)
	unix := dial(t, "unix://"+c.sock)
	s := shape(t)

	// The worker's device, the parameters it holds, empty queues — over
	// both transports.
	for name, cl := range map[string]cuzkv1.ProvingEngineClient{"tcp": tcp, "unix": unix} {
		var st *cuzkv1.GetStatusResponse
		require.Eventually(t, func() bool {
			var err error
			st, err = cl.GetStatus(c.ctx, &cuzkv1.GetStatusRequest{})
			require.NoError(t, err, name)
			return len(st.Gpus) > 0
		}, 30*time.Second, 20*time.Millisecond, "%s: the worker never showed up", name)
		require.Len(t, st.Gpus, 1, name)
		require.Equal(t, "w1/cpu0", st.Gpus[0].Name, name)
		require.Zero(t, st.Gpus[0].Ordinal, name)
		require.Empty(t, st.Gpus[0].CurrentJobId, name)
		require.Len(t, st.LoadedSrs, 1, name)
		require.Equal(t, "porep-test-micro", st.LoadedSrs[0].CircuitId, name)
		require.Len(t, st.Queues, 1, name)
		require.Equal(t, &cuzkv1.QueueStatus{ProofKind: "POREP_SEAL_COMMIT"}, dropState(st.Queues[0]), name)
		require.Zero(t, st.TotalProofsCompleted, name)
	}

	// gRPC server reflection names the service (what grpcurl reads).
	conn, err := grpc.NewClient("unix://"+c.sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	refl, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(c.ctx)
	require.NoError(t, err)
	require.NoError(t, refl.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}))
	listed, err := refl.Recv()
	require.NoError(t, err)
	require.NoError(t, refl.CloseSend())
	var services []string
	for _, svc := range listed.GetListServicesResponse().GetService() {
		services = append(services, svc.Name)
	}
	require.Equal(t, []string{"cuzk.v1.ProvingEngine"}, services)

	// PreloadSRS reports residency; EvictSRS is a no-op and says so.
	var hdr metadata.MD
	pre, err := tcp.PreloadSRS(c.ctx, &cuzkv1.PreloadSrsRequest{CircuitId: "porep-test-micro"}, grpc.Header(&hdr))
	require.NoError(t, err)
	require.True(t, pre.AlreadyLoaded)
	require.Contains(t, strings.Join(hdr.Get(cuzk.NoteHeader), ""), "resident")
	pre, err = tcp.PreloadSRS(c.ctx, &cuzkv1.PreloadSrsRequest{CircuitId: "porep-32g"}, grpc.Header(&hdr))
	require.NoError(t, err)
	require.False(t, pre.AlreadyLoaded)
	require.Contains(t, strings.Join(hdr.Get(cuzk.NoteHeader), ""), "no registered worker proves porep-32g (32GiB)")
	ev, err := tcp.EvictSRS(c.ctx, &cuzkv1.EvictSrsRequest{CircuitId: "porep-test-micro"}, grpc.Header(&hdr))
	require.NoError(t, err)
	require.False(t, ev.WasLoaded)
	require.Zero(t, ev.FreedBytes)
	require.Contains(t, strings.Join(hdr.Get(cuzk.NoteHeader), ""), "no-op")
	_, err = tcp.PreloadSRS(c.ctx, &cuzkv1.PreloadSrsRequest{CircuitId: "wpost-32g"})
	requireCode(t, err, codes.Unimplemented, `"wpost-32g"`, "PoRep C2 only")
	_, err = tcp.EvictSRS(c.ctx, &cuzkv1.EvictSrsRequest{CircuitId: "porep-7t"})
	requireCode(t, err, codes.InvalidArgument, `unknown circuit_id "porep-7t"`, "porep-32g")

	// Sector 7 in the Commit2In envelope: SubmitProof, then AwaitProof.
	docA := sealedC1(t, testMiner, 7, 1)
	reqA := porepRequest(t, envelope(t, docA, 7, s.SectorSize(), "f01000"), 7)
	reqA.Priority = cuzkv1.Priority_CRITICAL
	subA, err := tcp.SubmitProof(c.ctx, reqA)
	require.NoError(t, err)
	require.NotEmpty(t, subA.JobId)
	again, err := unix.SubmitProof(c.ctx, reqA)
	require.NoError(t, err)
	require.Equal(t, subA.JobId, again.JobId, "the same request_id and C1 output find the same job")
	jobA := c.job(subA.JobId)
	require.Equal(t, c2clusterv1.Priority_PRIORITY_HIGH, jobA.Priority, "CRITICAL is the high lane")
	require.EqualValues(t, testMiner, jobA.GetSector().GetMinerId())
	require.EqualValues(t, 7, jobA.GetSector().GetSectorNumber())

	resA, err := tcp.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{JobId: subA.JobId})
	require.NoError(t, err)
	require.Equal(t, cuzkv1.AwaitProofResponse_COMPLETED, resA.Status, resA.ErrorMessage)
	require.Equal(t, subA.JobId, resA.JobId)
	require.Len(t, resA.Proof, s.Partitions*192)
	verifyIndependently(t, docA, resA.Proof)
	require.Positive(t, resA.TotalMs)
	require.GreaterOrEqual(t, resA.TotalMs, resA.QueueWaitMs)
	require.Zero(t, resA.SrsLoadMs)
	final := c.job(subA.JobId)
	require.EqualValues(t, msRound(final.Timings.SynthesisMs), resA.SynthesisMs)
	require.EqualValues(t, msRound(final.Timings.ProveMs), resA.GpuComputeMs)
	require.Positive(t, resA.SynthesisMs+resA.GpuComputeMs)

	// Sector 8 the way Curio proves: Prove with the raw C1 output, over the
	// unix socket, with Curio's ProveTimeout as the deadline.
	docB := sealedC1(t, testMiner, 8, 2)
	pctx, cancel := context.WithTimeout(c.ctx, 3*time.Minute)
	defer cancel()
	resB, err := unix.Prove(pctx, &cuzkv1.ProveRequest{Submit: porepRequest(t, docB, 8)})
	require.NoError(t, err)
	require.Equal(t, cuzkv1.AwaitProofResponse_COMPLETED, resB.Result.Status, resB.Result.ErrorMessage)
	verifyIndependently(t, docB, resB.Result.Proof)
	require.Equal(t, c2clusterv1.Priority_PRIORITY_NORMAL, c.job(resB.Result.JobId).Priority)

	// A finished job is found again, with its proof.
	again, err = tcp.SubmitProof(c.ctx, reqA)
	require.NoError(t, err)
	require.Equal(t, subA.JobId, again.JobId)
	resA2, err := tcp.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{JobId: again.JobId, TimeoutMs: 1000})
	require.NoError(t, err)
	require.Equal(t, cuzkv1.AwaitProofResponse_COMPLETED, resA2.Status)
	require.Equal(t, resA.Proof, resA2.Proof)
	require.Len(t, c.jobs(), 2, "resubmissions queued nothing")

	st, err := unix.GetStatus(c.ctx, &cuzkv1.GetStatusRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 2, st.TotalProofsCompleted)
	require.Zero(t, st.TotalProofsFailed)
	m, err := tcp.GetMetrics(c.ctx, &cuzkv1.GetMetricsRequest{})
	require.NoError(t, err)
	require.Contains(t, m.PrometheusText, `c2_proofs_total{kind="job",shape="test-micro"} 2`)
	require.Contains(t, m.PrometheusText, "# TYPE c2_submits_total counter")
}

func dropState(q *cuzkv1.QueueStatus) *cuzkv1.QueueStatus {
	return &cuzkv1.QueueStatus{ProofKind: q.ProofKind, Pending: q.Pending, InProgress: q.InProgress}
}

func msRound(ms float64) uint64 { return uint64(ms + 0.5) }

// TestCancelProof: a job a worker has started and a queued one are
// cancelled (was_running tells them apart), AwaitProof reports them
// cancelled, GetStatus shows the running job on the device and the queued
// one in the queue; resubmitting the cancelled request starts a new job,
// which is proved; a done job cannot be cancelled.
func TestCancelProof(t *testing.T) {
	c := newCluster(t)
	// The worker's one slot holds the first job of sector 21 (A) after
	// Begin (the job is proving) until released; later jobs of the sector
	// go through.
	var (
		mu      sync.Mutex
		heldJob string
		started = make(chan string, 16)
		release = make(chan struct{})
	)
	cfg := workerConfig("w1")
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage != node.StageInput {
			return nil
		}
		j, err := c.store.Get(ctx, d.Task.JobId)
		if err != nil {
			return err
		}
		mu.Lock()
		if heldJob == "" && j.Sector.Number != nil && *j.Sector.Number == 21 {
			heldJob = j.ID
		}
		held := heldJob == j.ID
		mu.Unlock()
		if !held {
			return nil
		}
		started <- d.Task.JobId
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.startWorker(cfg)
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseAll) // before the worker stops
	cl := dial(t, c.tcp)

	docA := sealedC1(t, testMiner, 21, 3)
	reqA := porepRequest(t, docA, 21)
	sub, err := cl.SubmitProof(c.ctx, reqA)
	require.NoError(t, err)
	subA := sub.JobId
	select {
	case got := <-started:
		require.Equal(t, subA, got)
	case <-time.After(time.Minute):
		t.Fatal("the worker never started job A")
	}
	c.waitState(subA, c2clusterv1.JobState_JOB_STATE_PROVING)

	subB, err := cl.SubmitProof(c.ctx, porepRequest(t, sealedC1(t, testMiner, 22, 4), 22))
	require.NoError(t, err)
	// The device shows A (the worker reports it at its next heartbeat);
	// the queue A's second partition and B's two (three tasks: two proofs
	// rounded up) waiting, A's first in flight.
	var st *cuzkv1.GetStatusResponse
	require.Eventually(t, func() bool {
		st, err = cl.GetStatus(c.ctx, &cuzkv1.GetStatusRequest{})
		require.NoError(t, err)
		return st.Gpus[0].CurrentJobId != "" && st.Queues[0].Pending == 2 && st.Queues[0].InProgress == 1
	}, 30*time.Second, 20*time.Millisecond, "status: %v", func() any { return st }())
	require.Equal(t, subA, st.Gpus[0].CurrentJobId)
	require.Equal(t, "POREP_SEAL_COMMIT", st.Gpus[0].CurrentProofKind)

	canB, err := cl.CancelProof(c.ctx, &cuzkv1.CancelProofRequest{JobId: subB.JobId})
	require.NoError(t, err)
	require.False(t, canB.WasRunning, "B was queued")
	canA, err := cl.CancelProof(c.ctx, &cuzkv1.CancelProofRequest{JobId: subA})
	require.NoError(t, err)
	require.True(t, canA.WasRunning, "a worker had started A")
	for _, id := range []string{subA, subB.JobId} {
		res, err := cl.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{JobId: id, TimeoutMs: 10_000})
		require.NoError(t, err)
		require.Equal(t, cuzkv1.AwaitProofResponse_CANCELLED, res.Status)
		require.Contains(t, res.ErrorMessage, "CancelProof")
		require.Empty(t, res.Proof)
	}
	again, err := cl.CancelProof(c.ctx, &cuzkv1.CancelProofRequest{JobId: subA})
	require.NoError(t, err)
	require.False(t, again.WasRunning, "cancelling a cancelled job is a no-op")
	_, err = cl.CancelProof(c.ctx, &cuzkv1.CancelProofRequest{JobId: "0123456789abcdef0123456789abcdef"})
	requireCode(t, err, codes.NotFound, "0123456789abcdef0123456789abcdef")

	// Curio retries the sector with the same request_id: a new job, proved
	// once the worker lets go of A (whose partition it drops).
	retry, err := cl.SubmitProof(c.ctx, reqA)
	require.NoError(t, err)
	require.NotEqual(t, subA, retry.JobId)
	releaseAll()
	res, err := cl.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{JobId: retry.JobId})
	require.NoError(t, err)
	require.Equal(t, cuzkv1.AwaitProofResponse_COMPLETED, res.Status, res.ErrorMessage)
	verifyIndependently(t, docA, res.Proof)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_CANCELLED, c.job(subA).State)
	require.Empty(t, c.job(subA).Proof)

	_, err = cl.CancelProof(c.ctx, &cuzkv1.CancelProofRequest{JobId: retry.JobId})
	requireCode(t, err, codes.FailedPrecondition, retry.JobId, "already done")
	again2, err := cl.SubmitProof(c.ctx, reqA)
	require.NoError(t, err)
	require.Equal(t, retry.JobId, again2.JobId, "the done retry is the request's job now")
	st, err = cl.GetStatus(c.ctx, &cuzkv1.GetStatusRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 1, st.TotalProofsCompleted)
	require.Zero(t, st.TotalProofsFailed, "cancellations are not failures")
}

// TestSubmitProofRefusals: requests the engine or the coordinator refuse,
// each with the gRPC code and a message naming the problem; none queues
// anything.
func TestSubmitProofRefusals(t *testing.T) {
	c := newCluster(t)
	cl := dial(t, c.tcp)
	s := shape(t)
	doc := sealedC1(t, testMiner, 5, 5)

	with := func(f func(r *cuzkv1.SubmitProofRequest)) *cuzkv1.SubmitProofRequest {
		r := porepRequest(t, doc, 5)
		f(r)
		return r
	}
	cases := []struct {
		name  string
		req   *cuzkv1.SubmitProofRequest
		code  codes.Code
		parts []string
	}{
		{"sector size", with(func(r *cuzkv1.SubmitProofRequest) { r.SectorSize = 2048 }), codes.InvalidArgument,
			[]string{"sector_size 2048", fmt.Sprintf("registered_proof %d", s.ProofID), "C2ClusterTest/test-micro", fmt.Sprintf("sector_size %d", s.SectorSize())}},
		{"registered proof", with(func(r *cuzkv1.SubmitProofRequest) { r.RegisteredProof = 8 }), codes.InvalidArgument,
			[]string{"registered_proof 8 (StackedDrg32GiBV1_1)", "sector_size"}},
		{"envelope sector size", with(func(r *cuzkv1.SubmitProofRequest) {
			r.VanillaProof, r.SectorSize, r.RegisteredProof = envelope(t, doc, 5, 34359738368, ""), 0, 0
		}), codes.InvalidArgument, []string{"SectorSize", "34359738368"}},
		{"envelope sector number", with(func(r *cuzkv1.SubmitProofRequest) { r.VanillaProof = envelope(t, doc, 6, s.SectorSize(), "") }),
			codes.InvalidArgument, []string{"sector_number 5", "SectorNum is 6"}},
		{"other miner", with(func(r *cuzkv1.SubmitProofRequest) { r.MinerId = 1001 }), codes.InvalidArgument,
			[]string{"replica_id", "miner 1001, sector 5"}},
		{"other sector", with(func(r *cuzkv1.SubmitProofRequest) { r.SectorNumber = 6 }), codes.InvalidArgument,
			[]string{"replica_id", "miner 1000, sector 6"}},
		{"malformed", with(func(r *cuzkv1.SubmitProofRequest) { r.VanillaProof = []byte(`{"registered_proof": 7,`) }),
			codes.InvalidArgument, []string{"invalid C1 output"}},
		{"not json", with(func(r *cuzkv1.SubmitProofRequest) { r.VanillaProof = []byte("sealed sector 5") }),
			codes.InvalidArgument, []string{"invalid C1 output"}},
		{"empty", with(func(r *cuzkv1.SubmitProofRequest) { r.VanillaProof = nil }), codes.InvalidArgument,
			[]string{"vanilla_proof is empty"}},
		{"vanilla_proofs", with(func(r *cuzkv1.SubmitProofRequest) { r.VanillaProofs = [][]byte{doc} }), codes.InvalidArgument,
			[]string{"vanilla_proofs has 1 entries"}},
		{"priority", with(func(r *cuzkv1.SubmitProofRequest) { r.Priority = 9 }), codes.InvalidArgument,
			[]string{"priority 9"}},
		{"unknown kind", with(func(r *cuzkv1.SubmitProofRequest) { r.ProofKind = 42 }), codes.InvalidArgument,
			[]string{"proof_kind 42"}},
	}
	for _, k := range []cuzkv1.ProofKind{cuzkv1.ProofKind_PROOF_KIND_UNSPECIFIED, cuzkv1.ProofKind_SNAP_DEALS_UPDATE,
		cuzkv1.ProofKind_WINDOW_POST_PARTITION, cuzkv1.ProofKind_WINNING_POST} {
		cases = append(cases, struct {
			name  string
			req   *cuzkv1.SubmitProofRequest
			code  codes.Code
			parts []string
		}{k.String(), with(func(r *cuzkv1.SubmitProofRequest) { r.ProofKind = k }), codes.Unimplemented,
			[]string{"proof_kind " + k.String() + " is not implemented", "POREP_SEAL_COMMIT"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cl.SubmitProof(c.ctx, tc.req)
			requireCode(t, err, tc.code, tc.parts...)
			_, err = cl.Prove(c.ctx, &cuzkv1.ProveRequest{Submit: tc.req})
			requireCode(t, err, tc.code, tc.parts...)
		})
	}
	_, err := cl.Prove(c.ctx, &cuzkv1.ProveRequest{})
	requireCode(t, err, codes.InvalidArgument, "submit is missing")
	_, err = cl.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{})
	requireCode(t, err, codes.InvalidArgument, "job_id is empty")
	_, err = cl.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{JobId: "0123456789abcdef0123456789abcdef", TimeoutMs: 1000})
	requireCode(t, err, codes.NotFound, "0123456789abcdef0123456789abcdef")

	require.Empty(t, c.jobs(), "nothing was queued")
	st, err := cl.GetStatus(c.ctx, &cuzkv1.GetStatusRequest{})
	require.NoError(t, err)
	require.Empty(t, st.Gpus, "no worker")
	require.Equal(t, &cuzkv1.QueueStatus{ProofKind: "POREP_SEAL_COMMIT"}, dropState(st.Queues[0]))

	// The same request, correct, is accepted; with no worker it times out.
	sub, err := cl.SubmitProof(c.ctx, porepRequest(t, doc, 5))
	require.NoError(t, err)
	res, err := cl.AwaitProof(c.ctx, &cuzkv1.AwaitProofRequest{JobId: sub.JobId, TimeoutMs: 300})
	require.NoError(t, err)
	require.Equal(t, cuzkv1.AwaitProofResponse_TIMEOUT, res.Status)
	require.Contains(t, res.ErrorMessage, "still queued (0 of 2 partitions proved)")
	require.Eventually(t, func() bool {
		st, err := cl.GetStatus(c.ctx, &cuzkv1.GetStatusRequest{})
		require.NoError(t, err)
		return st.Queues[0].Pending == 1 // two partition tasks: one proof
	}, 30*time.Second, 20*time.Millisecond)

	// A caller's deadline ends Prove's wait.
	pctx, cancel := context.WithTimeout(c.ctx, 500*time.Millisecond)
	defer cancel()
	_, err = cl.Prove(pctx, &cuzkv1.ProveRequest{Submit: porepRequest(t, doc, 5)})
	requireCode(t, err, codes.DeadlineExceeded)
	require.Len(t, c.jobs(), 1)
}
