package jobstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
)

var redisSrv *jobstoretest.Redis

func TestMain(m *testing.M) {
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) { redisSrv = r; return nil, nil })
}

func setup(t *testing.T) (*jobstore.Store, context.Context) {
	t.Helper()
	s, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return s, ctx
}

func newJob(id string, parts int) jobstore.NewJob {
	return jobstore.NewJob{ID: id, Shape: "test", Lane: "normal", Partitions: parts, BlobRef: id,
		BlobSize: 10, BlobSHA256: make([]byte, 32), Sector: jobstore.Sector{Miner: u64(1000), Number: u64(7)}}
}

func u64(v uint64) *uint64 { return &v }

func proof(p int) []byte { return []byte(fmt.Sprintf("proof-%03d", p)) }

func TestCreateGetAndTTLs(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	created, err := s.Create(ctx, newJob("j1", 2))
	require.NoError(t, err)
	require.True(t, created)
	created, err = s.Create(ctx, newJob("j1", 5))
	require.NoError(t, err)
	require.False(t, created, "second create of the same id changes nothing")
	j, err := s.Get(ctx, "j1")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateQueued, j.State)
	require.Equal(t, 2, j.Partitions)
	require.Equal(t, jobstore.Sector{Miner: u64(1000), Number: u64(7)}, j.Sector)
	require.True(t, j.Sector.Known())
	// A sector number without a miner (and none at all) is kept as given.
	for id, sec := range map[string]jobstore.Sector{"j-number": {Number: u64(0)}, "j-none": {}} {
		nj := newJob(id, 1)
		nj.Sector = sec
		_, err = s.Create(ctx, nj)
		require.NoError(t, err)
		got, err := s.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, sec, got.Sector, id)
		require.False(t, got.Sector.Known(), id)
	}
	require.Len(t, j.BlobSHA256, 32)

	require.NoError(t, s.SetPublished(ctx, "j1", map[uint32]uint64{0: 11, 1: 12}, 2))
	_, _, err = s.Begin(ctx, "j1", 0, 1, "w")
	require.NoError(t, err)
	_, err = s.Complete(ctx, "j1", 0, 1, proof(0), jobstore.PartitionTimings{}, "w")
	require.NoError(t, err)
	require.NoError(t, s.RecordFailure(ctx, "j1", 1, 1, "w", fmt.Errorf("boom")))
	keys, err := s.Client().Keys(ctx, "*{j1}*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 6, "job, seqs, attempts, proofs, provers, events: %v", keys)
	for _, k := range keys {
		ttl, err := s.Client().PTTL(ctx, k).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, time.Duration(0), "key %s has a TTL", k)
	}
	_, err = s.Get(ctx, "nope")
	require.ErrorIs(t, err, jobstore.ErrNotFound)
	_, err = s.Get(ctx, "bad}id")
	require.ErrorIs(t, err, jobstore.ErrInvalid)
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, ok, err := s.IdempotentJob(ctx, "client-key-1")
	require.NoError(t, err)
	require.False(t, ok)
	b, first, err := s.ClaimIdempotencyKey(ctx, "client-key-1", "jA", "dA")
	require.NoError(t, err)
	require.True(t, first)
	require.Equal(t, jobstore.Binding{JobID: "jA", Digest: "dA"}, b)
	b, first, err = s.ClaimIdempotencyKey(ctx, "client-key-1", "jB", "dB")
	require.NoError(t, err)
	require.False(t, first)
	require.Equal(t, jobstore.Binding{JobID: "jA", Digest: "dA"}, b, "the first binding stays")
	b, ok, err = s.IdempotentJob(ctx, "client-key-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, jobstore.Binding{JobID: "jA", Digest: "dA"}, b)
	_, _, err = s.ClaimIdempotencyKey(ctx, string(make([]byte, 129)), "jC", "dC")
	require.ErrorIs(t, err, jobstore.ErrInvalid)

	// Rebinding moves the key only from the binding the caller saw.
	b, moved, err := s.RebindIdempotencyKey(ctx, "client-key-1", jobstore.Binding{JobID: "jA", Digest: "dA"}, "jD", "dD")
	require.NoError(t, err)
	require.True(t, moved)
	require.Equal(t, jobstore.Binding{JobID: "jD", Digest: "dD"}, b)
	b, moved, err = s.RebindIdempotencyKey(ctx, "client-key-1", jobstore.Binding{JobID: "jA", Digest: "dA"}, "jE", "dE")
	require.NoError(t, err)
	require.False(t, moved, "a second rebind from the old binding loses")
	require.Equal(t, jobstore.Binding{JobID: "jD", Digest: "dD"}, b)
}

