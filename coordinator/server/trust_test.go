package server_test

import (
	"crypto/rand"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/client/proofcheck"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Plain write access to Redis marks a job done with random proof bytes: the
// API returns them as the job's proof, and a client that verifies with its
// own verifying key refuses them, naming every partition. A proof a worker
// really made passes; without a key the client says it could not check.
func TestForgedDoneIsCaughtByClientVerification(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	doc := sealedC1(t, 51)
	sub, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
	require.NoError(t, err)

	// No worker runs: forge the job's record straight in Redis.
	rdb := c.store.Client()
	keys, err := rdb.Keys(c.ctx, "*:{"+sub.JobId+"}:job").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	forged := make([]byte, int(sub.Partitions)*groth16.ProofSize)
	_, err = rand.Read(forged)
	require.NoError(t, err)
	require.NoError(t, rdb.HSet(c.ctx, keys[0], "state", "done", "proof", forged).Err())

	st, err := co.client.Await(c.ctx, sub.JobId)
	require.NoError(t, err, "the API alone returns the forged bytes")
	require.Equal(t, forged, st.Proof)

	vk := proofcheck.Keys{ParamsDir: paramsDir}
	_, err = co.client.AwaitVerified(c.ctx, sub.JobId, doc, vk)
	require.ErrorIs(t, err, client.ErrBadProof)
	require.ErrorContains(t, err, sub.JobId)
	var bad *proofcheck.BadProofError
	require.True(t, errors.As(err, &bad))
	require.Len(t, bad.Failed, 0, "random bytes are not even curve points")
	require.Contains(t, bad.Reason, "not")

	// Forged bytes that are valid points (another job's real proof) fail
	// partition by partition.
	w := c.newWorker("w1")
	w.run(1)
	doc2 := sealedC1(t, 52)
	st2, err := co.client.ProveVerified(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc2}, vk, nil)
	require.NoError(t, err, "a real proof verifies")
	require.NoError(t, rdb.HSet(c.ctx, keys[0], "proof", st2.Proof).Err())
	_, err = co.client.AwaitVerified(c.ctx, sub.JobId, doc, vk)
	require.True(t, errors.As(err, &bad))
	require.Equal(t, []int{0, 1, 2}, bad.Failed)

	// No key here: not checked, and said so.
	_, err = co.client.AwaitVerified(c.ctx, st2.JobId, doc2, proofcheck.Keys{ParamsDir: t.TempDir()})
	require.ErrorIs(t, err, client.ErrNoVerifyingKey)
}
