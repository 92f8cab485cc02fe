package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Lane names of the API priorities (the queue's default lanes).
var priorityLane = map[c2clusterv1.Priority]string{
	c2clusterv1.Priority_PRIORITY_UNSPECIFIED: "normal",
	c2clusterv1.Priority_PRIORITY_HIGH:        "high",
	c2clusterv1.Priority_PRIORITY_NORMAL:      "normal",
	c2clusterv1.Priority_PRIORITY_LOW:         "low",
}

func laneOf(p c2clusterv1.Priority) (string, error) {
	l, ok := priorityLane[p]
	if !ok {
		return "", fmt.Errorf("unknown priority %d", p)
	}
	return l, nil
}

func priorityOf(lane string) c2clusterv1.Priority {
	switch lane {
	case "high":
		return c2clusterv1.Priority_PRIORITY_HIGH
	case "low":
		return c2clusterv1.Priority_PRIORITY_LOW
	}
	return c2clusterv1.Priority_PRIORITY_NORMAL
}

// NewJobID returns a fresh random job id (32 hex characters).
func NewJobID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Submit implements ProofService.Submit.
func (s *Server) Submit(ctx context.Context, req *connect.Request[c2clusterv1.SubmitRequest]) (*connect.Response[c2clusterv1.SubmitResponse], error) {
	res, err := s.submit(ctx, req.Msg)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(res), nil
}

func (s *Server) submit(ctx context.Context, req *c2clusterv1.SubmitRequest) (_ *c2clusterv1.SubmitResponse, err error) {
	ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanSubmit, trace.WithSpanKind(trace.SpanKindServer))
	defer func() {
		result := "accepted"
		if err != nil {
			result = "rejected"
			telemetry.RecordFailure(span, err)
			s.log.WarnContext(ctx, "coordinator: submit rejected", slog.Any("err", err))
		}
		s.cfg.Metrics.SubmitsTotal.WithLabelValues(result).Inc()
		span.End()
	}()

	if err := s.admitSubmit(ctx); err != nil {
		return nil, err
	}
	if n := int64(len(req.C1Json)); n > s.cfg.MaxC1Bytes {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: %d bytes exceeds the limit of %d", ErrInvalidC1, n, s.cfg.MaxC1Bytes))
	}
	if len(req.C1Json) == 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: c1_json is empty", ErrInvalidC1))
	}
	lane, err := laneOf(req.Priority)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if len(req.IdempotencyKey) > jobstore.MaxIdemKeyLen {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("idempotency_key of %d bytes exceeds %d", len(req.IdempotencyKey), jobstore.MaxIdemKeyLen))
	}

	// Keys are the submitting identity's own.
	idem := idempotencyKey(ctx, req.IdempotencyKey)
	jobID := NewJobID()

	// lotus-bench's Commit2In envelope: the C1 output inside is what is
	// stored and proved; its sector number and miner join the request's.
	c1doc := req.C1Json
	var env *c1.Commit2In
	if c1.IsCommit2In(c1doc) {
		if env, err = c1.ParseCommit2In(c1doc); err != nil {
			s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "invalid_c1").Inc()
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: %w", ErrInvalidC1, err))
		}
		c1doc = env.Phase1Out
	}
	sector, err := sectorOf(req.GetSector(), env)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}

	// A resubmission of the same request with a known key returns its job
	// at once; another request with the key is refused (idempotency.go).
	digest := requestDigest(c1doc, lane, sector)
	var rebind *jobstore.Binding
	if idem != "" {
		prev, old, err := s.lookupIdempotent(ctx, idem, digest)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			return prev, nil
		}
		rebind = old
	}

	insp, err := s.ps.Inspect(ctx, c1doc, req.VerifyVanilla || s.cfg.VerifyVanilla)
	switch {
	case errors.Is(err, ErrInvalidC1):
		s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "invalid_c1").Inc()
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, ErrUnsupportedShape):
		return nil, connect.NewError(connect.CodeFailedPrecondition, err)
	case err != nil:
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	if req.Shape != "" && req.Shape != insp.Shape {
		s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "wrong_shape").Inc()
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: the request says shape %q but the C1 output is of shape %q", ErrInvalidC1, req.Shape, insp.Shape))
	}
	if env != nil && env.SectorSize != insp.SectorSize {
		s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "wrong_shape").Inc()
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: the Commit2In envelope's SectorSize is %d, the C1 output's %s sector has %d bytes",
			ErrInvalidC1, env.SectorSize, insp.Shape, insp.SectorSize))
	}
	if sector.Known() {
		// As verify_seal derives it: a C1 output of another sector (or
		// miner) would make a proof the chain rejects for this one.
		want := porep.ReplicaID(porep.ProverID(*sector.Miner), *sector.Number, insp.Ticket, insp.CommD, insp.PoRepID)
		if want != insp.ReplicaID {
			s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "wrong_sector").Inc()
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: replica_id %s is not the replica id of miner %d, sector %d (%s) with this C1 output's ticket, comm_d and proof type: wrong miner id or sector number, or the C1 output of another sector",
				ErrInvalidC1, insp.ReplicaID, *sector.Miner, *sector.Number, want))
		}
	}
	if err := queue.CheckName("shape", insp.Shape); err != nil {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("%w: %v", ErrUnsupportedShape, err))
	}

	deduplicated := false
	if idem != "" {
		var bound jobstore.Binding
		var first bool
		if rebind != nil { // the key's job failed or was cancelled
			bound, first, err = s.store.RebindIdempotencyKey(ctx, idem, *rebind, jobID, digest)
		} else {
			bound, first, err = s.store.ClaimIdempotencyKey(ctx, idem, jobID, digest)
		}
		if err != nil {
			return nil, connect.NewError(connect.CodeUnavailable, err)
		}
		if !first {
			if bound.Digest != "" && bound.Digest != digest {
				return nil, keyTaken(bound.JobID)
			}
			// Lost a race with a concurrent submission of the same request,
			// or finishing one whose coordinator died: continue as that
			// job; every step below is idempotent.
			jobID, deduplicated = bound.JobID, true
		}
	}

	ctx, jobSpan := telemetry.Tracer().Start(ctx, telemetry.SpanJob, trace.WithAttributes(
		telemetry.AttrJob.String(jobID), telemetry.AttrShape.String(insp.Shape),
		telemetry.AttrPartitions.Int(insp.Partitions), telemetry.AttrLane.String(lane)))
	defer jobSpan.End()

	existing, err := s.store.Get(ctx, jobID)
	if err != nil && !errors.Is(err, jobstore.ErrNotFound) {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	if existing == nil {
		if err := s.admitJob(ctx); err != nil {
			return nil, err
		}
		blob, err := s.q.PutBlob(ctx, jobID, c1doc)
		if err != nil {
			return nil, connect.NewError(connect.CodeUnavailable, err)
		}
		nj := jobstore.NewJob{
			ID: jobID, Shape: insp.Shape, Lane: lane, Partitions: insp.Partitions,
			Sector:  sector,
			BlobRef: blob.Name, BlobSize: blob.Size, BlobSHA256: blob.SHA256[:],
			TraceParent: telemetry.TraceParent(ctx), IdempotencyKey: idem, Owner: owner(ctx),
		}
		if _, err := s.store.Create(ctx, nj); err != nil {
			return nil, connect.NewError(connect.CodeUnavailable, err)
		}
		if existing, err = s.store.Get(ctx, jobID); err != nil {
			return nil, connect.NewError(connect.CodeUnavailable, err)
		}
	}
	if existing.Published < existing.Partitions && !existing.State.Terminal() {
		if err := s.publish(ctx, existing); err != nil {
			return nil, connect.NewError(connect.CodeUnavailable, err)
		}
	}
	if deduplicated {
		s.cfg.Metrics.SubmitsTotal.WithLabelValues("deduplicated").Inc()
	}
	s.log.InfoContext(ctx, "coordinator: job accepted", telemetry.LogJob(jobID), slog.String("shape", existing.Shape),
		slog.Int("partitions", existing.Partitions), slog.String("lane", existing.Lane), slog.Bool("deduplicated", deduplicated))
	return &c2clusterv1.SubmitResponse{JobId: jobID, Deduplicated: deduplicated, Shape: existing.Shape, Partitions: uint32(existing.Partitions)}, nil
}

