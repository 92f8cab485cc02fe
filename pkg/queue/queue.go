package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Advisory subject prefixes (nats-server) captured by the dead-letter stream.
const (
	advisoryMaxDeliveries = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
	advisoryTerminated    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"
	assembleSubjectSuffix = "assemble"
)

// Queue is a handle on the provisioned JetStream resources. It is safe for
// concurrent use.
type Queue struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	cfg   Config
	parts jetstream.Stream
	ctl   jetstream.Stream
	dlq   jetstream.Stream
	blobs jetstream.ObjectStore

	mu        sync.Mutex
	consumers map[string]jetstream.Consumer
}

// Open provisions (create or update, so it is safe from every process and on
// every start) the partition stream, the control stream, the dead-letter
// stream and the blob bucket, and returns a handle. nc stays owned by the
// caller.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Queue, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("queue: jetstream: %w", err)
	}
	q := &Queue{nc: nc, js: js, cfg: cfg, consumers: map[string]jetstream.Consumer{}}
	q.parts, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "c2cluster partition tasks (WorkQueue)",
		Subjects:    []string{cfg.SubjectPrefix + ".>"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		MaxAge:      cfg.MaxAge,
		MaxMsgSize:  cfg.MaxTaskBytes,
		Discard:     jetstream.DiscardOld,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", cfg.Stream, err)
	}
	q.ctl, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        cfg.ControlStream,
		Description: "c2cluster control requests (assembly)",
		Subjects:    []string{q.controlSubject(">")},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		MaxAge:      cfg.MaxAge,
		MaxMsgSize:  cfg.MaxTaskBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", cfg.ControlStream, err)
	}
	q.dlq, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        cfg.DeadLetterStream,
		Description: "c2cluster dead letters: MAX_DELIVERIES and MSG_TERMINATED advisories of " + cfg.Stream,
		Subjects: []string{
			advisoryMaxDeliveries + "." + cfg.Stream + ".*",
			advisoryTerminated + "." + cfg.Stream + ".*",
		},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   cfg.Storage,
		Replicas:  cfg.Replicas,
		MaxAge:    cfg.MaxAge,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", cfg.DeadLetterStream, err)
	}
	q.blobs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      cfg.BlobBucket,
		Description: "c2cluster C1 blobs by job id",
		TTL:         cfg.MaxAge,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: object store %s: %w", cfg.BlobBucket, err)
	}
	return q, nil
}

// Reachable checks that JetStream answers (a round trip to the server's
// account info); nil when it does.
func (q *Queue) Reachable(ctx context.Context) error {
	if st := q.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("queue: NATS connection %s", st)
	}
	if _, err := q.js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("queue: JetStream: %w", err)
	}
	return nil
}

// Config returns the effective configuration (defaults filled in).
func (q *Queue) Config() Config { return q.cfg }

// JetStream returns the underlying JetStream handle.
func (q *Queue) JetStream() jetstream.JetStream { return q.js }

// Subject is the task subject of a shape and lane.
func (q *Queue) Subject(shape, lane string) string {
	return q.cfg.SubjectPrefix + "." + shape + "." + lane
}

func (q *Queue) controlSubject(suffix string) string {
	return q.cfg.ControlPrefix + "." + suffix
}

// Published is the result of publishing one task.
type Published struct {
	// Seq is the task's stream sequence (of the first publication when this
	// one was a duplicate); keep it to delete the task on cancel.
	Seq uint64
	// Duplicate is true when the stream already held this task id.
	Duplicate bool
}

