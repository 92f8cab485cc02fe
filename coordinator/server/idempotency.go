package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"connectrpc.com/connect"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// An idempotency key is bound to its job and to the digest of the request
// that made it (requestDigest): the C1 output (and with it the proof
// type), the sector's miner and number, and the priority. The same request
// with the key returns the same job; another request with the key is
// already_exists naming the job; once the job has failed or was
// cancelled, the key takes a new job (the same request or another).

// requestDigest is the digest a key is bound to.
func requestDigest(c1doc []byte, lane string, sec jobstore.Sector) string {
	opt := func(v *uint64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatUint(*v, 10)
	}
	c1sum := sha256.Sum256(c1doc)
	sum := sha256.Sum256(fmt.Appendf(nil, "c2cluster submit v1\nc1 %x\nlane %s\nminer %s\nsector %s\n", c1sum, lane, opt(sec.Miner), opt(sec.Number)))
	return hex.EncodeToString(sum[:])
}

// keyTaken is the error of a key bound to another request's job.
func keyTaken(job string) error {
	return connect.NewError(connect.CodeAlreadyExists, fmt.Errorf(
		"the idempotency key is bound to job %s, submitted with a different request (C1 output, miner, sector or priority): "+
			"send that request again, or use another key (a key takes a new job only once its job has failed or was cancelled)", job))
}

func reusable(st jobstore.State) bool {
	return st == jobstore.StateFailed || st == jobstore.StateCancelled
}

// lookupIdempotent looks key up for a request of digest. It returns the
// response when the key's job is this request's and fully submitted; the
// binding to replace when its job failed or was cancelled; keyTaken when
// it is another request's job; nothing when this submission should claim
// the key or finish the bound job's submission.
func (s *Server) lookupIdempotent(ctx context.Context, key, digest string) (*c2clusterv1.SubmitResponse, *jobstore.Binding, error) {
	b, ok, err := s.store.IdempotentJob(ctx, key)
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeUnavailable, err)
	}
	if !ok {
		return nil, nil, nil
	}
	j, err := s.store.Get(ctx, b.JobID)
	if err != nil && !errors.Is(err, jobstore.ErrNotFound) {
		return nil, nil, connect.NewError(connect.CodeUnavailable, err)
	}
	switch {
	case j != nil && reusable(j.State):
		return nil, &b, nil
	case b.Digest != "" && b.Digest != digest:
		return nil, nil, keyTaken(b.JobID)
	case j == nil:
		return nil, nil, nil // bound but not created: this submission finishes it
	case j.Published < j.Partitions && !j.State.Terminal():
		return nil, nil, nil // half-published: this submission finishes it
	}
	s.cfg.Metrics.SubmitsTotal.WithLabelValues("deduplicated").Inc()
	return &c2clusterv1.SubmitResponse{JobId: j.ID, Deduplicated: true, Shape: j.Shape, Partitions: uint32(j.Partitions)}, nil, nil
}
