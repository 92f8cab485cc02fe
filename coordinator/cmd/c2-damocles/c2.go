package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"connectrpc.com/connect"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

const (
	// submitRetryFor bounds the retries of a submission the coordinator
	// could not take (unreachable, restarting).
	submitRetryFor = 10 * time.Minute
	// backoffMax caps the wait between retries.
	backoffMax = 30 * time.Second
	// maxFreshJobs bounds the jobs one sector may have: a retry submits
	// afresh only when the sector's earlier job ended failed or cancelled.
	maxFreshJobs = 16
)

// errTimeout is the cause of a task's context after -timeout.
var errTimeout = errors.New("timeout")

// prove checks a C2 task, proves it on the coordinator and returns the
// proof bytes.
func (p *processor) prove(ctx context.Context, id uint64, t *wireTask) ([]byte, error) {
	miner, sector := *t.MinerID, *t.SectorID
	log := p.log.With("id", id, "miner", miner, "sector", sector)
	prefix := fmt.Sprintf("miner %d sector %d", miner, sector)

	// The prover id must be the miner's (filecoin-ffi's toProverID).
	if want := seal.ProverID(miner); [32]byte(*t.ProverID) != want {
		return nil, fmt.Errorf("%s: prover_id %s is not the prover id of miner_id %d (that is %s: the actor id as an unsigned varint, zero-padded to 32 bytes)",
			prefix, hex.EncodeToString(t.ProverID[:]), miner, hex.EncodeToString(want[:]))
	}
	var c1 bytes.Buffer
	if err := json.Compact(&c1, t.C1Out); err != nil {
		return nil, fmt.Errorf("%s: c1out: %w", prefix, err)
	}
	if err := checkReplicaID(c1.Bytes(), miner, sector); err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	prio := priorities[p.cfg.priority]
	req := &c2clusterv1.SubmitRequest{
		C1Json:        c1.Bytes(),
		Sector:        &c2clusterv1.SectorRef{MinerId: &miner, SectorNumber: &sector},
		Priority:      prio,
		VerifyVanilla: p.cfg.verifyVanilla,
	}
	key := idempotencyKey(miner, sector, c1.Bytes())

	if p.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.cfg.timeout, errTimeout)
		defer cancel()
	}
	start := time.Now()
	sub, err := p.submit(ctx, req, key, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, p.ctxErr(ctx, "", err))
	}
	log = log.With("job", sub.JobId)
	st, err := p.await(ctx, sub.JobId, log)
	if errors.Is(err, client.ErrJobFailed) {
		return nil, fmt.Errorf("%s: %w (a retry of this sector submits a new job)", prefix, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, p.ctxErr(ctx, sub.JobId, err))
	}
	log.Info("proof received", "proof_bytes", len(st.Proof), "elapsed", time.Since(start).Round(time.Millisecond))
	return st.Proof, nil
}

// c1Header are the C1 output's fields its replica id is checked with.
type c1Header struct {
	RegisteredProof string       `json:"registered_proof"`
	ReplicaID       porep.Domain `json:"replica_id"`
	CommD           porep.Domain `json:"comm_d"`
	Ticket          porep.Domain `json:"ticket"`
}

// checkReplicaID checks that the C1 output was made for this miner's
// sector: its replica_id must be rust-fil-proofs' replica id of the
// miner's prover id, the sector number, the C1's ticket and comm_d, and the
// registered proof's porep id.
// A registered proof c2cluster does not know is left to the coordinator
// (which refuses it).
func checkReplicaID(c1 []byte, miner, sector uint64) error {
	var h c1Header
	if err := json.Unmarshal(c1, &h); err != nil {
		return fmt.Errorf("c1out is not a C1 output: %v", err)
	}
	s, err := porep.ShapeByRegisteredProof(h.RegisteredProof)
	if err != nil {
		return nil
	}
	want := porep.ReplicaID(seal.ProverID(miner), sector, h.Ticket, h.CommD, s.PoRepID())
	if h.ReplicaID != want {
		return fmt.Errorf("the C1 output was not made for sector_id %d of miner_id %d: its replica_id %s is not the replica id of this prover id, sector number, its ticket and comm_d (%s); the C1 is of another sector",
			sector, miner, h.ReplicaID, want)
	}
	return nil
}

// idempotencyKey names a sector's proof job: miner, sector and the C1
// output's SHA-256 (a resealed sector has another ticket, so another C1).
func idempotencyKey(miner, sector uint64, c1 []byte) string {
	sum := sha256.Sum256(c1)
	return fmt.Sprintf("damocles/%d/%d/%s", miner, sector, hex.EncodeToString(sum[:16]))
}