// Publish puts a task on its shape and lane subject with Nats-Msg-Id
// TaskMsgID ("<job>.<partition>", ".r<round>" added for a re-queued task)
// and ctx's trace context in the headers, under a
// "publish partition" producer span. It waits for the stream's ack.
func (q *Queue) Publish(ctx context.Context, t *c2clusterv1.PartitionTask) (Published, error) {
	if !q.cfg.HasLane(t.GetLane()) {
		return Published{}, fmt.Errorf("%w: lane %q is not configured (lanes %v)", ErrBadTask, t.GetLane(), q.cfg.Lanes)
	}
	data, err := EncodeTask(t)
	if err != nil {
		return Published{}, err
	}
	ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanPublish,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(telemetry.AttrJob.String(t.JobId), telemetry.AttrPartition.Int(int(t.Partition)),
			telemetry.AttrShape.String(t.Shape), telemetry.AttrLane.String(t.Lane)))
	defer span.End()
	msg := &nats.Msg{Subject: q.Subject(t.Shape, t.Lane), Header: nats.Header{}, Data: data}
	telemetry.InjectNATS(ctx, msg.Header)
	ack, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(TaskMsgID(t)), jetstream.WithExpectStream(q.cfg.Stream))
	if err != nil {
		span.RecordError(err)
		return Published{}, fmt.Errorf("queue: publish %s: %w", TaskMsgID(t), err)
	}
	span.SetAttributes(attribute.Int64("messaging.message.stream_seq", int64(ack.Sequence)), attribute.Bool("duplicate", ack.Duplicate))
	return Published{Seq: ack.Sequence, Duplicate: ack.Duplicate}, nil
}

// Republish puts a lost task (one no longer in the stream, its partition
// unproved) on the queue again, with Nats-Msg-Id "<job>.<partition>.w<key>"
// so that the stream does not take it for a duplicate of the lost one;
// the same key deduplicates a retried republish.
func (q *Queue) Republish(ctx context.Context, t *c2clusterv1.PartitionTask, key string) (Published, error) {
	if !q.cfg.HasLane(t.GetLane()) {
		return Published{}, fmt.Errorf("%w: lane %q is not configured (lanes %v)", ErrBadTask, t.GetLane(), q.cfg.Lanes)
	}
	data, err := EncodeTask(t)
	if err != nil {
		return Published{}, err
	}
	msg := &nats.Msg{Subject: q.Subject(t.Shape, t.Lane), Header: nats.Header{}, Data: data}
	telemetry.InjectNATS(ctx, msg.Header)
	id := MsgID(t.JobId, t.Partition) + ".w" + key
	ack, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id), jetstream.WithExpectStream(q.cfg.Stream))
	if err != nil {
		return Published{}, fmt.Errorf("queue: republish %s: %w", id, err)
	}
	return Published{Seq: ack.Sequence, Duplicate: ack.Duplicate}, nil
}

// HasTask reports whether the stream still holds the task at seq (waiting
// or delivered and not yet acked).
func (q *Queue) HasTask(ctx context.Context, seq uint64) (bool, error) {
	_, err := q.parts.GetMsg(ctx, seq)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrMsgNotFound) || isNotFoundAPI(err):
		return false, nil
	}
	return false, fmt.Errorf("queue: read task seq %d: %w", seq, err)
}

// DeleteTasks removes pending tasks by stream sequence (a cancelled job's).
// Tasks already consumed are skipped. It returns how many it removed.
func (q *Queue) DeleteTasks(ctx context.Context, seqs []uint64) (int, error) {
	n := 0
	for _, seq := range seqs {
		err := q.parts.DeleteMsg(ctx, seq)
		switch {
		case err == nil:
			n++
		case errors.Is(err, jetstream.ErrMsgNotFound) || isNotFoundAPI(err):
		default:
			return n, fmt.Errorf("queue: delete task seq %d: %w", seq, err)
		}
	}
	return n, nil
}

// isNotFoundAPI matches the server's "message not found" answers: a 404,
// or a failed delete (err_code 10057) whose description says no message.
func isNotFoundAPI(err error) bool {
	// DeleteMsg formats the server's API error into text behind
	// ErrMsgDeleteUnsuccessful, so only the text is left to match.
	if errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return strings.Contains(err.Error(), "no message found") || strings.Contains(err.Error(), "err_code=10057")
	}
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.Code == 404 || apiErr.ErrorCode == jetstream.JSErrCodeMessageNotFound ||
		strings.Contains(apiErr.Description, "no message found")
}

