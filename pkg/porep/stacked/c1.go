package stacked

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/por"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// FromC1 is the circuit of partition k of a parsed C1 output (out.Shape
// set, as c1.Parse leaves it), as StackedCompound::circuit makes it from
// the vanilla proofs: comm_r_last and comm_c are challenge 0's tree R_last
// and tree C roots (every challenge must have the same), the challenged
// node is the first labeling proof's, and only the paths, data leaves and
// parents' columns are taken from each proof (labels and replica nodes are
// computed by the circuit). Documents that do not fit the shape
// (c1.Output.Validate) and values that are not canonical field elements
// are errors naming the field (its JSON path).
func FromC1(out *c1.Output, k int) (*Circuit, error) {
	if out == nil || out.Shape == nil {
		return nil, fmt.Errorf("%w: C1 output without a resolved shape", ErrShape)
	}
	s := out.Shape
	if err := checkShape(s); err != nil {
		return nil, err
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrShape, err)
	}
	parts := out.VanillaProofs.Partitions()
	if k < 0 || k >= len(parts) {
		return nil, fmt.Errorf("%w: partition %d outside the document's %d", ErrShape, k, len(parts))
	}
	proofs := parts[k]
	if len(proofs) == 0 {
		return nil, fmt.Errorf("%w: partition %d has no vanilla proofs", ErrShape, k)
	}
	tag, _ := out.VanillaProofs.Tag()
	b := builder{base: fmt.Sprintf("vanilla_proofs.%s[%d]", tag, k)}
	c := &Circuit{Shape: s, Challenges: make([]Challenge, len(proofs))}
	c.ReplicaID = b.elem("replica_id", out.ReplicaID)
	c.CommD = b.elem("comm_d", out.CommD)
	c.CommR = b.elem("comm_r", out.CommR)
	rlast := b.proof("[0].comm_r_last_proof", &proofs[0].CommRLastProof)
	cx := b.proof("[0].replica_column_proofs.c_x.inclusion_proof", &proofs[0].ReplicaColumnProofs.CX.InclusionProof)
	if b.err != nil {
		return nil, b.err
	}
	c.CommRLast = b.elem(b.base+"[0].comm_r_last_proof.root", rlast.Root)
	c.CommC = b.elem(b.base+"[0].replica_column_proofs.c_x.inclusion_proof.root", cx.Root)
	for i := range proofs {
		b.challenge(&c.Challenges[i], &proofs[i], i, rlast.Root, cx.Root)
		if b.err != nil {
			return nil, b.err
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// builder converts one partition's proofs, keeping the first error.
type builder struct {
	base string
	err  error
}

func (b *builder) fail(field, format string, a ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("%w: %s: %s", ErrShape, field, fmt.Sprintf(format, a...))
	}
}

func (b *builder) elem(field string, d porep.Domain) fr.Element {
	e, err := d.Element()
	if err != nil {
		b.fail(field, "%v", err)
	}
	return e
}

func (b *builder) proof(field string, m *c1.MerkleProof) *merkle.Proof {
	p, err := m.Proof()
	if err != nil {
		b.fail(b.base+field, "%v", err)
		return &merkle.Proof{}
	}
	return p
}

func (b *builder) path(field string, p *merkle.Proof) por.Path {
	conv := func(name string, in []merkle.PathElement) []por.Element {
		if len(in) == 0 {
			return nil
		}
		out := make([]por.Element, len(in))
		for i, e := range in {
			out[i].Hashes = make([]fr.Element, len(e.Hashes))
			for j, h := range e.Hashes {
				out[i].Hashes[j] = b.elem(fmt.Sprintf("%s.%s[%d].hashes[%d]", field, name, i, j), h)
			}
			if e.Index > 1<<30 {
				b.fail(fmt.Sprintf("%s.%s[%d].index", field, name, i), "index %d out of range", e.Index)
			}
			out[i].Index = int(e.Index)
		}
		return out
	}
	return por.Path{Base: conv("base", p.Base), Sub: conv("sub", p.Sub), Top: conv("top", p.Top)}
}

func (b *builder) challenge(dst *Challenge, src *c1.ChallengeProof, i int, commRLast, commC porep.Domain) {
	f := fmt.Sprintf("%s[%d]", b.base, i)
	d := b.proof(fmt.Sprintf("[%d].comm_d_proofs", i), &src.CommDProofs)
	r := b.proof(fmt.Sprintf("[%d].comm_r_last_proof", i), &src.CommRLastProof)
	cx := b.proof(fmt.Sprintf("[%d].replica_column_proofs.c_x.inclusion_proof", i), &src.ReplicaColumnProofs.CX.InclusionProof)
	if b.err != nil {
		return
	}
	if r.Root != commRLast {
		b.fail(f+".comm_r_last_proof.root", "inconsistent comm_r_last: %s, challenge 0 has %s", r.Root, commRLast)
	}
	if cx.Root != commC {
		b.fail(f+".replica_column_proofs.c_x.inclusion_proof.root", "inconsistent comm_c: %s, challenge 0 has %s", cx.Root, commC)
	}
	if len(src.LabelingProofs) == 0 {
		b.fail(f+".labeling_proofs", "no labeling proofs")
		return
	}
	dst.Node = src.LabelingProofs[0].Node
	dst.DataLeaf = b.elem(f+".comm_d_proofs.leaf", d.Leaf)
	dst.CommDPath = b.path(f+".comm_d_proofs", d)
	dst.CommRLastPath = b.path(f+".comm_r_last_proof", r)
	dst.CommCPath = b.path(f+".replica_column_proofs.c_x.inclusion_proof", cx)
	cols := func(name string, in []c1.ColumnProof) []Column {
		out := make([]Column, len(in))
		for j := range in {
			cf := fmt.Sprintf("%s.replica_column_proofs.%s[%d]", f, name, j)
			p := b.proof(fmt.Sprintf("[%d].replica_column_proofs.%s[%d].inclusion_proof", i, name, j), &in[j].InclusionProof)
			out[j].Path = b.path(cf+".inclusion_proof", p)
			out[j].Rows = make([]fr.Element, len(in[j].Column.Rows))
			for r, v := range in[j].Column.Rows {
				out[j].Rows[r] = b.elem(fmt.Sprintf("%s.column.rows[%d]", cf, r), v)
			}
		}
		return out
	}
	dst.DRGParents = cols("drg_parents", src.ReplicaColumnProofs.DrgParents)
	dst.ExpParents = cols("exp_parents", src.ReplicaColumnProofs.ExpParents)
}
