package merkle

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Tree is a fully materialized tree of a given shape.
type Tree struct {
	shape porep.TreeShape
	// base[t][level] are the nodes of base tree t; level 0 the leaves.
	base [][][]porep.Domain
	// subRoots are the roots of the sub-trees (Top trees only).
	subRoots []porep.Domain
	root     porep.Domain
}

// Build builds a tree over leaves. len(leaves) must fit the shape (each base
// tree a power of the base arity). Levels are hashed in parallel.
func Build(ctx context.Context, shape porep.TreeShape, leaves []porep.Domain, h Hasher) (*Tree, error) {
	n := uint64(len(leaves))
	per, err := checkLeafCount(shape, n)
	if err != nil {
		return nil, err
	}
	count := uint64(shape.BaseTreeCount())
	t := &Tree{shape: shape, base: make([][][]porep.Domain, count)}
	roots := make([]porep.Domain, count)
	for i := range count {
		levels, err := buildBase(ctx, leaves[i*per:(i+1)*per], shape.Base, h)
		if err != nil {
			return nil, err
		}
		t.base[i] = levels
		roots[i] = levels[len(levels)-1][0]
	}
	if t.subRoots, t.root, err = combineRoots(shape, roots, h); err != nil {
		return nil, err
	}
	return t, nil
}

func buildBase(ctx context.Context, leaves []porep.Domain, arity int, h Hasher) ([][]porep.Domain, error) {
	levels := [][]porep.Domain{leaves}
	cur := leaves
	for len(cur) > 1 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("merkle: build: %w", err)
		}
		next := make([]porep.Domain, len(cur)/arity)
		workers := min(runtime.GOMAXPROCS(0), len(next))
		chunk := (len(next) + workers - 1) / workers
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			lo, hi := w*chunk, min((w+1)*chunk, len(next))
			wg.Go(func() {
				for i := lo; i < hi; i++ {
					d, err := h.HashNode(cur[i*arity : (i+1)*arity])
					if err != nil {
						errs[w] = err
						return
					}
					next[i] = d
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("merkle: build: %w", err)
			}
		}
		levels = append(levels, next)
		cur = next
	}
	return levels, nil
}

// Root is the tree's root.
func (t *Tree) Root() porep.Domain { return t.root }

// Leaves is the number of leaves.
func (t *Tree) Leaves() uint64 { return uint64(len(t.base)) * uint64(len(t.base[0][0])) }

// Leaf returns leaf i.
func (t *Tree) Leaf(i uint64) porep.Domain {
	per := uint64(len(t.base[0][0]))
	return t.base[i/per][0][i%per]
}

// Prove returns the inclusion proof of leaf i.
func (t *Tree) Prove(i uint64) (*Proof, error) {
	if i >= t.Leaves() {
		return nil, fmt.Errorf("merkle: leaf %d out of range (%d leaves)", i, t.Leaves())
	}
	per := uint64(len(t.base[0][0]))
	ti, li := i/per, i%per
	levels := t.base[ti]
	p := &Proof{Kind: KindOf(t.shape), Root: t.root, Leaf: levels[0][li]}
	a := uint64(t.shape.Base)
	for lvl := 0; lvl < len(levels)-1; lvl++ {
		group := li / a * a
		p.Base = append(p.Base, sibling(levels[lvl][group:group+a], li%a))
		li /= a
	}
	p.addCompound(t.shape, ti, func(k uint64) porep.Domain {
		b := t.base[k]
		return b[len(b)-1][0]
	}, t.subRoots)
	return p, nil
}

// addCompound sets the Sub and Top elements of a Sub or Top proof whose leaf
// is in base tree ti: baseRoot(k) is the root of base tree k, subRoots the
// sub-tree roots (Top trees only). Single proofs are left as they are.
func (p *Proof) addCompound(shape porep.TreeShape, ti uint64, baseRoot func(k uint64) porep.Domain, subRoots []porep.Domain) {
	if p.Kind == Single {
		return
	}
	s := uint64(shape.Sub)
	g := ti / s // the sub-tree holding base tree ti (0 for Sub trees)
	roots := make([]porep.Domain, s)
	for k := range roots {
		roots[k] = baseRoot(g*s + uint64(k))
	}
	p.Sub = []PathElement{sibling(roots, ti%s)}
	if p.Kind == Top {
		p.Top = []PathElement{sibling(subRoots, g)}
	}
}

func sibling(group []porep.Domain, idx uint64) PathElement {
	e := PathElement{Index: idx, Hashes: make([]porep.Domain, 0, len(group)-1)}
	for k := range group {
		if uint64(k) != idx {
			e.Hashes = append(e.Hashes, group[k])
		}
	}
	return e
}
