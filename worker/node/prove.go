package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/interlock"
)

// ErrProofInvalid: the backend produced a partition proof that does not
// verify. It is retried (another attempt may land on another device) and
// counted as failure reason "verify".
var ErrProofInvalid = errors.New("node: partition proof does not verify")

// PanicError is a panic recovered in a slot: the partition fails like a
// transient error (it is retried) and the error names where it happened.
type PanicError struct {
	Slot     string
	Location string // file:line of the panicking frame
	Value    any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("worker: panic in slot %s at %s: %v", e.Slot, e.Location, e.Value)
}

// errJobClosed ends a partition early: the job was cancelled, failed or
// finished meanwhile. The task is acked and dropped.
var errJobClosed = errors.New("job closed")

// handler is the queue handler of one slot: it wraps prove with the
// "partition" span, the in-flight bookkeeping, panic recovery and failure
// recording.
func (n *Node) handler(sr *slotRunner) queue.Handler {
	return func(ctx context.Context, d *queue.Delivery) (err error) {
		t := d.Task
		id := queue.MsgID(t.JobId, t.Partition)
		ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanPartition,
			trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(
				telemetry.AttrJob.String(t.JobId), telemetry.AttrPartition.Int(int(t.Partition)),
				telemetry.AttrAttempt.Int(d.Attempt), telemetry.AttrWorker.String(n.cfg.ID),
				telemetry.AttrDevice.Int(sr.slot.Device()), telemetry.AttrShape.String(t.Shape),
				telemetry.AttrLane.String(t.Lane), attribute.String("c2.slot", sr.name)))
		n.setCurrent(sr.name, id, d.Reply)
		n.cfg.Metrics.PartitionsInFlight.Inc()
		log := n.log.With(telemetry.LogJob(t.JobId), telemetry.LogPartition(int(t.Partition)),
			telemetry.LogAttempt(d.Attempt), slog.String("slot", sr.name))
		defer func() {
			if r := recover(); r != nil {
				err = &PanicError{Slot: sr.name, Location: panicLocation(), Value: r}
			}
			n.setCurrent(sr.name, "", "")
			n.cfg.Metrics.PartitionsInFlight.Dec()
			if errors.Is(err, errJobClosed) {
				log.InfoContext(ctx, "worker: job closed meanwhile; dropping the partition")
				span.SetAttributes(attribute.String("c2.outcome", "job_closed"))
				err = nil
			}
			if err != nil {
				telemetry.RecordFailure(span, err)
				n.recordFailure(ctx, log, d, err)
			}
			span.End()
		}()
		return n.prove(ctx, log, sr, d, span)
	}
}

// recordFailure notes a failed attempt: the job's last error (read by the
// dead-letter handler after MaxDeliver) and the failure metric. A
// partition handed back by a drain is no failure.
func (n *Node) recordFailure(ctx context.Context, log *slog.Logger, d *queue.Delivery, err error) {
	if ctx.Err() != nil {
		log.InfoContext(ctx, "worker: partition aborted; handing it back", slog.Any("err", err))
		return
	}
	code := "transient"
	switch {
	case errors.Is(err, queue.ErrRejected):
		// Not the named job's task: its job's record stays untouched.
		n.cfg.Metrics.FailuresTotal.WithLabelValues("partition", "rejected").Inc()
		log.WarnContext(ctx, "worker: rejecting a task that does not match its job (forged or corrupt)", slog.Any("err", err))
		return
	case errors.Is(err, queue.ErrBadInput):
		code = "bad_input"
	case errors.Is(err, ErrProofInvalid):
		code = "verify"
	case errors.Is(err, ErrExcluded):
		code = "excluded"
	case errors.Is(err, ErrQuarantined):
		code = "quarantined"
	case errors.As(err, new(*PanicError)):
		code = "panic"
	}
	n.cfg.Metrics.FailuresTotal.WithLabelValues("partition", code).Inc()
	log.WarnContext(ctx, "worker: partition failed", slog.String("reason", code), slog.Any("err", err))
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if rerr := n.store.RecordFailure(rctx, d.Task.JobId, d.Task.Partition, d.Attempt, n.cfg.ID, err); rerr != nil {
		log.WarnContext(ctx, "worker: recording the failure", slog.Any("err", rerr))
	}
}

