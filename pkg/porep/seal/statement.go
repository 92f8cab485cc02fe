package seal

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
)

// ErrInvalidInput: the values a proof is checked against are malformed
// (unknown or invalid shape, zero or non-canonical commitment, partition
// out of range); the text names the problem.
var ErrInvalidInput = errors.New("seal: invalid input")

// Statement is what a partition proof is about: the values a verifier knows
// without the vanilla proofs.
type Statement struct {
	Shape     *porep.Shape
	ReplicaID porep.Domain
	CommD     porep.Domain
	CommR     porep.Domain
	Seed      porep.Domain
}

// StatementOf returns the statement of a C1 output (its Shape must be set,
// as c1.Parse does).
func StatementOf(out *c1.Output) (Statement, error) {
	if out == nil || out.Shape == nil {
		return Statement{}, fmt.Errorf("%w: C1 output without a resolved shape", ErrInvalidInput)
	}
	return Statement{Shape: out.Shape, ReplicaID: out.ReplicaID, CommD: out.CommD, CommR: out.CommR, Seed: out.Seed}, nil
}

// InputsPerChallenge is the number of public inputs each challenge adds:
// the tree-D path index, one tree-C path index per DRG and per expander
// parent, the challenge, the tree-R_last and the tree-C path index.
func InputsPerChallenge(s *porep.Shape) int { return s.BaseDegree + s.ExpDegree + 4 }

// NumPublicInputs is the number of public inputs of a partition of s,
// without the constant one: replica_id, comm_d, comm_r, then
// InputsPerChallenge per challenge (32 GiB: 3 + 18·18 = 327; bellperson
// counts 328 with the one).
func NumPublicInputs(s *porep.Shape) int { return 3 + s.ChallengesPerPartition*InputsPerChallenge(s) }

// PublicInputs returns the public inputs of partition k, without the
// constant one, in rust-fil-proofs' StackedCompound::generate_public_inputs
// order. Each path index is the packed index of the leaf a proof opens: for
// a challenged node or a parent, the node's number. They are what
// groth16.Verify takes.
func (st Statement) PublicInputs(k int) ([]fr.Element, error) {
	s := st.Shape
	if s == nil {
		return nil, fmt.Errorf("%w: statement without a shape", ErrInvalidInput)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if k < 0 || k >= s.Partitions {
		return nil, fmt.Errorf("%w: partition %d outside 0..%d of shape %s", ErrInvalidInput, k, s.Partitions-1, s.Name)
	}
	g, err := graph.For(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	in := make([]fr.Element, NumPublicInputs(s))
	for i, d := range []struct {
		name string
		v    porep.Domain
	}{{"replica_id", st.ReplicaID}, {"comm_d", st.CommD}, {"comm_r", st.CommR}} {
		if in[i], err = d.v.Element(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, d.name, err)
		}
	}
	parents := make([]uint32, g.Degree())
	at := 3
	set := func(v uint64) {
		in[at].SetUint64(v)
		at++
	}
	for _, c := range porep.Challenges(s, st.ReplicaID, st.Seed, k) {
		g.Parents(c, parents)
		set(c)                      // tree D
		for _, p := range parents { // DRG then expander parents, tree C
			set(uint64(p))
		}
		set(c) // the challenge
		set(c) // tree R_last
		set(c) // tree C, the challenged column
	}
	return in, nil
}

// AllPublicInputs returns PublicInputs(k) of every partition, in order.
func (st Statement) AllPublicInputs() ([][]fr.Element, error) {
	if st.Shape == nil {
		return nil, fmt.Errorf("%w: statement without a shape", ErrInvalidInput)
	}
	out := make([][]fr.Element, st.Shape.Partitions)
	for k := range out {
		var err error
		if out[k], err = st.PublicInputs(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}
