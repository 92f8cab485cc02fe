package queue

import (
	"context"
	"fmt"
	"strconv"

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
