package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// storeError maps job-store errors to connect codes.
func storeError(err error) error {
	switch {
	case errors.Is(err, jobstore.ErrNotFound):
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, jobstore.ErrInvalid):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, jobstore.ErrConflict):
		return connect.NewError(connect.CodeFailedPrecondition, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	}
	return connect.NewError(connect.CodeUnavailable, err)
}

var stateProto = map[jobstore.State]c2clusterv1.JobState{
	jobstore.StateQueued:     c2clusterv1.JobState_JOB_STATE_QUEUED,
	jobstore.StateProving:    c2clusterv1.JobState_JOB_STATE_PROVING,
	jobstore.StateAssembling: c2clusterv1.JobState_JOB_STATE_ASSEMBLING,
	jobstore.StateDone:       c2clusterv1.JobState_JOB_STATE_DONE,
	jobstore.StateFailed:     c2clusterv1.JobState_JOB_STATE_FAILED,
	jobstore.StateCancelled:  c2clusterv1.JobState_JOB_STATE_CANCELLED,
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// JobStatus converts a job record to its API form.
func JobStatus(j *jobstore.Job, now time.Time) *c2clusterv1.JobStatus {
	st := &c2clusterv1.JobStatus{
		JobId: j.ID, State: stateProto[j.State], Shape: j.Shape, Priority: priorityOf(j.Lane),
		Partitions: uint32(j.Partitions), PartitionsDone: uint32(j.Done), Reason: j.Reason,
		Proof:         j.Proof,
		CreatedUnixMs: j.Created.UnixMilli(), UpdatedUnixMs: j.Updated.UnixMilli(),
		Sector: sectorRef(j.Sector),
		Timings: &c2clusterv1.StageTimings{
			QueueWaitMs: ms(j.Timings.QueueWait), SynthesisMs: ms(j.Timings.Synthesis), ProveMs: ms(j.Timings.Prove),
			LockWaitMs: ms(j.Timings.LockWait), VerifyMs: ms(j.Timings.Verify), AssembleMs: ms(j.Timings.Assemble),
			TotalMs: ms(j.Total(now)),
		},
	}
	if j.State == jobstore.StateFailed && st.Reason == "" {
		st.Reason = j.LastError
	}
	if sc := trace.SpanContextFromContext(telemetry.ContextWithTraceParent(context.Background(), j.TraceParent)); sc.IsValid() {
		st.TraceId = sc.TraceID().String()
	}
	return st
}

// await waits until the job is terminal or timeout passes.
func (s *Server) await(ctx context.Context, jobID string, timeout time.Duration) (*c2clusterv1.JobStatus, bool, error) {
	if timeout <= 0 || timeout > s.cfg.AwaitMax {
		timeout = s.cfg.AwaitMax
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *jobstore.Job
	err := s.store.Watch(wctx, jobID, func(j *jobstore.Job) bool {
		last = j
		return j.State.Terminal()
	})
	switch {
	case err == nil:
		return JobStatus(last, time.Now()), false, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && last != nil:
		return JobStatus(last, time.Now()), true, nil
	}
	return nil, false, storeError(err)
}

// Await implements ProofService.Await.
func (s *Server) Await(ctx context.Context, req *connect.Request[c2clusterv1.AwaitRequest]) (*connect.Response[c2clusterv1.AwaitResponse], error) {
	if err := s.checkOwner(ctx, req.Msg.JobId); err != nil {
		return nil, err
	}
	st, timedOut, err := s.await(ctx, req.Msg.JobId, time.Duration(req.Msg.TimeoutMs)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&c2clusterv1.AwaitResponse{Job: st, TimedOut: timedOut}), nil
}

// Watch implements ProofService.Watch.
func (s *Server) Watch(ctx context.Context, req *connect.Request[c2clusterv1.WatchRequest], stream *connect.ServerStream[c2clusterv1.WatchResponse]) error {
	if err := s.checkOwner(ctx, req.Msg.JobId); err != nil {
		return err
	}
	var sendErr error
	err := s.store.Watch(ctx, req.Msg.JobId, func(j *jobstore.Job) bool {
		if sendErr = stream.Send(&c2clusterv1.WatchResponse{Job: JobStatus(j, time.Now())}); sendErr != nil {
			return true
		}
		return j.State.Terminal()
	})
	if sendErr != nil {
		return sendErr
	}
	if err != nil {
		return storeError(err)
	}
	return nil
}

// Prove implements ProofService.Prove (Submit, then Await).
func (s *Server) Prove(ctx context.Context, req *connect.Request[c2clusterv1.ProveRequest]) (*connect.Response[c2clusterv1.ProveResponse], error) {
	if req.Msg.Submit == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("submit is required"))
	}
	sub, err := s.submit(ctx, req.Msg.Submit)
	if err != nil {
		return nil, err
	}
	st, timedOut, err := s.await(ctx, sub.JobId, time.Duration(req.Msg.TimeoutMs)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&c2clusterv1.ProveResponse{Submitted: sub, Job: st, TimedOut: timedOut}), nil
}

