package client

import (
	"context"

	"connectrpc.com/connect"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// QuarantineWorker quarantines a worker: it takes no work until released.
func (c *Client) QuarantineWorker(ctx context.Context, workerID, reason string) (*c2clusterv1.Quarantine, error) {
	res, err := c.rpc.QuarantineWorker(ctx, connect.NewRequest(&c2clusterv1.QuarantineWorkerRequest{WorkerId: workerID, Reason: reason}))
	if err != nil {
		return nil, err
	}
	return res.Msg.Quarantine, nil
}

// ReleaseWorker lifts a worker's quarantine and clears its count of bad
// proofs; released is false when it was not quarantined.
func (c *Client) ReleaseWorker(ctx context.Context, workerID string) (released bool, was *c2clusterv1.Quarantine, err error) {
	res, err := c.rpc.ReleaseWorker(ctx, connect.NewRequest(&c2clusterv1.ReleaseWorkerRequest{WorkerId: workerID}))
	if err != nil {
		return false, nil, err
	}
	return res.Msg.Released, res.Msg.Quarantine, nil
}