// prove runs one partition through every stage.
func (n *Node) prove(ctx context.Context, log *slog.Logger, sr *slotRunner, d *queue.Delivery, span trace.Span) error {
	t := d.Task
	m := n.cfg.Metrics
	var tm jobstore.PartitionTimings
	if !d.Published.IsZero() {
		tm.QueueWait = max(time.Since(d.Published), 0)
		m.StageSeconds.WithLabelValues(telemetry.StageQueueWait).Observe(tm.QueueWait.Seconds())
	}

	// The task must be the one the coordinator published for its job: a
	// forged or corrupt one is rejected without touching the job.
	var j *jobstore.Job
	err := n.ride(ctx, n.redis(), func(ctx context.Context) (err error) { j, err = n.store.Get(ctx, t.JobId); return err })
	switch {
	case errors.Is(err, jobstore.ErrNotFound):
		log.WarnContext(ctx, "worker: the task's job does not exist (expired?); dropping it")
		return nil
	case err != nil:
		return err
	}
	if err := taskMatchesJob(t, j); err != nil {
		return queue.Reject(err)
	}
	if err := n.trustGate(ctx, t); err != nil { // excluded or quarantined: hand it back (trust.go)
		return err
	}
	var outcome jobstore.BeginOutcome
	var state jobstore.State
	err = n.ride(ctx, n.redis(), func(ctx context.Context) (err error) {
		outcome, state, err = n.store.Begin(ctx, t.JobId, t.Partition, d.Attempt, n.cfg.ID)
		return err
	})
	switch {
	case errors.Is(err, jobstore.ErrNotFound):
		log.WarnContext(ctx, "worker: the task's job does not exist (expired?); dropping it")
		return nil
	case err != nil:
		return err
	}
	span.SetAttributes(attribute.String("c2.begin", string(outcome)))
	switch outcome {
	case jobstore.BeginOK:
	case jobstore.BeginAlreadyDone:
		if state == jobstore.StateAssembling {
			return n.q.RequestAssemblyOf(ctx, t)
		}
		return nil
	default: // stale, closed
		log.InfoContext(ctx, "worker: dropping the partition", slog.String("begin", string(outcome)))
		return nil
	}

	if _, ok := n.prover.shapes[t.Shape]; !ok {
		return queue.Retry(fmt.Errorf("worker %s has no parameters for shape %s", n.cfg.ID, t.Shape), n.cfg.RetryDelay)
	}

	// Input.
	if err := n.hook(ctx, StageInput, d); err != nil {
		return err
	}
	start := time.Now()
	var out *c1.Output
	err = n.ride(ctx, n.nats(), func(ctx context.Context) (err error) { out, err = n.inputs.get(ctx, n.q, t); return err })
	if err != nil {
		return err
	}
	m.StageSeconds.WithLabelValues(telemetry.StageFetchInput).Observe(time.Since(start).Seconds())
	if err := n.checkOpen(ctx, t.JobId); err != nil {
		return err
	}

	// Synthesis, the proof through the device's interlock, verification:
	// the prover slot's stages, with the hooks before each and the cancel
	// check at the boundary between synthesis and proving.
	k := int(t.Partition)
	pr, err := sr.slot.ProvePartition(ctx, t.Shape, out, k, func(ctx context.Context, stage string) error {
		if stage == StageProve {
			if err := n.checkOpen(ctx, t.JobId); err != nil {
				return err
			}
		}
		return n.hook(ctx, stage, d)
	})
	tm.Synthesis, tm.LockWait, tm.Prove, tm.Verify = pr.Synthesis, pr.LockWait, pr.Prove, pr.Verify
	if se := (*StageError)(nil); errors.As(err, &se) {
		switch {
		case se.Stage == StageSynthesize && (errors.Is(se.Err, circuit.ErrInvalidInput) || errors.Is(se.Err, circuit.ErrUnsatisfied)):
			return queue.Permanent(se.Err)
		case se.Stage == StageProve && errors.Is(se.Err, interlock.ErrExceedsBudget),
			se.Stage == StageVerify: // another attempt may land on another device
			return queue.Retry(se.Err, n.cfg.RetryDelay)
		}
		return se.Err
	}
	if err != nil {
		return err
	}
	proof := pr.Proof

	// Record the result (fenced) and hand the job to the assembler when it
	// was the last partition.
	if err := n.hook(ctx, StageComplete, d); err != nil {
		return err
	}
	pb, err := proof.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encode proof: %w", err)
	}
	// A proof finished during a Redis outage is kept (the partition held)
	// and recorded when Redis answers again.
	var res jobstore.CompleteResult
	err = n.ride(ctx, n.redis(), func(ctx context.Context) (err error) {
		res, err = n.store.Complete(ctx, t.JobId, t.Partition, d.Attempt, pb, tm, n.cfg.ID)
		return err
	})
	switch {
	case errors.Is(err, jobstore.ErrNotFound):
		log.WarnContext(ctx, "worker: the job disappeared before its result was recorded")
		return nil
	case err != nil:
		return err
	}
	span.SetAttributes(attribute.String("c2.complete", string(res.Outcome)), attribute.Int("c2.done", res.Done))
	switch res.Outcome {
	case jobstore.Accepted:
		m.ProofsTotal.WithLabelValues("partition", t.Shape).Inc()
		log.InfoContext(ctx, "worker: partition proved", slog.Int("done", res.Done), slog.Int("partitions", res.Partitions),
			slog.Duration("synthesis", tm.Synthesis), slog.Duration("prove", tm.Prove), slog.Duration("lock_wait", tm.LockWait),
			slog.Duration("verify", tm.Verify))
	default:
		log.InfoContext(ctx, "worker: partition result not recorded", slog.String("outcome", string(res.Outcome)))
	}
	if res.State == jobstore.StateAssembling {
		if err := n.ride(ctx, n.nats(), func(ctx context.Context) error { return n.q.RequestAssemblyOf(ctx, t) }); err != nil {
			return err // redelivered: Begin says already_done and asks again
		}
	}
	return nil
}

