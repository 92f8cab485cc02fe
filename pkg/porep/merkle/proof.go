package merkle

import (
	"errors"
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Kind is the ProofData variant of a proof.
type Kind int

const (
	// Single is a proof in one tree of the base arity.
	Single Kind = iota
	// Sub is a base path plus one element over Sub sub-tree roots.
	Sub
	// Top is a base path, one sub element and one top element.
	Top
)

func (k Kind) String() string {
	switch k {
	case Single:
		return "Single"
	case Sub:
		return "Sub"
	case Top:
		return "Top"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// KindOf is the proof kind of trees of that shape.
func KindOf(t porep.TreeShape) Kind {
	switch {
	case t.Top > 0:
		return Top
	case t.Sub > 0:
		return Sub
	}
	return Single
}

// PathElement is one level of a path: the siblings of the path node in order
// (the path node itself left out) and the path node's position among them.
//
// The JSON tags give the serde form of rust-fil-proofs' PathElement (its
// _arity field is serde(skip)).
type PathElement struct {
	Hashes []porep.Domain `json:"hashes"`
	Index  uint64         `json:"index"`
}

// Proof is an inclusion proof (storage-proofs-core MerkleProof).
type Proof struct {
	Kind Kind
	Root porep.Domain
	Leaf porep.Domain
	// Base is the path in the base tree, leaf level first.
	Base []PathElement
	// Sub has one element for Sub and Top proofs, none for Single.
	Sub []PathElement
	// Top has one element for Top proofs.
	Top []PathElement
}

// ErrRootMismatch is returned by Verify when the path does not lead to Root.
var ErrRootMismatch = errors.New("merkle: computed root differs from the proof's root")

// CheckShape checks the proof's layout against a tree shape and its leaf
// count: kind, path lengths, sibling counts and index ranges.
func (p *Proof) CheckShape(t porep.TreeShape, leaves uint64) error {
	if want := KindOf(t); p.Kind != want {
		return fmt.Errorf("merkle: proof kind %s, tree %s needs %s", p.Kind, t, want)
	}
	if want := t.BaseHeight(leaves); len(p.Base) != want {
		return fmt.Errorf("merkle: base path has %d elements, want %d", len(p.Base), want)
	}
	if err := checkPath("base", p.Base, t.Base); err != nil {
		return err
	}
	wantSub, wantTop := 0, 0
	if p.Kind != Single {
		wantSub = 1
	}
	if p.Kind == Top {
		wantTop = 1
	}
	if len(p.Sub) != wantSub {
		return fmt.Errorf("merkle: sub path has %d elements, want %d", len(p.Sub), wantSub)
	}
	if len(p.Top) != wantTop {
		return fmt.Errorf("merkle: top path has %d elements, want %d", len(p.Top), wantTop)
	}
	if err := checkPath("sub", p.Sub, t.Sub); err != nil {
		return err
	}
	return checkPath("top", p.Top, t.Top)
}

func checkPath(name string, path []PathElement, arity int) error {
	for i, e := range path {
		if len(e.Hashes) != arity-1 {
			return fmt.Errorf("merkle: %s path element %d has %d hashes, want %d", name, i, len(e.Hashes), arity-1)
		}
		if e.Index >= uint64(arity) {
			return fmt.Errorf("merkle: %s path element %d index %d ≥ arity %d", name, i, e.Index, arity)
		}
	}
	return nil
}

// PathIndex is the leaf index the path proves (path_index of proof.rs).
// Call CheckShape first: indexes must be below their arity.
func (p *Proof) PathIndex(t porep.TreeShape) uint64 {
	base, baseLeaves := uint64(0), uint64(1)
	for i := len(p.Base) - 1; i >= 0; i-- {
		base = base*uint64(t.Base) + p.Base[i].Index
	}
	for range p.Base {
		baseLeaves *= uint64(t.Base)
	}
	idx := base
	if len(p.Sub) > 0 {
		idx += p.Sub[0].Index * baseLeaves
	}
	if len(p.Top) > 0 {
		idx += p.Top[0].Index * baseLeaves * uint64(t.Sub)
	}
	return idx
}

// ComputeRoot hashes the leaf up the path.
func (p *Proof) ComputeRoot(h Hasher) (porep.Domain, error) {
	cur := p.Leaf
	var buf []porep.Domain
	for _, path := range [][]PathElement{p.Base, p.Sub, p.Top} {
		for _, e := range path {
			if e.Index > uint64(len(e.Hashes)) {
				return porep.Domain{}, fmt.Errorf("merkle: path index %d > %d siblings", e.Index, len(e.Hashes))
			}
			buf = append(buf[:0], e.Hashes[:e.Index]...)
			buf = append(buf, cur)
			buf = append(buf, e.Hashes[e.Index:]...)
			var err error
			if cur, err = h.HashNode(buf); err != nil {
				return porep.Domain{}, err
			}
		}
	}
	return cur, nil
}

// Verify recomputes the root from the leaf and compares it with Root.
func (p *Proof) Verify(h Hasher) error {
	root, err := p.ComputeRoot(h)
	if err != nil {
		return err
	}
	if root != p.Root {
		return fmt.Errorf("%w: computed %s, proof has %s", ErrRootMismatch, root, p.Root)
	}
	return nil
}
