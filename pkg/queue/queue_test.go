package queue_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, queuetest.LeakOptions()...) }

type bundle struct {
	q   *queue.Queue
	nc  *nats.Conn
	ctx context.Context
}

func setup(t *testing.T, cfg queue.Config) bundle {
	t.Helper()
	srv := queuetest.Server(t)
	nc := queuetest.Conn(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	q, err := queue.Open(ctx, nc, cfg)
	require.NoError(t, err)
	return bundle{q: q, nc: nc, ctx: ctx}
}

func task(job string, p, n uint32, lane string) *c2clusterv1.PartitionTask {
	sum := sha256.Sum256([]byte(job))
	return &c2clusterv1.PartitionTask{JobId: job, Partition: p, Partitions: n, Shape: "test", Lane: lane,
		BlobRef: job, BlobSize: 1, BlobSha256: sum[:], EnqueuedUnixMs: time.Now().UnixMilli()}
}

// runSlot runs a slot in the background until the test ends.
func runSlot(t *testing.T, b bundle, cfg queue.SlotConfig) *queue.Slot {
	t.Helper()
	if cfg.Shapes == nil {
		cfg.Shapes = []string{"test"}
	}
	s, err := b.q.NewSlot(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return s
}

func runDeadLetters(t *testing.T, b bundle) <-chan queue.DeadLetter {
	out := make(chan queue.DeadLetter, 16)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() {
		done <- b.q.RunDeadLetters(ctx, queue.LoopConfig{FetchWait: 200 * time.Millisecond}, func(_ context.Context, d queue.DeadLetter) error {
			out <- d
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return out
}

func recv[T any](t *testing.T, ch <-chan T, within time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("nothing received within %v", within)
		panic("unreachable")
	}
}

func TestPublishDeduplicatesByMsgID(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	p1, err := b.q.Publish(b.ctx, task("j1", 0, 2, "normal"))
	require.NoError(t, err)
	require.False(t, p1.Duplicate)
	p2, err := b.q.Publish(b.ctx, task("j1", 0, 2, "normal"))
	require.NoError(t, err)
	require.True(t, p2.Duplicate)
	require.Equal(t, p1.Seq, p2.Seq)
	_, err = b.q.Publish(b.ctx, task("j1", 1, 2, "normal"))
	require.NoError(t, err)

	depth, err := b.q.Depth(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []queue.LaneDepth{{Shape: "test", Lane: "normal", Pending: 2}}, depth)

	_, err = b.q.Publish(b.ctx, task("j1", 0, 2, "urgent"))
	require.ErrorIs(t, err, queue.ErrBadTask)
	_, err = b.q.Publish(b.ctx, task("j.1", 0, 2, "normal"))
	require.ErrorIs(t, err, queue.ErrBadTask)
}

func TestPriorityLanesServedInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	// Low first, high last: a FIFO would serve them in publish order.
	for _, lane := range []string{"low", "normal", "high"} {
		for p := uint32(0); p < 3; p++ {
			_, err := b.q.Publish(b.ctx, task("job-"+lane, p, 3, lane))
			require.NoError(t, err)
		}
	}
	var got []string
	all := make(chan struct{})
	runSlot(t, b, queue.SlotConfig{Name: "s", Handler: func(_ context.Context, d *queue.Delivery) error {
		got = append(got, d.Task.Lane)
		if len(got) == 9 {
			close(all)
		}
		return nil
	}})
	recv(t, all, 20*time.Second)
	require.Equal(t, []string{"high", "high", "high", "normal", "normal", "normal", "low", "low", "low"}, got)
	require.Eventually(t, func() bool {
		d, err := b.q.Depth(b.ctx)
		return err == nil && len(d) == 0
	}, 10*time.Second, 20*time.Millisecond, "acked tasks leave the WorkQueue stream")
}

func TestHeartbeatsKeepLongTaskFromRedelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{AckWait: 500 * time.Millisecond})
	_, err := b.q.Publish(b.ctx, task("long", 0, 1, "normal"))
	require.NoError(t, err)
	var mu sync.Mutex
	var attempts []int
	done := make(chan struct{})
	handler := func(_ context.Context, d *queue.Delivery) error {
		mu.Lock()
		attempts = append(attempts, d.Attempt)
		mu.Unlock()
		// Work for four AckWaits: without heartbeats the second slot would
		// get a redelivery meanwhile.
		time.Sleep(2 * time.Second)
		close(done)
		return nil
	}
	runSlot(t, b, queue.SlotConfig{Name: "a", Handler: handler, HeartbeatInterval: 100 * time.Millisecond})
	runSlot(t, b, queue.SlotConfig{Name: "b", Handler: handler, HeartbeatInterval: 100 * time.Millisecond})
	recv(t, done, 20*time.Second)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []int{1}, attempts)
}

func TestRetryRedeliversWithAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	_, err := b.q.Publish(b.ctx, task("r", 0, 1, "normal"))
	require.NoError(t, err)
	acked := make(chan int, 1)
	runSlot(t, b, queue.SlotConfig{Name: "s", IdlePoll: 20 * time.Millisecond, Handler: func(_ context.Context, d *queue.Delivery) error {
		switch d.Attempt {
		case 1:
			return queue.Retry(errors.New("device busy"), 10*time.Millisecond)
		case 2:
			panic("boom") // a panic is a transient error too
		}
		acked <- d.Attempt
		return nil
	}})
	b.q.Config() // unchanged by slots
	require.Equal(t, 3, recv(t, acked, 30*time.Second))
}

func TestTerminatedTaskBecomesDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	dead := runDeadLetters(t, b)
	pub, err := b.q.Publish(b.ctx, task("bad", 1, 2, "normal"))
	require.NoError(t, err)
	runSlot(t, b, queue.SlotConfig{Name: "s", Handler: func(_ context.Context, d *queue.Delivery) error {
		return queue.Permanent(fmt.Errorf("vanilla proof of partition %d is invalid", d.Task.Partition))
	}})
	d := recv(t, dead, 20*time.Second)
	require.Equal(t, queue.DeadTerminated, d.Kind)
	require.Equal(t, "bad", d.JobID)
	require.EqualValues(t, 1, d.Partition)
	require.Equal(t, pub.Seq, d.StreamSeq)
	require.Equal(t, "bad input: vanilla proof of partition 1 is invalid", d.Reason)
}

// Tasks that cannot be trusted name no job in their dead letter: garbage
// whose message id header names a job, and a decodable task the handler
// rejects (it does not match its job).
func TestRejectedTasksNameNoJob(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	dead := runDeadLetters(t, b)
	runSlot(t, b, queue.SlotConfig{Name: "s", Handler: func(_ context.Context, d *queue.Delivery) error {
		return queue.Reject(fmt.Errorf("task %s.%d does not match its job", d.Task.JobId, d.Task.Partition))
	}})
	garbage := &nats.Msg{Subject: b.q.Subject("test", "normal"), Header: nats.Header{}, Data: []byte("31 bytes of junk, not a task!!")}
	garbage.Header.Set(jetstream.MsgIDHeader, "victim.5")
	js, err := jetstream.New(b.nc)
	require.NoError(t, err)
	ack, err := js.PublishMsg(b.ctx, garbage)
	require.NoError(t, err)
	d := recv(t, dead, 20*time.Second)
	require.Equal(t, queue.DeadRejected, d.Kind)
	require.Empty(t, d.JobID)
	require.Equal(t, ack.Sequence, d.StreamSeq)
	require.Contains(t, d.Reason, fmt.Sprintf("rejected task (stream seq %d): queue: bad task", ack.Sequence))

	pub, err := b.q.Publish(b.ctx, task("victim", 1, 2, "normal"))
	require.NoError(t, err)
	d = recv(t, dead, 20*time.Second)
	require.Equal(t, queue.DeadRejected, d.Kind)
	require.Empty(t, d.JobID)
	require.Equal(t, pub.Seq, d.StreamSeq)
	require.Equal(t, fmt.Sprintf("rejected task (stream seq %d): rejected task: task victim.1 does not match its job", pub.Seq), d.Reason)
}

func TestMaxDeliveriesBecomesDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{MaxDeliver: 2, NakDelay: 10 * time.Millisecond})
	dead := runDeadLetters(t, b)
	pub, err := b.q.Publish(b.ctx, task("flaky", 0, 1, "high"))
	require.NoError(t, err)
	var mu sync.Mutex
	seen := 0
	runSlot(t, b, queue.SlotConfig{Name: "s", IdlePoll: 20 * time.Millisecond, Handler: func(context.Context, *queue.Delivery) error {
		mu.Lock()
		seen++
		mu.Unlock()
		return errors.New("always fails")
	}})
	d := recv(t, dead, 30*time.Second)
	require.Equal(t, queue.DeadMaxDeliveries, d.Kind)
	require.Equal(t, "flaky", d.JobID)
	require.NotNil(t, d.Task)
	require.Equal(t, "high", d.Task.Lane)
	require.Equal(t, pub.Seq, d.StreamSeq)
	mu.Lock()
	require.Equal(t, 2, seen)
	mu.Unlock()
	// Handled dead letters are removed from the work stream.
	require.Eventually(t, func() bool {
		depth, err := b.q.Depth(b.ctx)
		return err == nil && len(depth) == 0
	}, 10*time.Second, 20*time.Millisecond)
}

func TestDeleteTasksRemovesPending(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	var seqs []uint64
	for p := uint32(0); p < 4; p++ {
		pub, err := b.q.Publish(b.ctx, task("cancel-me", p, 4, "low"))
		require.NoError(t, err)
		seqs = append(seqs, pub.Seq)
	}
	_, err := b.q.Publish(b.ctx, task("keep", 0, 1, "low"))
	require.NoError(t, err)
	n, err := b.q.DeleteTasks(b.ctx, seqs)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	n, err = b.q.DeleteTasks(b.ctx, seqs) // already gone: skipped
	require.NoError(t, err)
	require.Zero(t, n)
	got := make(chan string, 4)
	runSlot(t, b, queue.SlotConfig{Name: "s", Handler: func(_ context.Context, d *queue.Delivery) error {
		got <- d.Task.JobId
		return nil
	}})
	require.Equal(t, "keep", recv(t, got, 20*time.Second))
	require.Eventually(t, func() bool { // acked after the handler returned
		d, err := b.q.Depth(b.ctx)
		return err == nil && len(d) == 0
	}, 10*time.Second, 10*time.Millisecond)
}

func TestAbortHandsTaskBack(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	_, err := b.q.Publish(b.ctx, task("drain", 0, 1, "normal"))
	require.NoError(t, err)
	_, err = b.q.Publish(b.ctx, task("waiting", 0, 1, "low"))
	require.NoError(t, err)
	started := make(chan struct{})
	s1 := runSlot(t, b, queue.SlotConfig{Name: "first", Lanes: []string{"normal"}, Handler: func(ctx context.Context, _ *queue.Delivery) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	recv(t, started, 20*time.Second)
	depth, err := b.q.Depth(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []queue.LaneDepth{{Shape: "test", Lane: "normal", InFlight: 1}, {Shape: "test", Lane: "low", Pending: 1}}, depth)
	s1.Abort()
	second := make(chan int, 1)
	runSlot(t, b, queue.SlotConfig{Name: "second", Lanes: []string{"normal"}, Handler: func(_ context.Context, d *queue.Delivery) error {
		second <- d.Attempt
		return nil
	}})
	require.Equal(t, 2, recv(t, second, 20*time.Second))
}

func TestBlobStoredOnceAndChecked(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	data := make([]byte, 3<<20) // larger than a NATS message
	for i := range data {
		data[i] = byte(i * 7)
	}
	info, err := b.q.PutBlob(b.ctx, "job42", data)
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(data), info.SHA256)
	got, err := b.q.GetBlob(b.ctx, "job42", info.SHA256[:])
	require.NoError(t, err)
	require.Equal(t, data, got)
	_, err = b.q.GetBlob(b.ctx, "job42", make([]byte, 32))
	require.ErrorContains(t, err, "does not match")
	require.NoError(t, b.q.DeleteBlob(b.ctx, "job42"))
	_, err = b.q.GetBlob(b.ctx, "job42", nil)
	require.ErrorIs(t, err, queue.ErrBlobNotFound)
	require.NoError(t, b.q.DeleteBlob(b.ctx, "job42"))
}

func TestAssemblyRequestsDeduplicatedAndDurable(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	// Requested before any assembler runs, twice.
	require.NoError(t, b.q.RequestAssembly(b.ctx, "jobA"))
	require.NoError(t, b.q.RequestAssembly(b.ctx, "jobA"))
	require.NoError(t, b.q.RequestAssembly(b.ctx, "jobB"))
	require.ErrorIs(t, b.q.RequestAssembly(b.ctx, "bad.id"), queue.ErrBadTask)
	got := make(chan string, 8)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	failedOnce := false
	go func() {
		done <- b.q.RunAssembly(ctx, queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 10 * time.Millisecond}, func(_ context.Context, job string) error {
			if job == "jobB" && !failedOnce {
				failedOnce = true
				return errors.New("redis down")
			}
			got <- job
			return nil
		})
	}()
	require.Equal(t, "jobA", recv(t, got, 20*time.Second))
	require.Equal(t, "jobB", recv(t, got, 20*time.Second))
	cancel()
	require.NoError(t, <-done)
	require.Empty(t, got)
}

