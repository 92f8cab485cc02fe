package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Defaults of TrustConfig.
const (
	MaxBadProofsDefault    = 3
	QuarantineAfterDefault = 2
	KeyIntervalDefault     = 5 * time.Second
)

// TrustConfig sets how the coordinator treats partition proofs that fail
// its verification and the workers that make them. Zero values mean the
// defaults.
type TrustConfig struct {
	// MaxBadProofs: a job fails when this many proofs of one of its
	// partitions have failed verification; before that each bad partition
	// is re-queued, excluding the workers that made its bad proofs.
	// Default 3.
	MaxBadProofs int
	// QuarantineAfter: a worker is quarantined once this many of its
	// partition proofs have failed verification (counted since its last
	// release, within jobstore.BadProofWindow of the last one). Default 2.
	QuarantineAfter int
	// KeyInterval is how often the coordinator publishes its verifying
	// keys' fingerprints and checks the keys workers registered. Default
	// 5 s.
	KeyInterval time.Duration
}

func (c TrustConfig) maxBad() int          { return cmpOr(c.MaxBadProofs, MaxBadProofsDefault) }
func (c TrustConfig) quarantineAfter() int { return cmpOr(c.QuarantineAfter, QuarantineAfterDefault) }
func (c TrustConfig) keyInterval() time.Duration {
	if c.KeyInterval <= 0 {
		return KeyIntervalDefault
	}
	return c.KeyInterval
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// KeyFingerprinter is a ProofSystem that can name the verifying key it
// checks a shape's proofs with (PoRep is one).
type KeyFingerprinter interface {
	// KeyFingerprint returns the fingerprint of the shape's verifying key
	// (groth16.VerifyingKey.Fingerprint) and its file; an error when the
	// key is not available.
	KeyFingerprint(ctx context.Context, shape string) (fingerprint, file string, err error)
}

// rejectPartitions handles an assembling job whose listed partition proofs
// fail verification: they are re-queued (the workers that made them
// excluded) unless one has reached the bound of bad proofs, which fails the
// job naming the partition and the workers. The workers' bad proofs count
// towards their quarantine.
func (s *Server) rejectPartitions(ctx context.Context, j *jobstore.Job, pe *PartitionsError) error {
	bad := make([]jobstore.BadProof, 0, len(pe.Failed))
	for _, k := range pe.Failed {
		bad = append(bad, jobstore.BadProof{Partition: k, Reason: pe.Reasons[k]})
	}
	res, err := s.store.RejectProofs(ctx, j.ID, bad, s.cfg.Trust.maxBad())
	if err != nil {
		return err
	}
	if res.Outcome == jobstore.NotAssembling {
		return nil
	}
	tm := s.cfg.Metrics
	for _, rp := range res.Partitions {
		tm.BadPartitionProofs.WithLabelValues(j.Shape).Inc()
		worker := rp.Worker
		if worker == "" {
			worker = "an unknown worker"
		}
		s.log.WarnContext(ctx, "coordinator: a partition proof failed verification", telemetry.LogJob(j.ID),
			telemetry.LogPartition(rp.Partition), slog.String("worker", worker), slog.Int("bad_proofs_of_partition", rp.BadProofs),
			slog.String("reason", pe.Reasons[rp.Partition]))
		if rp.Worker == "" {
			continue
		}
		detail := fmt.Sprintf("job %s partition %d (%s): %s", j.ID, rp.Partition, j.Shape, pe.Reasons[rp.Partition])
		n, q, newly, err := s.store.RecordBadProof(ctx, rp.Worker, detail, s.cfg.Trust.quarantineAfter())
		switch {
		case err != nil:
			s.log.WarnContext(ctx, "coordinator: recording a worker's bad proof", slog.String("worker", rp.Worker), slog.Any("err", err))
		case newly:
			s.log.ErrorContext(ctx, "coordinator: worker quarantined: it takes no more work until released (coordinator workers release "+rp.Worker+")",
				slog.String("worker", rp.Worker), slog.Int("bad_proofs", n), slog.String("reason", q.Reason))
		}
	}
	if res.Outcome == jobstore.Exhausted {
		var parts []string
		for _, rp := range res.Partitions {
			if rp.BadProofs >= s.cfg.Trust.maxBad() {
				parts = append(parts, fmt.Sprintf("partition %d: %d proofs failed verification (workers %s); the last: %s",
					rp.Partition, rp.BadProofs, workerList(rp.Workers), pe.Reasons[rp.Partition]))
			}
		}
		return s.failJob(ctx, j, "bad_proofs", strings.Join(parts, "; "))
	}
	tm.PartitionsRequeued.WithLabelValues(j.Shape).Add(float64(len(res.Partitions)))
	j.State = jobstore.StateProving
	return s.publishRequeue(ctx, j)
}

func workerList(ws []string) string {
	if len(ws) == 0 {
		return "unknown"
	}
	return strings.Join(ws, ", ")
}

// publishRequeue publishes the tasks of a job's partitions that
// RejectProofs removed (idempotent: a re-queued task's Nats-Msg-Id names
// its round), each naming the workers it excludes.
func (s *Server) publishRequeue(ctx context.Context, j *jobstore.Job) error {
	rq, err := s.store.PendingRequeue(ctx, j.ID)
	if err != nil || len(rq.Partitions) == 0 {
		return err
	}
	jctx := telemetry.ContextWithTraceParent(ctx, j.TraceParent)
	seqs := make(map[uint32]uint64, len(rq.Partitions))
	now := time.Now().UnixMilli()
	for _, p := range rq.Partitions {
		pub, err := s.q.Publish(jctx, &c2clusterv1.PartitionTask{
			JobId: j.ID, Partition: uint32(p), Partitions: uint32(j.Partitions), Shape: j.Shape, Lane: j.Lane,
			BlobRef: j.BlobRef, BlobSize: j.BlobSize, BlobSha256: j.BlobSHA256, EnqueuedUnixMs: now,
			Round: uint32(rq.Round), ExcludedWorkers: rq.Excluded[p],
		})
		if err != nil {
			return err
		}
		seqs[uint32(p)] = pub.Seq
	}
	if err := s.store.RequeuePublished(ctx, j.ID, rq.Round, seqs); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "coordinator: re-queued partitions whose proofs failed verification", telemetry.LogJob(j.ID),
		slog.Any("partitions", rq.Partitions), slog.Int("round", rq.Round), slog.Any("excluded", rq.Excluded))
	return nil
}