// Cancel implements ProofService.Cancel: the job becomes cancelled, its
// pending tasks are deleted from the stream and its blob removed; workers
// drop in-flight partitions at their next stage boundary (Begin/Complete
// report the job closed).
func (s *Server) Cancel(ctx context.Context, req *connect.Request[c2clusterv1.CancelRequest]) (*connect.Response[c2clusterv1.CancelResponse], error) {
	reason := req.Msg.Reason
	if reason == "" {
		reason = "cancelled by client"
	}
	if err := s.checkOwner(ctx, req.Msg.JobId); err != nil {
		return nil, err
	}
	seqs, err := s.store.Cancel(ctx, req.Msg.JobId, reason)
	if err != nil {
		return nil, storeError(err)
	}
	n, err := s.q.DeleteTasks(ctx, seqs)
	if err != nil {
		s.log.WarnContext(ctx, "coordinator: cancel: deleting tasks", telemetry.LogJob(req.Msg.JobId), slog.Any("err", err))
	}
	j, err := s.store.Get(ctx, req.Msg.JobId)
	if err != nil {
		return nil, storeError(err)
	}
	if err := s.q.DeleteBlob(ctx, j.BlobRef); err != nil {
		s.log.WarnContext(ctx, "coordinator: cancel: deleting blob", telemetry.LogJob(j.ID), slog.Any("err", err))
	}
	s.cfg.Metrics.FailuresTotal.WithLabelValues("job", "cancelled").Inc()
	s.log.InfoContext(ctx, "coordinator: job cancelled", telemetry.LogJob(j.ID), slog.Int("tasks_deleted", n), slog.String("reason", reason))
	return connect.NewResponse(&c2clusterv1.CancelResponse{Job: JobStatus(j, time.Now())}), nil
}

// Status implements ProofService.Status.
func (s *Server) Status(ctx context.Context, req *connect.Request[c2clusterv1.StatusRequest]) (*connect.Response[c2clusterv1.StatusResponse], error) {
	res := &c2clusterv1.StatusResponse{}
	if req.Msg.JobId != "" {
		j, err := s.store.Get(ctx, req.Msg.JobId)
		if err != nil {
			return nil, storeError(err)
		}
		if !mayAccess(ctx, j) {
			return nil, notFound(req.Msg.JobId)
		}
		res.Job = JobStatus(j, time.Now())
	}
	workers, err := s.store.Workers(ctx)
	if err != nil {
		return nil, storeError(err)
	}
	if res.Workers, err = s.workerInfos(ctx, workers); err != nil {
		return nil, storeError(err)
	}
	depth, err := s.q.Depth(ctx)
	if err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	for _, d := range depth {
		res.Queue = append(res.Queue, &c2clusterv1.LaneDepth{Shape: d.Shape, Lane: d.Lane, Pending: d.Pending, InFlight: d.InFlight})
	}
	return connect.NewResponse(res), nil
}

// ListJobs implements ProofService.ListJobs. Proof bytes are left out.
func (s *Server) ListJobs(ctx context.Context, req *connect.Request[c2clusterv1.ListJobsRequest]) (*connect.Response[c2clusterv1.ListJobsResponse], error) {
	limit := int(req.Msg.Limit)
	if limit == 0 {
		limit = 50
	}
	if limit > 1000 {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("limit %d exceeds 1000", limit))
	}
	var state jobstore.State
	if req.Msg.State != c2clusterv1.JobState_JOB_STATE_UNSPECIFIED {
		for k, v := range stateProto {
			if v == req.Msg.State {
				state = k
			}
		}
		if state == "" {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("unknown state %d", req.Msg.State))
		}
	}
	var jobs []*jobstore.Job
	var err error
	if id := caller(ctx); id != nil {
		jobs, err = s.store.ListOwned(ctx, id.Name, state, limit)
	} else {
		jobs, err = s.store.List(ctx, state, limit)
	}
	if err != nil {
		return nil, storeError(err)
	}
	res := &c2clusterv1.ListJobsResponse{}
	now := time.Now()
	for _, j := range jobs {
		st := JobStatus(j, now)
		st.Proof = nil
		res.Jobs = append(res.Jobs, st)
	}
	return connect.NewResponse(res), nil
}

// sectorRef is a job's sector as the API gives it (nil when not given).
func sectorRef(s jobstore.Sector) *c2clusterv1.SectorRef {
	if s.Miner == nil && s.Number == nil {
		return nil
	}
	return &c2clusterv1.SectorRef{MinerId: s.Miner, SectorNumber: s.Number}
}
