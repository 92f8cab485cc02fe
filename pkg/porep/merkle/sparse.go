package merkle

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// SparseTree is a tree of a given shape over a (possibly huge) number of
// leaves in which every leaf holds one default value except a set of explicit
// leaves. It stores only the explicit leaves, the nodes above them and one
// default subtree hash per level, so building it costs O(explicit × height)
// hashes and memory whatever the leaf count, and every root and inclusion
// proof is exactly what Build would give for the same leaf assignment.
//
// It is how the sealer's sparse benchmark mode opens 32 GiB and 64 GiB trees:
// tree D of an all-zero sector (no explicit leaves: the root is the
// zero-piece commitment), and trees C and R_last where only the challenged
// nodes and their parents have real leaves.
type SparseTree struct {
	shape  porep.TreeShape
	leaves uint64
	per    uint64 // leaves per base tree
	height int    // path elements in a base tree
	// defaults[l] is a base-tree node at level l whose leaves are all the
	// default (defaults[0] is the default leaf, defaults[height] the root of
	// an all-default base tree).
	defaults []porep.Domain
	// nodes[l] holds the base-tree nodes at level l that have an explicit
	// leaf below them, indexed across all base trees in order (node j of
	// level l covers leaves j·Base^l … (j+1)·Base^l − 1).
	nodes    []map[uint64]porep.Domain
	subRoots []porep.Domain // Top trees only
	root     porep.Domain
}

// checkLeafCount checks that n leaves split into the shape's base trees and
// that each base tree is a power of the base arity; it returns the leaves per
// base tree.
func checkLeafCount(shape porep.TreeShape, n uint64) (uint64, error) {
	if shape.Base < 2 {
		return 0, fmt.Errorf("merkle: base arity %d < 2", shape.Base)
	}
	count := uint64(shape.BaseTreeCount())
	if n == 0 || n%count != 0 {
		return 0, fmt.Errorf("merkle: %d leaves do not split into %d base trees", n, count)
	}
	per := n / count
	for m := per; m > 1; m /= uint64(shape.Base) {
		if m%uint64(shape.Base) != 0 {
			return 0, fmt.Errorf("merkle: base tree of %d leaves is not a power of arity %d", per, shape.Base)
		}
	}
	return per, nil
}

// BuildSparse builds the tree of the given shape over leaves leaves, each
// equal to def except those in explicit (leaf index → value; the map is
// copied). Hashing runs on GOMAXPROCS goroutines level by level. It fails
// when the leaf count does not fit the shape, an explicit index is out of
// range, or the hasher rejects a value (a non-canonical Poseidon input).
func BuildSparse(ctx context.Context, shape porep.TreeShape, leaves uint64, def porep.Domain, explicit map[uint64]porep.Domain, h Hasher) (*SparseTree, error) {
	per, err := checkLeafCount(shape, leaves)
	if err != nil {
		return nil, err
	}
	t := &SparseTree{shape: shape, leaves: leaves, per: per, height: shape.BaseHeight(leaves)}
	a := shape.Base
	t.defaults = make([]porep.Domain, t.height+1)
	t.defaults[0] = def
	group := make([]porep.Domain, a)
	for l := range t.height {
		for k := range group {
			group[k] = t.defaults[l]
		}
		if t.defaults[l+1], err = h.HashNode(group); err != nil {
			return nil, fmt.Errorf("merkle: sparse default node of level %d: %w", l+1, err)
		}
	}
	for i := range explicit {
		if i >= leaves {
			return nil, fmt.Errorf("merkle: sparse explicit leaf %d out of range (%d leaves)", i, leaves)
		}
	}
	t.nodes = make([]map[uint64]porep.Domain, t.height+1)
	t.nodes[0] = maps.Clone(explicit)
	if t.nodes[0] == nil {
		t.nodes[0] = map[uint64]porep.Domain{}
	}
	for l := range t.height {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("merkle: sparse build: %w", err)
		}
		if t.nodes[l+1], err = t.hashLevel(l, h); err != nil {
			return nil, fmt.Errorf("merkle: sparse build level %d: %w", l+1, err)
		}
	}
	roots := make([]porep.Domain, shape.BaseTreeCount())
	for i := range roots {
		roots[i] = t.node(t.height, uint64(i))
	}
	if t.subRoots, t.root, err = combineRoots(shape, roots, h); err != nil {
		return nil, err
	}
	return t, nil
}