// LaneDepth is the backlog of one shape and lane.
type LaneDepth struct {
	Shape, Lane string
	// Pending tasks wait for a slot; InFlight ones are delivered and not
	// yet acked.
	Pending, InFlight uint64
}

// Depth returns the tasks waiting and in flight per shape and lane, sorted
// by shape then lane priority. Lanes with neither are left out.
func (q *Queue) Depth(ctx context.Context) ([]LaneDepth, error) {
	info, err := q.parts.Info(ctx, jetstream.WithSubjectFilter(q.cfg.SubjectPrefix+".>"))
	if err != nil {
		return nil, fmt.Errorf("queue: stream info: %w", err)
	}
	inFlight := map[string]uint64{}
	lister := q.parts.ListConsumers(ctx)
	for ci := range lister.Info() {
		if ci.Config.FilterSubject != "" {
			inFlight[ci.Config.FilterSubject] += uint64(ci.NumAckPending)
		}
	}
	if err := lister.Err(); err != nil {
		return nil, fmt.Errorf("queue: list consumers: %w", err)
	}
	var out []LaneDepth
	prefix := q.cfg.SubjectPrefix + "."
	for subj, n := range info.State.Subjects {
		rest, ok := strings.CutPrefix(subj, prefix)
		if !ok {
			continue
		}
		shape, lane, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		f := min(inFlight[subj], n)
		out = append(out, LaneDepth{Shape: shape, Lane: lane, Pending: n - f, InFlight: f})
	}
	rank := map[string]int{}
	for i, l := range q.cfg.Lanes {
		rank[l] = i
	}
	slices.SortFunc(out, func(a, b LaneDepth) int {
		return cmp.Or(strings.Compare(a.Shape, b.Shape), cmp.Compare(rank[a.Lane], rank[b.Lane]))
	})
	return out, nil
}

// consumer returns (creating or updating once per process) the durable pull
// consumer of a shape and lane, shared by all workers.
func (q *Queue) consumer(ctx context.Context, shape, lane string) (jetstream.Consumer, error) {
	name := ConsumerName(shape, lane)
	q.mu.Lock()
	c, ok := q.consumers[name]
	q.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := q.parts.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "c2cluster partitions of shape " + shape + ", lane " + lane,
		FilterSubject: q.Subject(shape, lane),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       q.cfg.AckWait,
		MaxDeliver:    q.cfg.MaxDeliver,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: consumer %s: %w", name, err)
	}
	q.mu.Lock()
	q.consumers[name] = c
	q.mu.Unlock()
	return c, nil
}

func (q *Queue) forgetConsumer(shape, lane string) {
	q.mu.Lock()
	delete(q.consumers, ConsumerName(shape, lane))
	q.mu.Unlock()
}

// ConsumerName is the durable consumer of a shape and lane.
func ConsumerName(shape, lane string) string { return "part-" + shape + "-" + lane }

// RequestAssembly asks the coordinator to assemble a job whose partitions
// are all in. It is idempotent within the duplicate window (Nats-Msg-Id
// "<job>.assemble") and durable: no coordinator needs to be running.
func (q *Queue) RequestAssembly(ctx context.Context, jobID string) error {
	if err := CheckName("job id", jobID); err != nil {
		return fmt.Errorf("%w: %v", ErrBadTask, err)
	}
	msg := &nats.Msg{Subject: q.controlSubject(assembleSubjectSuffix), Header: nats.Header{}, Data: []byte(jobID)}
	telemetry.InjectNATS(ctx, msg.Header)
	if _, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(jobID+"."+assembleSubjectSuffix)); err != nil {
		return fmt.Errorf("queue: request assembly of %s: %w", jobID, err)
	}
	return nil
}

// waitCtx returns d capped to ctx's remaining time.
func waitCtx(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if r := time.Until(dl); r < d {
			return max(r, time.Millisecond)
		}
	}
	return d
}