func (n *Node) hook(ctx context.Context, stage string, d *queue.Delivery) error {
	if n.cfg.Hooks.BeforeStage == nil {
		return nil
	}
	return n.cfg.Hooks.BeforeStage(ctx, stage, d)
}

// checkOpen is the cancel check at a stage boundary.
func (n *Node) checkOpen(ctx context.Context, job string) error {
	var state jobstore.State
	err := n.ride(ctx, n.redis(), func(ctx context.Context) (err error) { state, err = n.store.JobState(ctx, job); return err })
	switch {
	case errors.Is(err, jobstore.ErrNotFound):
		return errJobClosed
	case err != nil:
		return err
	case state.Terminal():
		return fmt.Errorf("%w: %s", errJobClosed, state)
	}
	return nil
}

// panicLocation is the file:line where the recovered panic happened: the
// first frame after the runtime's panic machinery.
func panicLocation() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	inPanic := false
	for {
		f, more := frames.Next()
		if inPanic && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if strings.HasPrefix(f.Function, "runtime.gopanic") || strings.HasPrefix(f.Function, "runtime.panic") {
			inPanic = true
		}
		if !more {
			return "unknown location"
		}
	}
}

// taskMatchesJob checks a task against the job record it names: partition
// within the job's, the same shape, partition count and C1 blob.
func taskMatchesJob(t *c2clusterv1.PartitionTask, j *jobstore.Job) error {
	switch {
	case int(t.Partition) >= j.Partitions || int(t.Partitions) != j.Partitions:
		return fmt.Errorf("task %s.%d says %d partitions; job %s has %d", t.JobId, t.Partition, t.Partitions, j.ID, j.Partitions)
	case t.Shape != j.Shape:
		return fmt.Errorf("task %s.%d has shape %q; job %s has %q", t.JobId, t.Partition, t.Shape, j.ID, j.Shape)
	case t.BlobRef != j.BlobRef || t.BlobSize != j.BlobSize || !bytes.Equal(t.BlobSha256, j.BlobSHA256):
		return fmt.Errorf("task %s.%d names C1 blob %q (%d bytes); job %s has %q (%d bytes)", t.JobId, t.Partition, t.BlobRef, t.BlobSize, j.ID, j.BlobRef, j.BlobSize)
	}
	return nil
}