// submit submits the job under key, or under the next key of the chain
// key, key/r1, key/r2, … while the job bound to a key ended failed or
// cancelled: a retry attaches to a job queued, proving or done, and starts
// a new one only after a failure.
func (p *processor) submit(ctx context.Context, req *c2clusterv1.SubmitRequest, key string, log *slog.Logger) (*c2clusterv1.SubmitResponse, error) {
	for n := range maxFreshJobs {
		req.IdempotencyKey = key
		if n > 0 {
			req.IdempotencyKey = fmt.Sprintf("%s/r%d", key, n)
		}
		var sub *c2clusterv1.SubmitResponse
		err := p.retry(ctx, submitRetryFor, "submit", log, func() (err error) {
			sub, err = p.cl.Submit(ctx, req)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("submit: %w", err)
		}
		if !sub.Deduplicated {
			log.Info("job submitted", "job", sub.JobId, "shape", sub.Shape, "partitions", sub.Partitions, "key", req.IdempotencyKey)
			return sub, nil
		}
		var res *c2clusterv1.StatusResponse
		err = p.retry(ctx, submitRetryFor, "status", log, func() (err error) {
			res, err = p.cl.Status(ctx, sub.JobId)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("status of job %s: %w", sub.JobId, err)
		}
		j := res.GetJob()
		if s := j.GetState(); s == c2clusterv1.JobState_JOB_STATE_FAILED || s == c2clusterv1.JobState_JOB_STATE_CANCELLED {
			log.Warn("this sector's earlier job did not complete: submitting afresh", "job", sub.JobId,
				"state", client.StateName(s), "reason", j.GetReason())
			continue
		}
		log.Info("attached to this sector's existing job", "job", sub.JobId, "state", client.StateName(j.GetState()),
			"partitions_done", j.GetPartitionsDone(), "partitions", j.GetPartitions(), "key", req.IdempotencyKey)
		return sub, nil
	}
	return nil, fmt.Errorf("the %d jobs of this C1 output (idempotency keys %s…) all failed or were cancelled", maxFreshJobs, key)
}

// await waits for the job: Await calls, retried while the coordinator is
// unreachable, and the job's progress logged every -progress when it
// changed.
func (p *processor) await(ctx context.Context, job string, log *slog.Logger) (*c2clusterv1.JobStatus, error) {
	if p.cfg.progress > 0 {
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		go p.logProgress(pctx, job, log)
	}
	var st *c2clusterv1.JobStatus
	err := p.retry(ctx, 0, "await", log, func() (err error) {
		st, err = p.cl.Await(ctx, job)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// logProgress logs the job's state and partitions each time they changed,
// looking every -progress.
func (p *processor) logProgress(ctx context.Context, job string, log *slog.Logger) {
	t := time.NewTicker(p.cfg.progress)
	defer t.Stop()
	var lastState c2clusterv1.JobState
	lastDone := uint32(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := p.cl.Status(ctx, job)
		if err != nil || res.GetJob() == nil {
			continue
		}
		j := res.GetJob()
		if j.State != lastState || j.PartitionsDone != lastDone {
			lastState, lastDone = j.State, j.PartitionsDone
			log.Info(client.ProgressLine(j))
		}
	}
}

// retry calls f until it succeeds, fails for good, ctx ends or (when
// within > 0) within has passed; errors of an unreachable or overloaded
// coordinator are retried with a growing backoff.
func (p *processor) retry(ctx context.Context, within time.Duration, what string, log *slog.Logger, f func() error) error {
	start := time.Now()
	backoff := time.Second
	for {
		err := f()
		if err == nil || !transient(err) || ctx.Err() != nil || (within > 0 && time.Since(start)+backoff > within) {
			return err
		}
		log.Warn("the coordinator could not answer; retrying", "call", what, "in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff): // retry backoff, not synchronization
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// transient reports errors worth a retry: the coordinator unreachable,
// restarting or overloaded. A failed job (*client.JobError) is final.
func transient(err error) bool {
	var je *client.JobError
	if errors.As(err, &je) {
		return false
	}
	switch connect.CodeOf(err) {
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeResourceExhausted, connect.CodeAborted, connect.CodeUnknown:
		return true
	}
	return false
}

// ctxErr rewords an error caused by the task's context ending: the
// -timeout passed, or the processor is stopping. The job (if any) runs on.
func (p *processor) ctxErr(ctx context.Context, job string, err error) error {
	if ctx.Err() == nil {
		return err
	}
	where := fmt.Sprintf("the job was not submitted (%v)", err)
	if job != "" {
		where = fmt.Sprintf("job %s runs on in the cluster and a retry of this sector attaches to it", job)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if res, serr := p.cl.Status(sctx, job); serr == nil && res.GetJob() != nil {
			j := res.GetJob()
			where = fmt.Sprintf("job %s (%s, %d/%d partitions) runs on in the cluster and a retry of this sector attaches to it",
				job, client.StateName(j.GetState()), j.GetPartitionsDone(), j.GetPartitions())
		}
	}
	if errors.Is(context.Cause(ctx), errTimeout) {
		return fmt.Errorf("no proof within -timeout %v: %s", p.cfg.timeout, where)
	}
	return fmt.Errorf("interrupted: c2-damocles is stopping; %s", where)
}