func TestPartitionsCompleteToAssembling(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.Create(ctx, newJob("j", 3))
	require.NoError(t, err)
	tm := jobstore.PartitionTimings{QueueWait: time.Millisecond, Synthesis: 2 * time.Millisecond, Prove: 3 * time.Millisecond,
		LockWait: 4 * time.Millisecond, Verify: 5 * time.Millisecond}
	for p := 0; p < 3; p++ {
		out, state, err := s.Begin(ctx, "j", uint32(p), 1, "w1")
		require.NoError(t, err)
		require.Equal(t, jobstore.BeginOK, out)
		require.Equal(t, jobstore.StateProving, state)
		res, err := s.Complete(ctx, "j", uint32(p), 1, proof(p), tm, "w1")
		require.NoError(t, err)
		require.Equal(t, jobstore.Accepted, res.Outcome)
		require.Equal(t, p+1, res.Done)
		want := jobstore.StateProving
		if p == 2 {
			want = jobstore.StateAssembling
		}
		require.Equal(t, want, res.State)
	}
	j, err := s.Get(ctx, "j")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateAssembling, j.State)
	require.Equal(t, 3, j.Done)
	require.Equal(t, jobstore.Timings{QueueWait: 3 * time.Millisecond, Synthesis: 6 * time.Millisecond,
		Prove: 9 * time.Millisecond, LockWait: 12 * time.Millisecond, Verify: 15 * time.Millisecond}, j.Timings)
	proofs, err := s.Proofs(ctx, "j", 3)
	require.NoError(t, err)
	require.Equal(t, [][]byte{proof(0), proof(1), proof(2)}, proofs)

	// A redelivered partition of an assembling job: already done.
	out, state, err := s.Begin(ctx, "j", 1, 2, "w2")
	require.NoError(t, err)
	require.Equal(t, jobstore.BeginAlreadyDone, out)
	require.Equal(t, jobstore.StateAssembling, state)

	require.NoError(t, s.Finish(ctx, "j", []byte("whole"), 7*time.Millisecond))
	j, err = s.Get(ctx, "j")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateDone, j.State)
	require.Equal(t, []byte("whole"), j.Proof)
	require.Equal(t, 7*time.Millisecond, j.Timings.Assemble)
	require.False(t, j.FinishedAt.IsZero())
	ev, err := s.Events(ctx, "j")
	require.NoError(t, err)
	require.Len(t, ev, 7) // 3 × (begin, complete), done; an already-done begin records nothing
	require.Equal(t, "done", ev[len(ev)-1].Fields["type"])
	require.ErrorIs(t, s.Finish(ctx, "j", []byte("again"), 0), jobstore.ErrConflict)
}

// A Begin or Complete for a partition the job does not have (a forged or
// corrupt task) is refused and writes nothing: the job stays as it was.
func TestPartitionOutOfRangeRefused(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.Create(ctx, newJob("j", 2))
	require.NoError(t, err)
	for _, p := range []uint32{2, 5, 1 << 31} {
		_, _, err := s.Begin(ctx, "j", p, 1, "w1")
		require.ErrorIs(t, err, jobstore.ErrInvalid, "begin %d", p)
		require.ErrorContains(t, err, "the job has 2 partitions")
		_, err = s.Complete(ctx, "j", p, 1, proof(int(p%7)), jobstore.PartitionTimings{}, "w1")
		require.ErrorIs(t, err, jobstore.ErrInvalid, "complete %d", p)
		require.ErrorContains(t, err, "the job has 2 partitions")
	}
	j, err := s.Get(ctx, "j")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateQueued, j.State)
	require.Zero(t, j.Done)
	ev, err := s.Events(ctx, "j")
	require.NoError(t, err)
	for _, e := range ev {
		require.NotContains(t, []string{"begin", "complete"}, e.Fields["type"])
	}
}

