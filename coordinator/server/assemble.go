package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

// assemble handles one assembly request: concatenate the partition proofs
// in order, batch-verify them, mark the job done. Partitions whose proofs
// fail verification are re-queued, excluding the workers that made them
// (rejectPartitions); the job fails when one partition has had
// TrustConfig.MaxBadProofs bad proofs, or when the proofs fail as a whole.
// It is idempotent: requests for jobs that are not assembling are
// acknowledged and ignored. Other errors are retried.
func (s *Server) assemble(ctx context.Context, jobID string) (err error) {
	j, err := s.store.Get(ctx, jobID)
	if errors.Is(err, jobstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.State == jobstore.StateProving {
		// Bad partitions removed by an earlier delivery of this request
		// whose tasks may not all be published (a crash in between).
		return s.publishRequeue(ctx, j)
	}
	if j.State != jobstore.StateAssembling {
		return nil
	}
	start := time.Now()
	ctx = telemetry.ContextWithTraceParent(context.WithoutCancel(ctx), j.TraceParent)
	ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanAssemble, trace.WithAttributes(
		telemetry.AttrJob.String(j.ID), telemetry.AttrShape.String(j.Shape), telemetry.AttrPartitions.Int(j.Partitions)))
	defer func() {
		telemetry.RecordFailure(span, err)
		span.End()
	}()
	proofs, err := s.store.Proofs(ctx, j.ID, j.Partitions)
	if err != nil {
		return err
	}
	whole := make([]byte, 0, len(proofs)*groth16.ProofSize)
	for k, p := range proofs {
		if p == nil {
			return s.failJob(ctx, j, "assemble", fmt.Sprintf("job is assembling but partition %d has no proof", k))
		}
		whole = append(whole, p...)
	}
	blob, err := s.q.GetBlob(ctx, j.BlobRef, j.BlobSHA256)
	if errors.Is(err, queue.ErrBlobNotFound) {
		return s.failJob(ctx, j, "blob_missing", fmt.Sprintf("C1 blob %s is gone (expired?): cannot verify", j.BlobRef))
	}
	if err != nil {
		return err
	}
	if err := s.ps.VerifyJob(ctx, j.Shape, blob, proofs); err != nil {
		if pe := (*PartitionsError)(nil); errors.As(err, &pe) {
			return s.rejectPartitions(ctx, j, pe)
		}
		if errors.Is(err, ErrProofInvalid) {
			return s.failJob(ctx, j, "verify", err.Error())
		}
		return err
	}
	took := time.Since(start)
	if err := s.store.Finish(ctx, j.ID, whole, took); err != nil {
		if errors.Is(err, jobstore.ErrConflict) {
			return nil // cancelled meanwhile, or another coordinator finished it
		}
		return err
	}
	if err := s.q.DeleteBlob(ctx, j.BlobRef); err != nil {
		s.log.WarnContext(ctx, "coordinator: deleting blob of a done job", telemetry.LogJob(j.ID), slog.Any("err", err))
	}
	m := s.cfg.Metrics
	m.StageSeconds.WithLabelValues(telemetry.StageAssemble).Observe(took.Seconds())
	m.StageSeconds.WithLabelValues(telemetry.StageJobTotal).Observe(time.Since(j.Created).Seconds())
	m.ProofsTotal.WithLabelValues("job", j.Shape).Inc()
	s.log.InfoContext(ctx, "coordinator: job done", telemetry.LogJob(j.ID), slog.Duration("assemble", took),
		slog.Duration("total", time.Since(j.Created)))
	return nil
}

