package poseidon

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Optimized holds one arity's constants in the layout neptune's bellperson
// circuit (neptune::circuit::poseidon_hash) consumes them: the same
// permutation as Hash, with every round constant added right after its
// round's S-box, before the round's linear layer.
//
// The permutation in this form, on the state x = [Tag, inputs...]:
//
//	first round:  x_i ← (x_i + k_i)^5 + k_{t+i}; x ← MDS·x
//	then R_F/2 − 1 full rounds: x_i ← x_i^5 + k_i; x ← MDS·x (PreSparse·x in
//	    the last of them)
//	R_P partial rounds: x_0 ← x_0^5 + k; x ← Sparse[j]·x
//	R_F/2 − 1 full rounds: x_i ← x_i^5 + k_i; x ← MDS·x
//	terminal full round: x_i ← x_i^5; x ← MDS·x
//
// where the keys k are taken from RoundKeys in that order (neptune's
// compressed_round_constants). The digest is x_1.
//
// Matrices act on column vectors (y = A·x) and are stored row-major. The
// fields are shared: read only.
type Optimized struct {
	Arity, Width              int
	FullRounds, PartialRounds int
	// Tag is the Merkle-tree domain tag, the state's element 0.
	Tag fr.Element
	// RoundKeys are 2·Width for the first round, Width for each other full
	// round but the terminal one, one per partial round.
	RoundKeys []fr.Element
	MDS       []fr.Element
	PreSparse []fr.Element
	Sparse    []SparseMatrix
}

// SparseMatrix is a partial round's matrix, identity but for row and
// column 0: y_0 = Σ W[i]·x_i, y_j = x_j + V[j−1]·x_0 for j ≥ 1 (neptune's
// w_hat and v_rest).
type SparseMatrix struct {
	W []fr.Element // Width entries
	V []fr.Element // Width − 1 entries
}

var optimizedCache [MaxArity + 1]struct {
	once sync.Once
	o    *Optimized
	err  error
}

// OptimizedConstants returns arity's constants in neptune's circuit layout
// (1 ≤ arity ≤ MaxArity), derived on first use and cached.
func OptimizedConstants(arity int) (*Optimized, error) {
	p, err := paramsFor(arity)
	if err != nil {
		return nil, err
	}
	c := &optimizedCache[arity]
	c.once.Do(func() { c.o, c.err = p.optimized() })
	return c.o, c.err
}

// optimized moves every constant p adds after a linear layer to before it:
// a constant c added after A·x equals A·(A⁻¹·c) added before.
func (p *params) optimized() (*Optimized, error) {
	t, half := p.width, p.full/2
	o := &Optimized{
		Arity: p.arity, Width: t, FullRounds: p.full, PartialRounds: p.partial,
		Tag: p.tag, MDS: p.mdsFlat, PreSparse: p.preFlat,
	}
	minv, err := p.mds.inverse()
	if err != nil {
		return nil, err
	}
	pre := newMatrix(t)
	for i := range t {
		copy(pre[i], p.preFlat[i*t:(i+1)*t])
	}
	preInv, err := pre.inverse()
	if err != nil {
		return nil, fmt.Errorf("poseidon: arity %d: pre-sparse matrix: %w", p.arity, err)
	}
	keys := append([]fr.Element(nil), p.first...)
	for r := range half {
		if r == half-1 {
			keys = append(keys, preInv.apply(p.post[r])...)
		} else {
			keys = append(keys, minv.apply(p.post[r])...)
		}
	}
	keys = append(keys, p.partialKey...)
	for r := half; r < len(p.post); r++ {
		keys = append(keys, minv.apply(p.post[r])...)
	}
	o.RoundKeys = keys
	for _, s := range p.sparse {
		w := make([]fr.Element, t)
		w[0] = s.col[0]
		copy(w[1:], s.row)
		o.Sparse = append(o.Sparse, SparseMatrix{W: w, V: append([]fr.Element(nil), s.col[1:]...)})
	}
	return o, nil
}
