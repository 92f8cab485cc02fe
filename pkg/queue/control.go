package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Durable consumer names of the coordinator's control loops.
const (
	AssemblerConsumer  = "assembler"
	DeadLetterConsumer = "dead-letters"
)

// DeadLetterKind says why a task became a dead letter.
type DeadLetterKind string

const (
	// DeadMaxDeliveries: the task was delivered MaxDeliver times without an
	// ack (crashes, timeouts, transient errors every time).
	DeadMaxDeliveries DeadLetterKind = "max_deliveries"
	// DeadTerminated: a worker terminated the task (bad input).
	DeadTerminated DeadLetterKind = "terminated"
	// DeadRejected: a worker rejected the task as untrustworthy (it does
	// not decode, or does not match the job it names): no job is named.
	DeadRejected DeadLetterKind = "rejected"
)

// DeadLetter is a task that will not be retried.
type DeadLetter struct {
	Kind      DeadLetterKind
	JobID     string
	Partition uint32
	// Task is the decoded task when it could still be read from the stream
	// (max deliveries), else nil.
	Task       *c2clusterv1.PartitionTask
	StreamSeq  uint64
	Deliveries uint64
	// Reason is the worker's termination reason (without the
	// "<job>.<partition>: " prefix), empty for max deliveries.
	Reason string
}

// advisory is the subset of nats-server's MAX_DELIVERIES and
// MSG_TERMINATED advisories that we read.
type advisory struct {
	Type       string `json:"type"`
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
	Reason     string `json:"reason"`
}

// ParseAdvisory decodes a dead-letter advisory captured by the dead-letter
// stream. It fails with a clear error on anything else.
func ParseAdvisory(subject string, data []byte) (DeadLetter, error) {
	var a advisory
	if err := json.Unmarshal(data, &a); err != nil {
		return DeadLetter{}, fmt.Errorf("queue: advisory on %s: %w", subject, err)
	}
	d := DeadLetter{StreamSeq: a.StreamSeq, Deliveries: a.Deliveries}
	switch {
	case strings.HasPrefix(subject, advisoryMaxDeliveries+"."):
		d.Kind = DeadMaxDeliveries
	case strings.HasPrefix(subject, advisoryTerminated+".") && strings.HasPrefix(a.Reason, rejectedPrefix):
		d.Kind, d.Reason = DeadRejected, a.Reason
	case strings.HasPrefix(subject, advisoryTerminated+"."):
		d.Kind = DeadTerminated
		id, reason, ok := strings.Cut(a.Reason, ": ")
		if !ok {
			return DeadLetter{}, fmt.Errorf("queue: terminated advisory (seq %d): reason %q lacks the \"<job>.<partition>: \" prefix", a.StreamSeq, a.Reason)
		}
		job, part, err := ParseMsgID(id)
		if err != nil {
			return DeadLetter{}, fmt.Errorf("queue: terminated advisory (seq %d): %w", a.StreamSeq, err)
		}
		d.JobID, d.Partition, d.Reason = job, part, reason
	default:
		return DeadLetter{}, fmt.Errorf("queue: %s is not a dead-letter advisory subject", subject)
	}
	if a.StreamSeq == 0 {
		return DeadLetter{}, fmt.Errorf("queue: advisory on %s has no stream_seq", subject)
	}
	return d, nil
}

// LoopConfig configures RunAssembly and RunDeadLetters.
type LoopConfig struct {
	// FetchWait is how long one pull waits for a message. Default 1 s.
	FetchWait time.Duration
	// RetryDelay is the redelivery delay when the callback fails. Default
	// the queue's NakDelay.
	RetryDelay time.Duration
	// Logger, default slog.Default().
	Logger *slog.Logger
}

