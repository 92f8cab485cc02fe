package server_test

import (
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// TestIdempotencyKeyBindsTheRequest: a key returns its job only for the
// same request; another C1 output, priority or sector with the key is
// already_exists naming the job, and queues nothing; once the job is
// cancelled or failed, the key takes a new job.
func TestIdempotencyKeyBindsTheRequest(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	docA, docB := sealedC1(t, 21), sealedC1(t, 22)
	const key = "sector-7-attempt-1"

	first, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docA, IdempotencyKey: key})
	require.NoError(t, err)
	again, err := co.grpc.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docA, IdempotencyKey: key})
	require.NoError(t, err)
	require.True(t, again.Deduplicated)
	require.Equal(t, first.JobId, again.JobId)

	for name, req := range map[string]*c2clusterv1.SubmitRequest{
		"another C1 output": {C1Json: docB, IdempotencyKey: key},
		"another priority":  {C1Json: docA, IdempotencyKey: key, Priority: c2clusterv1.Priority_PRIORITY_HIGH},
		"another sector":    {C1Json: docA, IdempotencyKey: key, Sector: &c2clusterv1.SectorRef{SectorNumber: u64(8)}},
	} {
		_, err := co.client.Submit(c.ctx, req)
		require.Equal(t, connect.CodeAlreadyExists, connect.CodeOf(err), "%s: %v", name, err)
		require.ErrorContains(t, err, "bound to job "+first.JobId, name)
	}
	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, jobs, 1, "the refused requests made no job")

	// Cancelled: the key takes a new job, for another request too.
	_, err = co.client.Cancel(c.ctx, first.JobId, "wrong input")
	require.NoError(t, err)
	second, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docB, IdempotencyKey: key})
	require.NoError(t, err)
	require.False(t, second.Deduplicated)
	require.NotEqual(t, first.JobId, second.JobId)
	same, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docB, IdempotencyKey: key})
	require.NoError(t, err)
	require.Equal(t, second.JobId, same.JobId)
	_, err = co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docA, IdempotencyKey: key})
	require.Equal(t, connect.CodeAlreadyExists, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "bound to job "+second.JobId)

	// Failed: the same request with the key is a new attempt.
	require.NoError(t, c.store.Fail(c.ctx, second.JobId, "a worker gave up"))
	third, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docB, IdempotencyKey: key})
	require.NoError(t, err)
	require.False(t, third.Deduplicated)
	require.NotEqual(t, second.JobId, third.JobId)
}
