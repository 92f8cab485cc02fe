package por

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Hasher is a tree's node hash in the circuit (filecoin-hashers'
// hash_multi_leaf_circuit): it hashes the arity children of one node.
type Hasher interface {
	HashMultiLeaf(cs r1cs.CS, leaves []num.AllocatedNum) (num.AllocatedNum, error)
}

// Tree is the layout of a Merkle tree and its node hash: Base is the
// arity of the base trees; Sub > 0 groups Sub base-tree roots under a
// node, Top > 0 groups Top of those under the root (Top needs Sub). Every
// arity is a power of two.
type Tree struct {
	Base, Sub, Top int
	Hasher         Hasher
}

// Element is one level of an inclusion path: the siblings of the path
// node (arity − 1, in order) and the path node's position among the arity
// children.
type Element struct {
	Hashes []fr.Element
	Index  int
}

// Path is an inclusion path: the base tree's levels, leaf level first, then
// one level in the sub layer and one in the top layer when the tree has
// them.
type Path struct {
	Base, Sub, Top []Element
}

// BaseHeight is the number of base path levels of a tree of leaves leaves
// (storage-proofs-core base_path_length).
func (t Tree) BaseHeight(leaves uint64) int {
	n := leaves
	if t.Sub > 0 {
		n /= uint64(t.Sub)
	}
	if t.Top > 0 {
		n /= uint64(t.Top)
	}
	h := 0
	for ; n > 1; n /= uint64(t.Base) {
		h++
	}
	return h
}

// Blank is the path of a blank circuit (AuthPath::blank): every level with
// zero siblings and index 0.
func (t Tree) Blank(leaves uint64) Path {
	level := func(arity, n int) []Element {
		out := make([]Element, n)
		for i := range out {
			out[i] = Element{Hashes: make([]fr.Element, arity-1)}
		}
		return out
	}
	p := Path{Base: level(t.Base, t.BaseHeight(leaves))}
	if t.Sub > 0 {
		p.Sub = level(t.Sub, 1)
	}
	if t.Top > 0 {
		p.Top = level(t.Top, 1)
	}
	return p
}

// Check reports the first way p does not fit the tree of leaves leaves:
// the number of levels, of siblings per level, or an index out of range.
func (t Tree) Check(p *Path, leaves uint64) error {
	if err := t.Validate(); err != nil {
		return err
	}
	wantSub, wantTop := 0, 0
	if t.Sub > 0 {
		wantSub = 1
	}
	if t.Top > 0 {
		wantTop = 1
	}
	for _, l := range []struct {
		name  string
		path  []Element
		arity int
		n     int
	}{{"base", p.Base, t.Base, t.BaseHeight(leaves)}, {"sub", p.Sub, t.Sub, wantSub}, {"top", p.Top, t.Top, wantTop}} {
		if len(l.path) != l.n {
			return fmt.Errorf("%s path has %d levels, want %d", l.name, len(l.path), l.n)
		}
		for i, e := range l.path {
			if len(e.Hashes) != l.arity-1 {
				return fmt.Errorf("%s path level %d has %d siblings, want %d", l.name, i, len(e.Hashes), l.arity-1)
			}
			if e.Index < 0 || e.Index >= l.arity {
				return fmt.Errorf("%s path level %d index %d outside 0..%d", l.name, i, e.Index, l.arity-1)
			}
		}
	}
	return nil
}

// Validate checks the arities: powers of two, Base ≥ 2, Top only with Sub.
func (t Tree) Validate() error {
	pow2 := func(a int) bool { return a > 0 && bits.OnesCount(uint(a)) == 1 }
	switch {
	case t.Base < 2 || !pow2(t.Base):
		return fmt.Errorf("base arity %d is not a power of two ≥ 2", t.Base)
	case t.Sub != 0 && (t.Sub < 2 || !pow2(t.Sub)):
		return fmt.Errorf("sub arity %d is not a power of two ≥ 2", t.Sub)
	case t.Top != 0 && (t.Top < 2 || !pow2(t.Top)):
		return fmt.Errorf("top arity %d is not a power of two ≥ 2", t.Top)
	case t.Top != 0 && t.Sub == 0:
		return fmt.Errorf("top arity %d without a sub layer", t.Top)
	}
	return nil
}

// Index is the leaf index the path opens: the levels' indices as digits,
// the leaf level least significant (what the packed path bits encode).
func (t Tree) Index(p *Path) uint64 {
	var idx, scale uint64 = 0, 1
	for _, l := range []struct {
		path  []Element
		arity int
	}{{p.Base, t.Base}, {p.Sub, t.Sub}, {p.Top, t.Top}} {
		for _, e := range l.path {
			idx += uint64(e.Index) * scale
			scale *= uint64(l.arity)
		}
	}
	return idx
}