// hashLevel computes the explicit nodes of level l+1 from those of level l.
func (t *SparseTree) hashLevel(l int, h Hasher) (map[uint64]porep.Domain, error) {
	a := uint64(t.shape.Base)
	seen := make(map[uint64]struct{}, len(t.nodes[l])/int(a)+1)
	for j := range t.nodes[l] {
		seen[j/a] = struct{}{}
	}
	parents := slices.Sorted(maps.Keys(seen))
	out := make([]porep.Domain, len(parents))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(parents)/64))
	chunk := (len(parents) + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(parents))
		wg.Go(func() {
			group := make([]porep.Domain, a)
			for i := lo; i < hi; i++ {
				for k := range a {
					group[k] = t.node(l, parents[i]*a+k)
				}
				d, err := h.HashNode(group)
				if err != nil {
					errs[w] = fmt.Errorf("node %d: %w", parents[i], err)
					return
				}
				out[i] = d
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	m := make(map[uint64]porep.Domain, len(parents))
	for i, p := range parents {
		m[p] = out[i]
	}
	return m, nil
}

// node is base-tree node j of level l: explicit, or the level's default.
func (t *SparseTree) node(l int, j uint64) porep.Domain {
	if d, ok := t.nodes[l][j]; ok {
		return d
	}
	return t.defaults[l]
}

// combineRoots hashes the base-tree roots into the sub-tree roots (Top trees)
// and the root, as rust-fil-proofs' compound trees do.
func combineRoots(shape porep.TreeShape, roots []porep.Domain, h Hasher) (subRoots []porep.Domain, root porep.Domain, err error) {
	switch KindOf(shape) {
	case Single:
		return nil, roots[0], nil
	case Sub:
		if root, err = h.HashNode(roots); err != nil {
			return nil, porep.Domain{}, fmt.Errorf("merkle: sub-tree root: %w", err)
		}
		return nil, root, nil
	}
	subRoots = make([]porep.Domain, shape.Top)
	for j := range shape.Top {
		if subRoots[j], err = h.HashNode(roots[j*shape.Sub : (j+1)*shape.Sub]); err != nil {
			return nil, porep.Domain{}, fmt.Errorf("merkle: sub-tree root %d: %w", j, err)
		}
	}
	if root, err = h.HashNode(subRoots); err != nil {
		return nil, porep.Domain{}, fmt.Errorf("merkle: top root: %w", err)
	}
	return subRoots, root, nil
}

// Root is the tree's root.
func (t *SparseTree) Root() porep.Domain { return t.root }

// Leaves is the number of leaves.
func (t *SparseTree) Leaves() uint64 { return t.leaves }

// Explicit is the number of explicit leaves.
func (t *SparseTree) Explicit() int { return len(t.nodes[0]) }

// IsExplicit reports whether leaf i was given explicitly.
func (t *SparseTree) IsExplicit(i uint64) bool {
	_, ok := t.nodes[0][i]
	return ok
}

// Default is the default leaf value.
func (t *SparseTree) Default() porep.Domain { return t.defaults[0] }

// StoredNodes is the number of non-default base-tree nodes held (explicit
// leaves included): the tree's memory is about 40 bytes per stored node.
func (t *SparseTree) StoredNodes() int {
	n := 0
	for _, m := range t.nodes {
		n += len(m)
	}
	return n
}

// Leaf returns leaf i (the default unless it is explicit); i must be < Leaves.
func (t *SparseTree) Leaf(i uint64) porep.Domain { return t.node(0, i) }

// Prove returns the inclusion proof of leaf i, explicit or default.
func (t *SparseTree) Prove(i uint64) (*Proof, error) {
	if i >= t.leaves {
		return nil, fmt.Errorf("merkle: leaf %d out of range (%d leaves)", i, t.leaves)
	}
	ti := i / t.per
	p := &Proof{Kind: KindOf(t.shape), Root: t.root, Leaf: t.node(0, i)}
	a := uint64(t.shape.Base)
	group := make([]porep.Domain, a)
	j := i
	for l := range t.height {
		first := j / a * a
		for k := range a {
			group[k] = t.node(l, first+k)
		}
		p.Base = append(p.Base, sibling(group, j%a))
		j /= a
	}
	p.addCompound(t.shape, ti, func(k uint64) porep.Domain { return t.node(t.height, k) }, t.subRoots)
	return p, nil
}