// failJob fails j with reason; a job already terminal is left alone.
func (s *Server) failJob(ctx context.Context, j *jobstore.Job, code, reason string) error {
	err := s.store.Fail(ctx, j.ID, reason)
	if errors.Is(err, jobstore.ErrConflict) {
		return nil
	}
	if err != nil {
		return err
	}
	s.cfg.Metrics.FailuresTotal.WithLabelValues("job", code).Inc()
	s.log.WarnContext(ctx, "coordinator: job failed", telemetry.LogJob(j.ID), slog.String("reason", reason))
	// Nothing more of this job is worth proving.
	if seqs, err := s.store.Seqs(ctx, j.ID); err == nil {
		_, _ = s.q.DeleteTasks(ctx, seqs)
	}
	if err := s.q.DeleteBlob(ctx, j.BlobRef); err != nil {
		s.log.WarnContext(ctx, "coordinator: deleting blob of a failed job", telemetry.LogJob(j.ID), slog.Any("err", err))
	}
	return nil
}

// deadLetter fails the job of a partition that will not be retried, with
// the worker's reason or the last recorded error. Other jobs are untouched;
// a rejected task (one that names no trusted job) touches none.
func (s *Server) deadLetter(ctx context.Context, d queue.DeadLetter) error {
	if d.Kind == queue.DeadRejected {
		// Forged or corrupt: whatever job it names stays untouched.
		s.cfg.Metrics.FailuresTotal.WithLabelValues("task", "rejected").Inc()
		s.log.WarnContext(ctx, "coordinator: a worker rejected a task that does not match its job (forged or corrupt); no job is affected",
			slog.Uint64("stream_seq", d.StreamSeq), slog.String("reason", d.Reason))
		return nil
	}
	j, err := s.store.Get(ctx, d.JobID)
	if errors.Is(err, jobstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.State.Terminal() {
		return nil
	}
	var reason, code string
	switch d.Kind {
	case queue.DeadTerminated:
		// The advisory says only what its publisher wrote: a worker that
		// terminates a task as bad input records the error in the job's
		// events first, so a termination no worker recorded is not the
		// job's (forged, or its worker lost Redis meanwhile; then the
		// watchdog publishes the partition again and another worker
		// records it).
		recorded, err := s.badInputRecorded(ctx, j.ID, d.Partition, d.Reason)
		if err != nil {
			return err
		}
		if !recorded {
			s.cfg.Metrics.FailuresTotal.WithLabelValues("task", "unconfirmed").Inc()
			s.log.WarnContext(ctx, "coordinator: ignoring a termination that no worker recorded for the job (forged, or not recorded); the job is untouched",
				telemetry.LogJob(j.ID), telemetry.LogPartition(int(d.Partition)), slog.Uint64("stream_seq", d.StreamSeq))
			return nil
		}
		code = "bad_input"
		reason = fmt.Sprintf("partition %d rejected by a worker: %s", d.Partition, d.Reason)
	default:
		code = "max_deliver"
		last := j.LastError
		if last == "" {
			last = "no error recorded (worker crashes or ack timeouts)"
		}
		reason = fmt.Sprintf("partition %d failed after %d deliveries; last error: %s", d.Partition, d.Deliveries, last)
	}
	s.cfg.Metrics.FailuresTotal.WithLabelValues("partition", code).Inc()
	return s.failJob(ctx, j, code, reason)
}

// badInputRecorded reports whether a worker recorded reason as an error of
// the job's partition (RecordFailure, before it terminated the task). The
// advisory's reason and the event's message are the same error text, each
// cut to its own limit, so they are compared on their common length.
func (s *Server) badInputRecorded(ctx context.Context, job string, partition uint32, reason string) (bool, error) {
	if !strings.HasPrefix(reason, queue.ErrBadInput.Error()) {
		return false, nil
	}
	evs, err := s.store.Events(ctx, job)
	if err != nil {
		return false, err
	}
	p := strconv.FormatUint(uint64(partition), 10)
	for _, e := range evs {
		if e.Fields["type"] != "error" || e.Fields["partition"] != p {
			continue
		}
		msg := e.Fields["message"]
		n := min(len(msg), len(reason))
		if n > 0 && msg[:n] == reason[:n] {
			return true, nil
		}
	}
	return false, nil
}
