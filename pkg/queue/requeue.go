package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// RequestAssemblyOf asks for the assembly of t's job after t's partition
// was recorded: RequestAssembly for a first publication; for a task the
// coordinator re-queued (Round > 0) the request's Nats-Msg-Id is
// "<job>.assemble.r<round>", so it is not taken for a duplicate of the
// job's earlier assembly request.
func (q *Queue) RequestAssemblyOf(ctx context.Context, t *c2clusterv1.PartitionTask) error {
	if t.GetRound() == 0 {
		return q.RequestAssembly(ctx, t.GetJobId())
	}
	jobID := t.GetJobId()
	if err := CheckName("job id", jobID); err != nil {
		return fmt.Errorf("%w: %v", ErrBadTask, err)
	}
	msg := &nats.Msg{Subject: q.controlSubject(assembleSubjectSuffix), Header: nats.Header{}, Data: []byte(jobID)}
	telemetry.InjectNATS(ctx, msg.Header)
	id := jobID + "." + assembleSubjectSuffix + ".r" + strconv.FormatUint(uint64(t.GetRound()), 10)
	if _, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id)); err != nil {
		return fmt.Errorf("queue: request assembly of %s (round %d): %w", jobID, t.GetRound(), err)
	}
	return nil
}

// RequestAssemblyAgain asks once more for the assembly of a job that has
// stayed assembling (its request lost, or taken for a duplicate of a
// forged one): Nats-Msg-Id "<job>.assemble.w<key>", so the same key
// deduplicates a repeated call. It reports whether this call published
// the request (false: a duplicate).
func (q *Queue) RequestAssemblyAgain(ctx context.Context, jobID, key string) (bool, error) {
	if err := CheckName("job id", jobID); err != nil {
		return false, fmt.Errorf("%w: %v", ErrBadTask, err)
	}
	msg := &nats.Msg{Subject: q.controlSubject(assembleSubjectSuffix), Header: nats.Header{}, Data: []byte(jobID)}
	telemetry.InjectNATS(ctx, msg.Header)
	id := jobID + "." + assembleSubjectSuffix + ".w" + key
	ack, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id))
	if err != nil {
		return false, fmt.Errorf("queue: request assembly of %s again: %w", jobID, err)
	}
	return !ack.Duplicate, nil
}

// Release hands a delivery back to the queue at once (a Nak sent to its
// acknowledgement subject, Delivery.Reply), from any connection: a worker
// restarted under the same id releases the deliveries its predecessor held
// instead of leaving them to AckWait. A delivery that was acked or
// redelivered meanwhile is not affected. reply must be an acknowledgement
// subject of the task stream.
func (q *Queue) Release(ctx context.Context, reply string) error {
	prefix := "$JS.ACK." + q.cfg.Stream + "."
	if !strings.HasPrefix(reply, prefix) || checkAckSubject(reply[len(prefix):]) != nil {
		return fmt.Errorf("%w: %q is not an acknowledgement subject of stream %s", ErrBadTask, reply, q.cfg.Stream)
	}
	if err := q.nc.Publish(reply, []byte("-NAK")); err != nil {
		return fmt.Errorf("queue: release %s: %w", reply, err)
	}
	if err := q.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("queue: release %s: %w", reply, err)
	}
	return nil
}

// checkAckSubject accepts the tokens after "$JS.ACK.<stream>.": the
// consumer, then numbers (delivery count, sequences, time, pending).
func checkAckSubject(rest string) error {
	toks := strings.Split(rest, ".")
	if len(toks) < 6 {
		return fmt.Errorf("%d tokens", len(toks))
	}
	if err := checkToken(toks[0]); err != nil {
		return err
	}
	for _, tok := range toks[1:] {
		if tok == "" || strings.Trim(tok, "0123456789") != "" {
			return fmt.Errorf("token %q is not a number", tok)
		}
	}
	return nil
}

// Excludes reports whether t names worker among the workers that must not
// prove it.
func Excludes(t *c2clusterv1.PartitionTask, worker string) bool {
	for _, w := range t.GetExcludedWorkers() {
		if w == worker {
			return true
		}
	}
	return false
}