// publish puts every partition task of j on the queue (duplicates are
// dropped by the stream) and records their stream sequences.
func (s *Server) publish(ctx context.Context, j *jobstore.Job) error {
	seqs := make(map[uint32]uint64, j.Partitions)
	now := time.Now().UnixMilli()
	for p := 0; p < j.Partitions; p++ {
		pub, err := s.q.Publish(ctx, &c2clusterv1.PartitionTask{
			JobId: j.ID, Partition: uint32(p), Partitions: uint32(j.Partitions), Shape: j.Shape, Lane: j.Lane,
			BlobRef: j.BlobRef, BlobSize: j.BlobSize, BlobSha256: j.BlobSHA256, EnqueuedUnixMs: now,
		})
		if err != nil {
			return err
		}
		seqs[uint32(p)] = pub.Seq
	}
	return s.store.SetPublished(ctx, j.ID, seqs, j.Partitions)
}

// sectorOf is a submission's sector: the request's miner id and sector
// number, and the Commit2In envelope's (its SectorNum, its Miner when
// there); where both give one they must agree.
func sectorOf(ref *c2clusterv1.SectorRef, env *c1.Commit2In) (jobstore.Sector, error) {
	var miner, number *uint64
	if ref != nil {
		miner, number = ref.MinerId, ref.SectorNumber
	}
	if env != nil {
		if number != nil && *number != env.SectorNum {
			return jobstore.Sector{}, fmt.Errorf("%w: sector_number %d, but the Commit2In envelope's SectorNum is %d", ErrInvalidC1, *number, env.SectorNum)
		}
		number = &env.SectorNum
		if env.Miner != "" {
			m, err := seal.ParseMinerID(env.Miner)
			if err != nil {
				return jobstore.Sector{}, fmt.Errorf("%w: the Commit2In envelope's Miner: %w", ErrInvalidC1, err)
			}
			if miner != nil && *miner != m {
				return jobstore.Sector{}, fmt.Errorf("%w: miner_id %d, but the Commit2In envelope's Miner is %s", ErrInvalidC1, *miner, env.Miner)
			}
			miner = &m
		}
	}
	return jobstore.Sector{Miner: miner, Number: number}, nil
}
