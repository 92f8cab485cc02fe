package client

import (
	"context"
	"errors"
	"fmt"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// ErrBadProof is matched (errors.Is) by the error of a returned proof that
// does not verify.
var ErrBadProof = errors.New("returned proof does not verify")

// ErrNoVerifyingKey is matched by a ProofVerifier's error when it has no
// verifying key for the proof's shape: the proof was not checked.
var ErrNoVerifyingKey = errors.New("no verifying key")

// ProofVerifier checks a job's final proof (the partitions' 192-byte
// proofs in partition order) against the document it was made from: the C1
// output as submitted, or lotus-bench's Commit2In envelope around it. A
// proof that does not verify is an error matching ErrBadProof; a missing
// key one matching ErrNoVerifyingKey. proofcheck.Keys is one.
type ProofVerifier interface {
	VerifyProof(ctx context.Context, c1JSON, proof []byte) error
}

// CheckProof verifies a done job's proof with v against c1JSON (the
// document submitted for it). Errors name the job.
func CheckProof(ctx context.Context, v ProofVerifier, c1JSON []byte, st *c2clusterv1.JobStatus) error {
	if st.GetState() != c2clusterv1.JobState_JOB_STATE_DONE {
		return fmt.Errorf("job %s is %s: no proof to check", st.GetJobId(), StateName(st.GetState()))
	}
	if err := v.VerifyProof(ctx, c1JSON, st.GetProof()); err != nil {
		return fmt.Errorf("job %s: %w", st.GetJobId(), err)
	}
	return nil
}

// ProveVerified is Prove, then CheckProof with v against req's C1: a proof
// the cluster returns is given back only once it verifies here. A proof
// that does not verify is an error matching ErrBadProof, returned with the
// status.
func (c *Client) ProveVerified(ctx context.Context, req *c2clusterv1.SubmitRequest, v ProofVerifier, progress func(*c2clusterv1.JobStatus)) (*c2clusterv1.JobStatus, error) {
	st, err := c.Prove(ctx, req, progress)
	if err != nil {
		return st, err
	}
	return st, CheckProof(ctx, v, req.GetC1Json(), st)
}

// AwaitVerified is Await, then CheckProof with v against c1JSON, the
// document the job was submitted with.
func (c *Client) AwaitVerified(ctx context.Context, jobID string, c1JSON []byte, v ProofVerifier) (*c2clusterv1.JobStatus, error) {
	st, err := c.Await(ctx, jobID)
	if err != nil {
		return st, err
	}
	return st, CheckProof(ctx, v, c1JSON, st)
}