func TestTraceContextCrossesTheQueue(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := telemetry.Setup(context.Background(), telemetry.TracingConfig{ServiceName: "q", Exporter: exp, SyncExport: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, tr.Shutdown(context.Background())) }()
	b := setup(t, queue.Config{})
	ctx, job := telemetry.Tracer().Start(b.ctx, telemetry.SpanJob)
	_, err = b.q.Publish(ctx, task("traced", 0, 1, "normal"))
	require.NoError(t, err)
	job.End()
	got := make(chan trace.SpanContext, 1)
	runSlot(t, b, queue.SlotConfig{Name: "s", Handler: func(ctx context.Context, _ *queue.Delivery) error {
		got <- trace.SpanContextFromContext(ctx)
		return nil
	}})
	sc := recv(t, got, 20*time.Second)
	require.True(t, sc.IsRemote())
	require.Equal(t, job.SpanContext().TraceID(), sc.TraceID())
	var publish trace.SpanID
	for _, s := range exp.GetSpans() {
		if s.Name == telemetry.SpanPublish {
			publish = s.SpanContext.SpanID()
			require.Equal(t, trace.SpanKindProducer, s.SpanKind)
		}
	}
	require.Equal(t, publish, sc.SpanID(), "the consumer's parent is the publish span")
}

func TestConfigValidationNamesField(t *testing.T) {
	t.Parallel()
	srv := queuetest.Server(t)
	nc := queuetest.Conn(t, srv)
	for field, cfg := range map[string]queue.Config{
		"Lanes":         {Lanes: []string{"a", "a"}},
		"AckWait":       {AckWait: time.Millisecond},
		"Stream":        {Stream: "bad.name"},
		"SubjectPrefix": {SubjectPrefix: "c2.*"},
		"MaxDeliver":    {MaxDeliver: -1},
	} {
		_, err := queue.Open(context.Background(), nc, cfg)
		require.ErrorIs(t, err, queue.ErrInvalidConfig, field)
		require.ErrorContains(t, err, field)
	}
	q, err := queue.Open(context.Background(), nc, queue.Config{})
	require.NoError(t, err)
	_, err = q.NewSlot(queue.SlotConfig{Shapes: []string{"s"}})
	require.ErrorContains(t, err, "Handler")
	_, err = q.NewSlot(queue.SlotConfig{Shapes: []string{"s"}, Handler: func(context.Context, *queue.Delivery) error { return nil }, Lanes: []string{"x"}})
	require.ErrorContains(t, err, "Lanes")
}

func TestSlotRecreatesDeletedConsumer(t *testing.T) {
	t.Parallel()
	b := setup(t, queue.Config{})
	got := make(chan string, 4)
	runSlot(t, b, queue.SlotConfig{Name: "s", IdlePoll: 50 * time.Millisecond, Lanes: []string{"normal"}, Handler: func(_ context.Context, d *queue.Delivery) error {
		got <- d.Task.JobId
		return nil
	}})
	_, err := b.q.Publish(b.ctx, task("before", 0, 1, "normal"))
	require.NoError(t, err)
	require.Equal(t, "before", recv(t, got, 20*time.Second))
	require.Eventually(t, func() bool { // acked: gone from the WorkQueue stream
		d, err := b.q.Depth(b.ctx)
		return err == nil && len(d) == 0
	}, 10*time.Second, 10*time.Millisecond)
	// An operator deletes the shared consumer; the slot recreates it.
	require.NoError(t, b.q.JetStream().DeleteConsumer(b.ctx, queue.StreamDefault, queue.ConsumerName("test", "normal")))
	_, err = b.q.Publish(b.ctx, task("after", 0, 1, "normal"))
	require.NoError(t, err)
	require.Equal(t, "after", recv(t, got, 20*time.Second))
}
