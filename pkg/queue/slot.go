package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Delivery is one delivered task, handed to a Slot's handler.
type Delivery struct {
	Task *c2clusterv1.PartitionTask
	// Attempt is the delivery count (1 for the first delivery); use it as
	// the fencing number of the partition's result.
	Attempt int
	// Published is when the task entered the stream.
	Published time.Time
	// Reply is the delivery's acknowledgement subject: Release hands the
	// delivery back through it, from any connection (a restarted worker
	// releasing what its predecessor held).
	Reply string
}

// Handler proves one delivered task. ctx carries the producer's trace
// context (start the "partition" span from it) and is cancelled when the
// slot is aborted. The result steers the queue: nil → Ack; Permanent(err) →
// Term with err as reason; Retry(err, d) → NakWithDelay(d); any other error
// → NakWithDelay(NakDelay). A panic is recovered and treated as a transient
// error naming the file and line.
type Handler func(ctx context.Context, d *Delivery) error

// SlotConfig configures a Slot.
type SlotConfig struct {
	// Name identifies the slot in logs ("host/gpu0/1").
	Name string
	// Shapes this slot can prove. Required.
	Shapes []string
	// Lanes polled in this order. Default: the queue's lanes.
	Lanes []string
	// Handler proves a task. Required.
	Handler Handler
	// HeartbeatInterval between InProgress heartbeats while the handler
	// runs. Default AckWait/4; must be below AckWait.
	HeartbeatInterval time.Duration
	// IdlePoll is the longest wait between fetch passes when every lane is
	// empty; a publish on a polled subject wakes the slot sooner.
	// Default 1 s.
	IdlePoll time.Duration
	// Logger for delivery outcomes. Default slog.Default().
	Logger *slog.Logger
	// Paused, when set and true, keeps the slot from fetching (a
	// quarantined worker); it is asked again every IdlePoll.
	Paused func() bool
}

// Slot is one worker slot's fetch loop: one task at a time.
type Slot struct {
	q   *Queue
	cfg SlotConfig

	mu      sync.Mutex
	abort   context.CancelFunc
	aborted bool
}