func TestStaleAttemptRejected(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.Create(ctx, newJob("j", 1))
	require.NoError(t, err)
	out, _, err := s.Begin(ctx, "j", 0, 1, "slow")
	require.NoError(t, err)
	require.Equal(t, jobstore.BeginOK, out)
	// The slow worker's lease expired: attempt 2 begins elsewhere.
	out, _, err = s.Begin(ctx, "j", 0, 2, "fast")
	require.NoError(t, err)
	require.Equal(t, jobstore.BeginOK, out)
	// A begin of attempt 1 now is stale too.
	out, _, err = s.Begin(ctx, "j", 0, 1, "slow")
	require.NoError(t, err)
	require.Equal(t, jobstore.BeginStale, out)
	// The slow worker's late result is rejected and not recorded.
	res, err := s.Complete(ctx, "j", 0, 1, []byte("late"), jobstore.PartitionTimings{}, "slow")
	require.NoError(t, err)
	require.Equal(t, jobstore.Stale, res.Outcome)
	require.Zero(t, res.Done)
	res, err = s.Complete(ctx, "j", 0, 2, []byte("current"), jobstore.PartitionTimings{}, "fast")
	require.NoError(t, err)
	require.Equal(t, jobstore.Accepted, res.Outcome)
	require.Equal(t, jobstore.StateAssembling, res.State)
	proofs, err := s.Proofs(ctx, "j", 1)
	require.NoError(t, err)
	require.Equal(t, []byte("current"), proofs[0])
	n, err := s.Attempt(ctx, "j", 0)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

func TestConcurrentCompletesRecordOnce(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.Create(ctx, newJob("j", 2))
	require.NoError(t, err)
	_, _, err = s.Begin(ctx, "j", 0, 1, "w")
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([]jobstore.CompleteResult, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Complete(ctx, "j", 0, 1, []byte(fmt.Sprint("p", i)), jobstore.PartitionTimings{}, "w")
			require.NoError(t, err)
			results[i] = r
		}()
	}
	wg.Wait()
	accepted := 0
	for _, r := range results {
		if r.Outcome == jobstore.Accepted {
			accepted++
		} else {
			require.Equal(t, jobstore.Duplicate, r.Outcome)
		}
	}
	require.Equal(t, 1, accepted)
	j, err := s.Get(ctx, "j")
	require.NoError(t, err)
	require.Equal(t, 1, j.Done)
}

func TestCancelAndFailAreTerminal(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.Create(ctx, newJob("c", 2))
	require.NoError(t, err)
	require.NoError(t, s.SetPublished(ctx, "c", map[uint32]uint64{0: 5, 1: 9}, 2))
	seqs, err := s.Cancel(ctx, "c", "client asked")
	require.NoError(t, err)
	require.Equal(t, []uint64{5, 9}, seqs)
	st, err := s.JobState(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateCancelled, st)
	_, err = s.JobState(ctx, "gone")
	require.ErrorIs(t, err, jobstore.ErrNotFound)
	out, state, err := s.Begin(ctx, "c", 0, 1, "w")
	require.NoError(t, err)
	require.Equal(t, jobstore.BeginClosed, out)
	require.Equal(t, jobstore.StateCancelled, state)
	res, err := s.Complete(ctx, "c", 1, 1, []byte("x"), jobstore.PartitionTimings{}, "w")
	require.NoError(t, err)
	require.Equal(t, jobstore.Closed, res.Outcome)
	err = s.Fail(ctx, "c", "too late")
	require.ErrorIs(t, err, jobstore.ErrConflict)
	require.ErrorContains(t, err, "cancelled")
	j, err := s.Get(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, "client asked", j.Reason)

	_, err = s.Create(ctx, newJob("f", 1))
	require.NoError(t, err)
	require.NoError(t, s.Fail(ctx, "f", "partition 0: max deliveries"))
	_, err = s.Cancel(ctx, "f", "x")
	require.ErrorIs(t, err, jobstore.ErrConflict)
	require.ErrorIs(t, s.Fail(ctx, "missing", "x"), jobstore.ErrNotFound)

	list, err := s.List(ctx, jobstore.StateFailed, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "f", list[0].ID)
	list, err = s.List(ctx, "", 10)
	require.NoError(t, err)
	require.Equal(t, []string{"f", "c"}, []string{list[0].ID, list[1].ID})
}

func TestWatchWakesOnHint(t *testing.T) {
	t.Parallel()
	s, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = s.Create(ctx, newJob("w", 1))
	require.NoError(t, err)
	seen := make(chan jobstore.State, 8)
	done := make(chan error, 1)
	go func() {
		done <- s.Watch(ctx, "w", func(j *jobstore.Job) bool {
			seen <- j.State
			return j.State.Terminal()
		})
	}()
	require.Equal(t, jobstore.StateQueued, <-seen)
	// With a one-hour poll, only the pub/sub hint can wake the watcher.
	_, err = s.Cancel(ctx, "w", "stop")
	require.NoError(t, err)
	require.NoError(t, <-done)
	require.Equal(t, jobstore.StateCancelled, <-seen)
}

func TestWorkerRegistry(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	w := jobstore.Worker{ID: "host1-1", Host: "host1", Devices: []string{"cpu"}, Slots: 2,
		Resident: []jobstore.Resident{{Shape: "2KiB", Residency: "host"}}, Current: []string{"j.0"}}
	require.NoError(t, s.Heartbeat(ctx, w))
	require.NoError(t, s.Heartbeat(ctx, jobstore.Worker{ID: "host2-1", Host: "host2"}))
	ws, err := s.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 2)
	require.Equal(t, "host1", ws[0].Host)
	require.Equal(t, []string{"j.0"}, ws[0].Current)
	require.False(t, ws[0].Heartbeat.IsZero())
	require.NoError(t, s.Unregister(ctx, "host2-1"))
	ws, err = s.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.ErrorIs(t, s.Heartbeat(ctx, jobstore.Worker{}), jobstore.ErrInvalid)
}
