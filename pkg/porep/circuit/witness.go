package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// assign fills the circuit of p with partition k of a C1 output: the public
// inputs computed natively (PublicInputs), the private values from the
// vanilla proofs. Values that do not fit (wrong counts, non-canonical field
// elements, inconsistent roots) are ErrInvalidInput; wrong values that fit
// are left for the solver to reject.
func assign(p Params, out *c1.Output, k int) (*partitionCircuit, error) {
	pub, err := PublicInputs(out, k)
	if err != nil {
		return nil, err
	}
	if got, _ := ParamsOf(out.Shape); got != p {
		return nil, fmt.Errorf("%w: C1 output of shape %s, circuit is for %s", ErrInvalidInput, out.Shape.Name, p.Name)
	}
	parts := out.VanillaProofs.Partitions()
	if k >= len(parts) || len(parts[k]) != p.Challenges {
		return nil, fmt.Errorf("%w: partition %d: C1 has %d partitions, want %d proofs in it", ErrInvalidInput, k, len(parts), p.Challenges)
	}
	a := newPartitionCircuit(p)
	for i := range pub {
		a.Public[i] = pub[i]
	}
	w := witnessBuilder{p: p}
	for j := range parts[k] {
		w.at = fmt.Sprintf("partition %d challenge %d", k, j)
		w.challenge(&a.Challenges[j], &parts[k][j])
		if j == 0 {
			// comm_c and comm_r_last as the vanilla proof has them (the
			// roots of its tree-C and tree-R_last paths).
			a.CommC = w.root("replica_column_proofs.c_x.inclusion_proof", &parts[k][j].ReplicaColumnProofs.CX.InclusionProof)
			a.CommRLast = w.root("comm_r_last_proof", &parts[k][j].CommRLastProof)
		} else {
			if c := w.root("replica_column_proofs.c_x.inclusion_proof", &parts[k][j].ReplicaColumnProofs.CX.InclusionProof); w.err == nil && c != a.CommC {
				w.fail("replica_column_proofs.c_x.inclusion_proof", "comm_c differs from challenge 0's")
			}
			if c := w.root("comm_r_last_proof", &parts[k][j].CommRLastProof); w.err == nil && c != a.CommRLast {
				w.fail("comm_r_last_proof", "comm_r_last differs from challenge 0's")
			}
		}
		if w.err != nil {
			return nil, w.err
		}
	}
	return a, nil
}

// witnessBuilder converts vanilla-proof values, keeping the first error.
type witnessBuilder struct {
	p   Params
	at  string
	err error
}

func (w *witnessBuilder) fail(field, format string, a ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: %s: %s: %s", ErrInvalidInput, w.at, field, fmt.Sprintf(format, a...))
	}
}

func (w *witnessBuilder) elem(field string, d porep.Domain) frontend.Variable {
	e, err := d.Element()
	if err != nil {
		w.fail(field, "%v", err)
		return fr.Element{}
	}
	return e
}

func (w *witnessBuilder) proof(field string, m *c1.MerkleProof) *merkle.Proof {
	pr, err := m.Proof()
	if err != nil {
		w.fail(field, "%v", err)
		return nil
	}
	return pr
}

func (w *witnessBuilder) root(field string, m *c1.MerkleProof) frontend.Variable {
	pr := w.proof(field, m)
	if pr == nil {
		return fr.Element{}
	}
	return w.elem(field+".root", pr.Root)
}

// path fills dst (per level: arity − 1 siblings) from a proof's base, sub and
// top paths.
func (w *witnessBuilder) path(field string, pr *merkle.Proof, dst [][]frontend.Variable) {
	var levels []merkle.PathElement
	levels = append(append(append(levels, pr.Base...), pr.Sub...), pr.Top...)
	if len(levels) != len(dst) {
		w.fail(field, "path of %d levels, want %d", len(levels), len(dst))
		return
	}
	for l, e := range levels {
		if len(e.Hashes) != len(dst[l]) {
			w.fail(field, "path level %d has %d siblings, want %d", l, len(e.Hashes), len(dst[l]))
			return
		}
		for i, h := range e.Hashes {
			dst[l][i] = w.elem(fmt.Sprintf("%s level %d sibling %d", field, l, i), h)
		}
	}
}

func (w *witnessBuilder) challenge(dst *challengeWitness, src *c1.ChallengeProof) {
	if d := w.proof("comm_d_proofs", &src.CommDProofs); d != nil {
		dst.DataLeaf = w.elem("comm_d_proofs.leaf", d.Leaf)
		if len(d.Base) != len(dst.CommDPath) || len(d.Sub)+len(d.Top) != 0 {
			w.fail("comm_d_proofs", "path of %d levels, want %d", len(d.Base)+len(d.Sub)+len(d.Top), len(dst.CommDPath))
		} else {
			for l, e := range d.Base {
				if len(e.Hashes) != 1 {
					w.fail("comm_d_proofs", "level %d has %d siblings, want 1", l, len(e.Hashes))
					return
				}
				dst.CommDPath[l] = w.elem(fmt.Sprintf("comm_d_proofs level %d", l), e.Hashes[0])
			}
		}
	}
	cols := func(field string, src []c1.ColumnProof, dst []columnWitness) {
		if len(src) != len(dst) {
			w.fail(field, "%d columns, want %d", len(src), len(dst))
			return
		}
		for i := range src {
			f := fmt.Sprintf("%s[%d]", field, i)
			if len(src[i].Column.Rows) != len(dst[i].Rows) {
				w.fail(f, "column of %d rows, want %d", len(src[i].Column.Rows), len(dst[i].Rows))
				return
			}
			for r, v := range src[i].Column.Rows {
				dst[i].Rows[r] = w.elem(fmt.Sprintf("%s.column.rows[%d]", f, r), v)
			}
			if pr := w.proof(f+".inclusion_proof", &src[i].InclusionProof); pr != nil {
				w.path(f+".inclusion_proof", pr, dst[i].Path)
			}
		}
	}
	cols("replica_column_proofs.drg_parents", src.ReplicaColumnProofs.DrgParents, dst.DRGParents)
	cols("replica_column_proofs.exp_parents", src.ReplicaColumnProofs.ExpParents, dst.ExpParents)
	if pr := w.proof("comm_r_last_proof", &src.CommRLastProof); pr != nil {
		w.path("comm_r_last_proof", pr, dst.RLastPath)
	}
	if pr := w.proof("replica_column_proofs.c_x.inclusion_proof", &src.ReplicaColumnProofs.CX.InclusionProof); pr != nil {
		w.path("replica_column_proofs.c_x.inclusion_proof", pr, dst.CPath)
	}
}

// Witness returns the full gnark witness (public and secret) of partition k
// of a C1 output for this circuit.
func (c *Compiled) Witness(out *c1.Output, k int) (witness.Witness, error) {
	a, err := assign(c.params, out, k)
	if err != nil {
		return nil, err
	}
	wit, err := frontend.NewWitness(a, ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("circuit: witness of partition %d: %w", k, err)
	}
	return wit, nil
}