func (c LoopConfig) withDefaults(q *Queue) LoopConfig {
	if c.FetchWait <= 0 {
		c.FetchWait = IdlePollDefault
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = q.cfg.NakDelay
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// RunAssembly consumes assembly requests until ctx is cancelled, calling fn
// with each job id (and the requester's trace context). A request is acked
// when fn returns nil and redelivered after RetryDelay otherwise, so fn must
// be idempotent. Several coordinators may run it: each request goes to one.
func (q *Queue) RunAssembly(ctx context.Context, cfg LoopConfig, fn func(ctx context.Context, jobID string) error) error {
	cfg = cfg.withDefaults(q)
	c, err := q.ctl.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       AssemblerConsumer,
		FilterSubject: q.controlSubject(assembleSubjectSuffix),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       q.cfg.AckWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("queue: assembler consumer: %w", err)
	}
	return q.pullLoop(ctx, c, cfg, func(ctx context.Context, msg jetstream.Msg) error {
		job := string(msg.Data())
		if err := CheckName("job id", job); err != nil {
			cfg.Logger.ErrorContext(ctx, "queue: dropping malformed assembly request", slog.Any("err", err))
			return nil
		}
		return fn(telemetry.ExtractNATS(ctx, msg.Headers()), job)
	})
}

// RunDeadLetters consumes captured dead-letter advisories until ctx is
// cancelled. For a max-deliveries advisory it reads the task by stream
// sequence to name job and partition and, once fn succeeds, deletes it from
// the stream; a task already gone (a cancelled job's) is skipped. For a
// termination it reads job and partition from the reason. fn must be
// idempotent: it is retried after RetryDelay when it fails.
func (q *Queue) RunDeadLetters(ctx context.Context, cfg LoopConfig, fn func(ctx context.Context, d DeadLetter) error) error {
	cfg = cfg.withDefaults(q)
	c, err := q.dlq.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       DeadLetterConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       q.cfg.AckWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("queue: dead-letter consumer: %w", err)
	}
	return q.pullLoop(ctx, c, cfg, func(ctx context.Context, msg jetstream.Msg) error {
		d, err := ParseAdvisory(msg.Subject(), msg.Data())
		if err != nil {
			cfg.Logger.ErrorContext(ctx, "queue: dropping malformed advisory", slog.Any("err", err))
			return nil
		}
		if d.Kind == DeadMaxDeliveries {
			raw, err := q.parts.GetMsg(ctx, d.StreamSeq)
			if errors.Is(err, jetstream.ErrMsgNotFound) || isNotFoundAPI(err) {
				cfg.Logger.InfoContext(ctx, "queue: dead letter already gone (cancelled or handled)", slog.Uint64("seq", d.StreamSeq))
				return nil
			}
			if err != nil {
				return fmt.Errorf("queue: read dead task seq %d: %w", d.StreamSeq, err)
			}
			if id := raw.Header.Get(jetstream.MsgIDHeader); id != "" {
				d.JobID, d.Partition, err = ParseMsgID(id)
			}
			if t, terr := DecodeTask(raw.Data); terr == nil {
				d.Task, d.JobID, d.Partition, err = t, t.JobId, t.Partition, nil
			}
			if err != nil || d.JobID == "" {
				cfg.Logger.ErrorContext(ctx, "queue: dead task names no job; deleting it", slog.Uint64("seq", d.StreamSeq))
				_, derr := q.DeleteTasks(ctx, []uint64{d.StreamSeq})
				return derr
			}
			ctx = telemetry.ExtractNATS(ctx, raw.Header)
			if err := fn(ctx, d); err != nil {
				return err
			}
			_, err = q.DeleteTasks(ctx, []uint64{d.StreamSeq})
			return err
		}
		return fn(ctx, d)
	})
}

// streakLogEvery is how often pullLoop logs a failure streak that lasts.
const streakLogEvery = 5 * time.Minute

// pullLoop fetches one message at a time and acks it when fn returns nil,
// naks it with RetryDelay otherwise. A failure streak (a fetch or fn
// failing again and again, as during a NATS or Redis outage) is logged
// once when it starts and once when it ends, not on every retry: the
// outage itself is the dependency tracker's to report. A streak that
// lasts is logged again every streakLogEvery.
func (q *Queue) pullLoop(ctx context.Context, c jetstream.Consumer, cfg LoopConfig, fn func(context.Context, jetstream.Msg) error) error {
	var fetchFails, msgFails int
	var fetchLogged, msgLogged time.Time
	name := ""
	if ci := c.CachedInfo(); ci != nil {
		name = ci.Name
	}
	for ctx.Err() == nil {
		batch, err := c.Fetch(1, jetstream.FetchMaxWait(waitCtx(ctx, cfg.FetchWait)))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if fetchFails == 0 || time.Since(fetchLogged) >= streakLogEvery {
				cfg.Logger.WarnContext(ctx, "queue: fetch failed; retrying until it succeeds", slog.String("consumer", name),
					slog.Int("failed_fetches", fetchFails), slog.Any("err", err))
				fetchLogged = time.Now()
			}
			fetchFails++
			select {
			case <-ctx.Done():
			case <-time.After(cfg.FetchWait):
			}
			continue
		}
		if fetchFails > 0 {
			cfg.Logger.InfoContext(ctx, "queue: fetching again", slog.String("consumer", name), slog.Int("failed_fetches", fetchFails))
			fetchFails = 0
		}
		for msg := range batch.Messages() {
			if err := fn(ctx, msg); err != nil {
				if msgFails == 0 || time.Since(msgLogged) >= streakLogEvery {
					cfg.Logger.WarnContext(ctx, "queue: control message failed; retrying until it succeeds", slog.String("subject", msg.Subject()),
						slog.Int("failed_attempts", msgFails), slog.Any("err", err))
					msgLogged = time.Now()
				} else {
					cfg.Logger.DebugContext(ctx, "queue: control message failed again", slog.String("subject", msg.Subject()), slog.Any("err", err))
				}
				msgFails++
				_ = msg.NakWithDelay(cfg.RetryDelay)
				continue
			}
			if msgFails > 0 {
				cfg.Logger.InfoContext(ctx, "queue: control messages succeed again", slog.String("subject", msg.Subject()), slog.Int("failed_attempts", msgFails))
				msgFails = 0
			}
			if err := msg.DoubleAck(context.WithoutCancel(ctx)); err != nil {
				cfg.Logger.WarnContext(ctx, "queue: ack failed", slog.Any("err", err))
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			cfg.Logger.DebugContext(ctx, "queue: fetch ended", slog.Any("err", err))
		}
	}
	return nil
}