// NewSlot validates cfg and returns a slot. Nothing runs until Run.
func (q *Queue) NewSlot(cfg SlotConfig) (*Slot, error) {
	if cfg.Handler == nil {
		return nil, fmt.Errorf("%w: SlotConfig.Handler is required", ErrInvalidConfig)
	}
	if len(cfg.Shapes) == 0 {
		return nil, fmt.Errorf("%w: SlotConfig.Shapes is empty", ErrInvalidConfig)
	}
	for _, s := range cfg.Shapes {
		if err := CheckName("shape", s); err != nil {
			return nil, fmt.Errorf("%w: SlotConfig.Shapes: %v", ErrInvalidConfig, err)
		}
	}
	if len(cfg.Lanes) == 0 {
		cfg.Lanes = q.cfg.Lanes
	}
	for _, l := range cfg.Lanes {
		if !q.cfg.HasLane(l) {
			return nil, fmt.Errorf("%w: SlotConfig.Lanes: lane %q is not configured (lanes %v)", ErrInvalidConfig, l, q.cfg.Lanes)
		}
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = q.cfg.AckWait / 4
	}
	if cfg.HeartbeatInterval <= 0 || cfg.HeartbeatInterval >= q.cfg.AckWait {
		return nil, fmt.Errorf("%w: SlotConfig.HeartbeatInterval %v must be in (0, AckWait %v)", ErrInvalidConfig, cfg.HeartbeatInterval, q.cfg.AckWait)
	}
	if cfg.IdlePoll == 0 {
		cfg.IdlePoll = IdlePollDefault
	}
	if cfg.IdlePoll < 0 {
		return nil, fmt.Errorf("%w: SlotConfig.IdlePoll %v is negative", ErrInvalidConfig, cfg.IdlePoll)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Slot{q: q, cfg: cfg}, nil
}

// Run fetches and handles tasks until ctx is cancelled, then returns nil
// after the in-flight handler (if any) has finished: cancelling ctx stops
// pulling but lets the current partition complete (phase one of a drain).
// Abort cancels the in-flight handler's context (phase two); its task is
// handed back to the queue at once (Nak without delay).
func (s *Slot) Run(ctx context.Context) error {
	hctx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	s.mu.Lock()
	s.abort = abort
	if s.aborted {
		abort()
	}
	s.mu.Unlock()

	type source struct{ lane, shape string }
	var sources []source
	for _, lane := range s.cfg.Lanes {
		for _, shape := range s.cfg.Shapes {
			sources = append(sources, source{lane, shape})
		}
	}

	// A publish on any polled subject wakes an idle slot before IdlePoll.
	wake := make(chan struct{}, 1)
	var subs []*nats.Subscription
	defer func() {
		for _, sub := range subs {
			_ = sub.Unsubscribe()
		}
	}()
	for _, shape := range s.cfg.Shapes {
		sub, err := s.q.nc.Subscribe(s.q.Subject(shape, "*"), func(*nats.Msg) {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		if err != nil {
			return fmt.Errorf("queue: slot %s: wake subscription: %w", s.cfg.Name, err)
		}
		subs = append(subs, sub)
	}
	failing := map[source]bool{}
	idle := time.NewTimer(s.cfg.IdlePoll)
	defer idle.Stop()

	for {
		if ctx.Err() != nil || hctx.Err() != nil {
			return nil
		}
		if s.cfg.Paused != nil && s.cfg.Paused() {
			idle.Reset(s.cfg.IdlePoll)
			select {
			case <-ctx.Done():
				return nil
			case <-hctx.Done():
				return nil
			case <-idle.C:
			}
			continue
		}
		got := false
		for _, src := range sources {
			if ctx.Err() != nil {
				return nil
			}
			c, err := s.q.consumer(ctx, src.shape, src.lane)
			if err != nil {
				// NATS down or JetStream unavailable: retry next pass.
				if !failing[src] {
					s.cfg.Logger.WarnContext(ctx, "queue: consumer unavailable; retrying", slog.String("slot", s.cfg.Name), slog.Any("err", err))
				}
				failing[src] = true
				continue
			}
			msg, err := fetchOne(c)
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, nats.ErrNoResponders) {
				s.q.forgetConsumer(src.shape, src.lane) // deleted under us: recreate next pass
			}
			if err != nil {
				if !failing[src] { // log once per failure streak
					s.cfg.Logger.WarnContext(ctx, "queue: fetch failed; retrying", slog.String("slot", s.cfg.Name),
						slog.String("consumer", ConsumerName(src.shape, src.lane)), slog.Any("err", err))
				}
				failing[src] = true
				continue
			}
			delete(failing, src)
			if msg == nil {
				continue
			}
			s.handle(hctx, msg)
			got = true
			break // restart from the highest lane
		}
		if got {
			continue
		}
		idle.Reset(s.cfg.IdlePoll)
		select {
		case <-ctx.Done():
			return nil
		case <-hctx.Done():
			return nil
		case <-wake:
		case <-idle.C:
		}
	}
}

// Abort cancels the in-flight handler's context (and any future one): the
// second phase of a drain.
func (s *Slot) Abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	if s.abort != nil {
		s.abort()
	}
}

// fetchOne pulls at most one message without waiting; nil when none.
func fetchOne(c jetstream.Consumer) (jetstream.Msg, error) {
	batch, err := c.FetchNoWait(1)
	if err != nil {
		return nil, err
	}
	var msg jetstream.Msg
	for m := range batch.Messages() {
		msg = m
	}
	if err := batch.Error(); err != nil && msg == nil && !errors.Is(err, nats.ErrTimeout) {
		return nil, err
	}
	return msg, nil
}

func (s *Slot) handle(ctx context.Context, msg jetstream.Msg) {
	log := s.cfg.Logger.With(slog.String("slot", s.cfg.Name), slog.String("subject", msg.Subject()))
	meta, err := msg.Metadata()
	if err != nil {
		log.ErrorContext(ctx, "queue: message without JetStream metadata", slog.Any("err", err))
		_ = msg.Term()
		return
	}
	task, err := DecodeTask(msg.Data())
	if err != nil {
		// Undecodable: nothing in it can be trusted, not even the message id
		// header: terminate it as a rejected task that names no job.
		log.ErrorContext(ctx, "queue: terminating undecodable task", slog.Uint64("seq", meta.Sequence.Stream), slog.Any("err", err))
		_ = msg.TermWithReason(rejectReason(meta.Sequence.Stream, err))
		return
	}
	d := &Delivery{Task: task, Attempt: int(meta.NumDelivered), Published: meta.Timestamp, Reply: msg.Reply()}
	log = log.With(telemetry.LogJob(task.JobId), telemetry.LogPartition(int(task.Partition)), telemetry.LogAttempt(d.Attempt))
	hctx := telemetry.ExtractNATS(ctx, msg.Headers())

	herr := s.runWithHeartbeat(hctx, msg, d)
	id := MsgID(task.JobId, task.Partition)
	var retry *RetryError
	switch {
	case herr == nil:
		if err := msg.DoubleAck(context.WithoutCancel(ctx)); err != nil {
			log.WarnContext(hctx, "queue: ack failed (the task will be redelivered)", slog.Any("err", err))
		}
	case errors.Is(herr, ErrRejected):
		log.WarnContext(hctx, "queue: terminating task: rejected", slog.Any("err", herr))
		if err := msg.TermWithReason(rejectReason(meta.Sequence.Stream, herr)); err != nil {
			log.WarnContext(hctx, "queue: term failed", slog.Any("err", err))
		}
	case errors.Is(herr, ErrBadInput):
		log.WarnContext(hctx, "queue: terminating task: bad input", slog.Any("err", herr))
		if err := msg.TermWithReason(termReason(id, herr)); err != nil {
			log.WarnContext(hctx, "queue: term failed", slog.Any("err", err))
		}
	case ctx.Err() != nil:
		// Aborted: hand it back at once for another slot.
		log.InfoContext(hctx, "queue: handing task back (slot aborted)", slog.Any("err", herr))
		_ = msg.Nak()
	default:
		delay := s.q.cfg.NakDelay
		if errors.As(herr, &retry) && retry.Delay > 0 {
			delay = retry.Delay
		}
		log.WarnContext(hctx, "queue: retrying task", slog.Duration("delay", delay), slog.Any("err", herr))
		_ = msg.NakWithDelay(delay)
	}
}

// runWithHeartbeat runs the handler, sending InProgress on a ticker until it
// returns, and turns a panic into an error.
func (s *Slot) runWithHeartbeat(ctx context.Context, msg jetstream.Msg, d *Delivery) (err error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	defer func() {
		close(done)
		wg.Wait()
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("queue: handler panic at %s: %v", panicLocation(), r)
		}
	}()
	return s.cfg.Handler(ctx, d)
}

