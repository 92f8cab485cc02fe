package jobstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
)

// TestRejectProofsRequeuesThenExhausts: bad proofs of an assembling job are
// removed with their fences and the job proves again (round 1, the workers
// recorded for exclusion); the bound of bad proofs for one partition leaves
// the proofs in place and reports Exhausted.
func TestRejectProofsRequeuesThenExhausts(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.Create(ctx, newJob("r1", 2))
	require.NoError(t, err)
	complete := func(p uint32, attempt int, worker string) jobstore.CompleteResult {
		t.Helper()
		out, _, err := s.Begin(ctx, "r1", p, attempt, worker)
		require.NoError(t, err)
		require.Equal(t, jobstore.BeginOK, out)
		res, err := s.Complete(ctx, "r1", p, attempt, proof(int(p)), jobstore.PartitionTimings{}, worker)
		require.NoError(t, err)
		require.Equal(t, jobstore.Accepted, res.Outcome)
		return res
	}
	complete(0, 3, "good")
	require.Equal(t, jobstore.StateAssembling, complete(1, 1, "bad").State)
	provers, err := s.Provers(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, map[int]string{0: "good", 1: "bad"}, provers)

	res, err := s.RejectProofs(ctx, "r1", []jobstore.BadProof{{Partition: 1, Reason: "does not verify"}}, 2)
	require.NoError(t, err)
	require.Equal(t, jobstore.Requeued, res.Outcome)
	require.Equal(t, 1, res.Round)
	require.Equal(t, []jobstore.RejectedPartition{{Partition: 1, Worker: "bad", BadProofs: 1, Workers: []string{"bad"}}}, res.Partitions)
	j, err := s.Get(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateProving, j.State)
	require.Equal(t, 1, j.Done)
	ps, err := s.Proofs(ctx, "r1", 2)
	require.NoError(t, err)
	require.Nil(t, ps[1])
	require.Equal(t, proof(0), ps[0])
	rq, err := s.PendingRequeue(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, jobstore.Requeue{Round: 1, Partitions: []int{1}, Excluded: map[int][]string{1: {"bad"}}}, rq)
	// Not assembling any more: a second assembly of the same proofs changes nothing.
	again, err := s.RejectProofs(ctx, "r1", []jobstore.BadProof{{Partition: 1, Reason: "x"}}, 2)
	require.NoError(t, err)
	require.Equal(t, jobstore.NotAssembling, again.Outcome)

	require.NoError(t, s.RequeuePublished(ctx, "r1", 1, map[uint32]uint64{1: 99}))
	rq, err = s.PendingRequeue(ctx, "r1")
	require.NoError(t, err)
	require.Empty(t, rq.Partitions)
	seqs, err := s.Seqs(ctx, "r1")
	require.NoError(t, err)
	require.Contains(t, seqs, uint64(99))

	// The re-queued task's first delivery (attempt 1, below the first
	// task's fence) records its result; another bad proof reaches the bound.
	require.Equal(t, jobstore.StateAssembling, complete(1, 1, "other").State)
	res, err = s.RejectProofs(ctx, "r1", []jobstore.BadProof{{Partition: 1, Reason: "still bad"}}, 2)
	require.NoError(t, err)
	require.Equal(t, jobstore.Exhausted, res.Outcome)
	require.Equal(t, []jobstore.RejectedPartition{{Partition: 1, Worker: "other", BadProofs: 2, Workers: []string{"bad", "other"}}}, res.Partitions)
	j, err = s.Get(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateAssembling, j.State, "exhausted: the caller fails the job")
}

// TestQuarantineAndRelease: bad proofs count towards a quarantine that lasts
// until Release, which clears the count; the first reason stays.
func TestQuarantineAndRelease(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	n, q, newly, err := s.RecordBadProof(ctx, "w1", "job a partition 0", 2)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Nil(t, q)
	require.False(t, newly)
	n, q, newly, err = s.RecordBadProof(ctx, "w1", "job b partition 1", 2)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.True(t, newly)
	require.Equal(t, "coordinator", q.By)
	require.Contains(t, q.Reason, "2 partition proofs failed verification")
	require.Contains(t, q.Reason, "job b partition 1")
	q2, newly, err := s.Quarantine(ctx, "w1", "operator says", "operator")
	require.NoError(t, err)
	require.False(t, newly)
	require.Equal(t, q.Reason, q2.Reason, "the first quarantine's reason stays")

	trusts, err := s.Trusts(ctx, []string{"w2"})
	require.NoError(t, err)
	require.Len(t, trusts, 2, "the quarantined worker and the one asked for")
	require.NotNil(t, trusts["w1"].Quarantine)
	require.Nil(t, trusts["w2"].Quarantine)

	was, err := s.Release(ctx, "w1")
	require.NoError(t, err)
	require.Equal(t, q.Reason, was.Reason)
	tr, err := s.Trust(ctx, "w1")
	require.NoError(t, err)
	require.Equal(t, jobstore.WorkerTrust{ID: "w1"}, tr)
	was, err = s.Release(ctx, "w1")
	require.NoError(t, err)
	require.Nil(t, was)
	_, _, err = s.Quarantine(ctx, "bad id", "x", "operator")
	require.ErrorIs(t, err, jobstore.ErrInvalid)
}
