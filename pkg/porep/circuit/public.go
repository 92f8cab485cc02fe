package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
)

// Statement is what a partition proof is about: the values a verifier knows
// without the vanilla proofs.
type Statement struct {
	Shape     *porep.Shape
	ReplicaID porep.Domain
	CommD     porep.Domain
	CommR     porep.Domain
	Seed      porep.Domain
}

// StatementOf returns the statement of a C1 output (its Shape must be set, as
// c1.Parse does).
func StatementOf(out *c1.Output) (Statement, error) {
	if out == nil || out.Shape == nil {
		return Statement{}, fmt.Errorf("%w: C1 output without a resolved shape", ErrInvalidInput)
	}
	return Statement{Shape: out.Shape, ReplicaID: out.ReplicaID, CommD: out.CommD, CommR: out.CommR, Seed: out.Seed}, nil
}

// PublicInputs returns the public inputs of partition k of a C1 output,
// computed natively as a verifier does (challenges derived from the seed,
// parents from the graph): without the constant one, in StackedCircuit order.
// They are what groth16.Verify takes.
func PublicInputs(out *c1.Output, k int) ([]fr.Element, error) {
	st, err := StatementOf(out)
	if err != nil {
		return nil, err
	}
	return st.PublicInputs(k)
}

// PublicInputs returns the public inputs of partition k (see the function
// PublicInputs).
func (st Statement) PublicInputs(k int) ([]fr.Element, error) {
	p, err := ParamsOf(st.Shape)
	if err != nil {
		return nil, err
	}
	if k < 0 || k >= st.Shape.Partitions {
		return nil, fmt.Errorf("%w: partition %d outside 0..%d of shape %s", ErrInvalidInput, k, st.Shape.Partitions-1, st.Shape.Name)
	}
	g, err := graph.For(st.Shape)
	if err != nil {
		return nil, err
	}
	in := make([]fr.Element, p.NumPublic())
	for i, d := range []struct {
		name string
		v    porep.Domain
	}{{"replica_id", st.ReplicaID}, {"comm_d", st.CommD}, {"comm_r", st.CommR}} {
		if in[i], err = d.v.Element(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, d.name, err)
		}
	}
	parents := make([]uint32, g.Degree())
	for j, c := range porep.Challenges(st.Shape, st.ReplicaID, st.Seed, k) {
		g.Parents(c, parents)
		in[p.inCommDPath(j)].SetUint64(c)
		for i := 0; i < p.DRGDegree; i++ {
			in[p.inDRGPath(j, i)].SetUint64(uint64(parents[i]))
		}
		for i := 0; i < p.ExpDegree; i++ {
			in[p.inExpPath(j, i)].SetUint64(uint64(parents[p.DRGDegree+i]))
		}
		in[p.inChallenge(j)].SetUint64(c)
		in[p.inRLastPath(j)].SetUint64(c)
		in[p.inCPath(j)].SetUint64(c)
	}
	return in, nil
}