// maxReasonLen bounds a Term reason (it travels in an advisory).
const maxReasonLen = 1024

// termReason is "<job>.<partition>: <error>": a terminated task is deleted
// from the WorkQueue stream at once, so the dead-letter handler reads job
// and partition from the reason.
func termReason(id string, err error) string {
	r := id + ": " + err.Error()
	if len(r) > maxReasonLen {
		r = r[:maxReasonLen]
	}
	return r
}

// rejectedPrefix starts the Term reason of a rejected task; a message id
// ("<job>.<partition>") never does.
const rejectedPrefix = "rejected task"

// rejectReason is the Term reason of a task that names no trusted job:
// "rejected task (stream seq N): <error>".
func rejectReason(seq uint64, err error) string {
	r := fmt.Sprintf("%s (stream seq %d): %s", rejectedPrefix, seq, err)
	if len(r) > maxReasonLen {
		r = r[:maxReasonLen]
	}
	return r
}

// panicLocation is the file:line of the frame that panicked, read from the
// stack of a deferred recover.
func panicLocation() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	sawPanic := false
	for {
		f, more := frames.Next()
		if sawPanic && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if f.Function == "runtime.gopanic" || strings.HasPrefix(f.Function, "runtime.panic") {
			sawPanic = true
		}
		if !more {
			return "unknown location"
		}
	}
}