// runKeyCheck publishes the coordinator's verifying-key fingerprints and
// quarantines registered workers whose proving key for a shape is not the
// coordinator's, every KeyInterval until ctx ends.
func (s *Server) runKeyCheck(ctx context.Context) {
	t := time.NewTicker(s.cfg.Trust.keyInterval())
	defer t.Stop()
	for {
		s.checkKeys(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkKeys is one pass of runKeyCheck; it also refreshes the quarantine
// gauge.
func (s *Server) checkKeys(ctx context.Context) {
	tm := s.cfg.Metrics
	keys := map[string]jobstore.CoordinatorKey{}
	if kf, ok := s.ps.(KeyFingerprinter); ok {
		ttl := max(10*s.cfg.Trust.keyInterval(), time.Minute)
		for _, shape := range porep.ShapeNames() {
			fp, file, err := kf.KeyFingerprint(ctx, shape)
			if err != nil {
				continue // no key for this shape here: nothing to compare with
			}
			k := jobstore.CoordinatorKey{Fingerprint: fp, File: file}
			if err := s.store.PublishKey(ctx, shape, k, ttl); err != nil {
				if ctx.Err() == nil {
					s.log.WarnContext(ctx, "coordinator: publishing a verifying-key fingerprint", slog.String("shape", shape), slog.Any("err", err))
				}
				return
			}
			keys[shape] = k
		}
	}
	workers, err := s.store.Workers(ctx)
	if err != nil {
		return
	}
	ids := make([]string, 0, len(workers))
	for _, w := range workers {
		ids = append(ids, w.ID)
	}
	trusts, err := s.store.Trusts(ctx, ids)
	if err != nil {
		return
	}
	for _, w := range workers {
		if trusts[w.ID].Quarantine != nil {
			continue
		}
		if reason := keyMismatch(w, keys); reason != "" {
			q, newly, err := s.store.Quarantine(ctx, w.ID, reason, "coordinator")
			if err != nil {
				s.log.WarnContext(ctx, "coordinator: quarantining a worker", slog.String("worker", w.ID), slog.Any("err", err))
				continue
			}
			if newly {
				s.log.ErrorContext(ctx, "coordinator: worker quarantined: its proving key is not the coordinator's verifying key",
					slog.String("worker", w.ID), slog.String("reason", reason))
			}
			trusts[w.ID] = jobstore.WorkerTrust{ID: w.ID, Quarantine: q}
		}
	}
	n := 0
	for _, t := range trusts {
		if t.Quarantine != nil {
			n++
		}
	}
	tm.WorkersQuarantined.Set(float64(n))
}

// keyMismatch names the first shape whose key the worker registered
// differs from the coordinator's ("" when none does).
func keyMismatch(w jobstore.Worker, keys map[string]jobstore.CoordinatorKey) string {
	for _, k := range w.Keys {
		ck, ok := keys[k.Shape]
		if ok && k.Fingerprint != ck.Fingerprint {
			return jobstore.KeyMismatchReason(k.Shape, k.Fingerprint, ck)
		}
	}
	return ""
}

// workerInfos converts worker registrations with their trust records, and
// adds quarantined workers that are no longer registered.
func (s *Server) workerInfos(ctx context.Context, workers []jobstore.Worker) ([]*c2clusterv1.WorkerInfo, error) {
	ids := make([]string, 0, len(workers))
	for _, w := range workers {
		ids = append(ids, w.ID)
	}
	trusts, err := s.store.Trusts(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []*c2clusterv1.WorkerInfo
	for _, w := range workers {
		wi := &c2clusterv1.WorkerInfo{Id: w.ID, Host: w.Host, Devices: w.Devices, Slots: uint32(w.Slots),
			Current: w.Current, HeartbeatUnixMs: w.Heartbeat.UnixMilli(), Version: w.Version}
		for _, r := range w.Resident {
			wi.Resident = append(wi.Resident, &c2clusterv1.ResidentParams{Shape: r.Shape, Residency: r.Residency})
		}
		for _, k := range w.Keys {
			wi.Keys = append(wi.Keys, &c2clusterv1.KeyFingerprint{Shape: k.Shape, Fingerprint: k.Fingerprint})
		}
		t := trusts[w.ID]
		wi.BadProofs, wi.Quarantine = uint32(t.BadProofs), quarantineProto(t.Quarantine)
		out = append(out, wi)
	}
	var gone []string
	for id, t := range trusts {
		if t.Quarantine != nil && !slices.Contains(ids, id) {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		t := trusts[id]
		out = append(out, &c2clusterv1.WorkerInfo{Id: id, BadProofs: uint32(t.BadProofs), Quarantine: quarantineProto(t.Quarantine)})
	}
	return out, nil
}

func quarantineProto(q *jobstore.Quarantine) *c2clusterv1.Quarantine {
	if q == nil {
		return nil
	}
	return &c2clusterv1.Quarantine{Reason: q.Reason, SinceUnixMs: q.Since.UnixMilli(), By: q.By}
}

// QuarantineWorker implements ProofService.QuarantineWorker.
func (s *Server) QuarantineWorker(ctx context.Context, req *connect.Request[c2clusterv1.QuarantineWorkerRequest]) (*connect.Response[c2clusterv1.QuarantineWorkerResponse], error) {
	reason := req.Msg.Reason
	if reason == "" {
		reason = "quarantined by an operator"
	}
	if req.Msg.WorkerId == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("worker_id is required"))
	}
	q, newly, err := s.store.Quarantine(ctx, req.Msg.WorkerId, reason, "operator")
	if err != nil {
		return nil, storeError(err)
	}
	if newly {
		s.log.WarnContext(ctx, "coordinator: worker quarantined by an operator", slog.String("worker", req.Msg.WorkerId), slog.String("reason", reason))
		s.checkKeys(ctx)
	}
	return connect.NewResponse(&c2clusterv1.QuarantineWorkerResponse{Quarantine: quarantineProto(q)}), nil
}

// ReleaseWorker implements ProofService.ReleaseWorker.
func (s *Server) ReleaseWorker(ctx context.Context, req *connect.Request[c2clusterv1.ReleaseWorkerRequest]) (*connect.Response[c2clusterv1.ReleaseWorkerResponse], error) {
	if req.Msg.WorkerId == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("worker_id is required"))
	}
	q, err := s.store.Release(ctx, req.Msg.WorkerId)
	if err != nil {
		return nil, storeError(err)
	}
	if q != nil {
		s.log.InfoContext(ctx, "coordinator: worker released from quarantine", slog.String("worker", req.Msg.WorkerId),
			slog.String("was", q.Reason))
		s.checkKeys(ctx) // a worker whose key still differs is quarantined again at once
	}
	return connect.NewResponse(&c2clusterv1.ReleaseWorkerResponse{Released: q != nil, Quarantine: quarantineProto(q)}), nil
}
