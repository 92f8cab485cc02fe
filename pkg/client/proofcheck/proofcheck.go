// Package proofcheck verifies the proofs a c2cluster coordinator returns,
// on the client's machine, with the client's own copy of the verifying key:
// a proof read from the cluster (its Redis, its API) is trusted only once it
// verifies here. Keys implements client.ProofVerifier.
package proofcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
)

// Keys finds a shape's verifying key as the coordinator does: VKFile when
// set; otherwise Filecoin's official .vk in OfficialDir (digest-checked)
// for an official shape, <ParamsDir>/<shape>.vk for a test shape.
type Keys struct {
	ParamsDir   string
	OfficialDir string
	VKFile      string
}

// Key returns the verifying key of shape and its file. A key that is not
// there is an error matching client.ErrNoVerifyingKey.
func (k Keys) Key(ctx context.Context, s *porep.Shape) (*groth16.VerifyingKey, string, error) {
	switch {
	case k.VKFile != "":
		vk, err := groth16.ReadVerifyingKeyFile(k.VKFile)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, k.VKFile, fmt.Errorf("%w: %w", client.ErrNoVerifyingKey, err)
		}
		return vk, k.VKFile, err
	case s.Test:
		path := circuit.VKPath(k.ParamsDir, s.Name)
		vk, err := groth16.ReadVerifyingKeyFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, path, fmt.Errorf("%w: shape %s: %s is missing", client.ErrNoVerifyingKey, s.Name, path)
		}
		return vk, path, err
	}
	if k.OfficialDir == "" {
		return nil, "", fmt.Errorf("%w: shape %s: no official parameter directory", client.ErrNoVerifyingKey, s.Name)
	}
	vk, path, err := ceremony.LoadVerifyingKey(ctx, k.OfficialDir, s)
	if me := (*ceremony.MissingError)(nil); errors.As(err, &me) {
		return nil, path, fmt.Errorf("%w: %w", client.ErrNoVerifyingKey, err)
	}
	return vk, path, err
}

// VerifyProof implements client.ProofVerifier: every partition's proof
// against the public inputs computed from the C1 output (c1JSON, or the
// Commit2In envelope around it). A proof that does not verify is a
// *BadProofError.
func (k Keys) VerifyProof(ctx context.Context, c1JSON, proof []byte) error {
	doc := c1JSON
	if c1.IsCommit2In(doc) {
		env, err := c1.ParseCommit2In(doc)
		if err != nil {
			return fmt.Errorf("proofcheck: %w", err)
		}
		doc = env.Phase1Out
	}
	out, err := c1.ParseBytes(doc)
	if err != nil {
		return fmt.Errorf("proofcheck: C1 output: %w", err)
	}
	vk, file, err := k.Key(ctx, out.Shape)
	if err != nil {
		return err
	}
	bad := &BadProofError{Shape: out.Shape.Name, KeyFile: file}
	proofs, err := groth16.SplitProofs(proof)
	switch {
	case err != nil:
		bad.Reason = fmt.Sprintf("%d bytes are not %d partition proofs: %v", len(proof), out.Shape.Partitions, err)
		return bad
	case len(proofs) != out.Shape.Partitions:
		bad.Reason = fmt.Sprintf("%d partition proofs, the shape has %d partitions", len(proofs), out.Shape.Partitions)
		return bad
	}
	var why []string
	for p, pr := range proofs {
		in, err := circuit.PublicInputs(out, p)
		if err != nil {
			return fmt.Errorf("proofcheck: public inputs of partition %d: %w", p, err)
		}
		if err := groth16.Verify(vk, pr, in); err != nil {
			bad.Failed = append(bad.Failed, p)
			why = append(why, fmt.Sprintf("partition %d: %v", p, err))
		}
	}
	if len(bad.Failed) > 0 {
		bad.Reason = strings.Join(why, "; ")
		return bad
	}
	return nil
}

// BadProofError is a returned proof that does not verify
// (errors.Is(err, client.ErrBadProof)).
type BadProofError struct {
	Shape   string
	KeyFile string
	// Failed are the partitions whose proof fails (empty when the bytes
	// are not proofs at all).
	Failed []int
	Reason string
}

func (e *BadProofError) Error() string {
	return fmt.Sprintf("%s: %s proof, verifying key %s: %s", client.ErrBadProof, e.Shape, e.KeyFile, e.Reason)
}

// Is matches client.ErrBadProof.
func (e *BadProofError) Is(target error) bool { return target == client.ErrBadProof }
