package poseidon

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// params holds the constants of one arity, in the textbook form (rc, mds) and
// in the optimised form the hashers run.
//
// Textbook permutation (neptune's HashMode::Correct), for round r of
// R = R_F + R_P: add rc[r·t : (r+1)·t]; S-box every element (full rounds:
// the first and last R_F/2) or element 0 only (partial rounds); multiply by
// mds.
//
// Optimised form, same function:
//
//	add first
//	R_F/2 times:  S-box all; multiply by mds (by pre in the last one); add post[r]
//	R_P times:    x0 ← x0^5 + partialKey[j]; multiply by sparse[j]
//	R_F/2 times:  S-box all; multiply by mds; add post[R_F/2 + r] (not after the last)
//
// Derivation (see compress): a constant added after the linear layer of a
// partial round equals M·q for q = M⁻¹·c; q[0] stays as a scalar after that
// round's S-box and q[1..] commutes with the S-box, so it moves into the
// previous round's constant. Then each partial round's matrix A is split as
// A = B·D with D = diag(1, Â) (Â: A without row and column 0) and
// B = A·D⁻¹, whose lower-right block is the identity; D acts only on
// elements 1.., which the partial S-box and key do not touch, so it moves into
// the previous round's matrix, ending in pre = D₀·M (and D₀ applied to the
// preceding round constant).
type params struct {
	arity, width  int
	full, partial int
	tag           fr.Element

	rc  []fr.Element
	mds matrix

	first      []fr.Element
	mdsFlat    []fr.Element // mds, row-major
	preFlat    []fr.Element // pre, row-major
	post       [][]fr.Element
	partialKey []fr.Element
	sparse     []sparseMatrix
}

// sparseMatrix is B = [[col[0], row], [col[1:], I]].
type sparseMatrix struct {
	col []fr.Element // B[i][0], i = 0..t-1
	row []fr.Element // B[0][j], j = 1..t-1
}

var paramCache [MaxArity + 1]struct {
	once sync.Once
	p    *params
	err  error
}

// paramsFor returns the cached constants for arity, deriving them on first
// use.
func paramsFor(arity int) (*params, error) {
	if arity < 1 || arity > MaxArity {
		return nil, arityError(arity)
	}
	c := &paramCache[arity]
	c.once.Do(func() { c.p, c.err = deriveParams(arity) })
	return c.p, c.err
}

func deriveParams(arity int) (*params, error) {
	t := arity + 1
	rf, rp := roundNumbers(t)
	p := &params{
		arity: arity, width: t, full: rf, partial: rp,
		rc:  roundConstants(t, rf, rp),
		mds: cauchyMDS(t),
	}
	p.tag.SetUint64(1<<arity - 1)
	if err := p.compress(); err != nil {
		return nil, fmt.Errorf("poseidon: deriving arity-%d constants: %w", arity, err)
	}
	p.mdsFlat = flatten(p.mds)
	return p, nil
}

func (p *params) compress() error {
	t, half, rp := p.width, p.full/2, p.partial
	rounds := p.full + rp
	minv, err := p.mds.inverse()
	if err != nil {
		return err
	}

	// post[r] is the constant added after round r's linear layer: the next
	// round's constant in the textbook form.
	post := make([][]fr.Element, rounds)
	for r := 0; r < rounds-1; r++ {
		post[r] = append([]fr.Element(nil), p.rc[(r+1)*t:(r+2)*t]...)
	}
	p.first = append([]fr.Element(nil), p.rc[:t]...)

	p.partialKey = make([]fr.Element, rp)
	for r := half + rp - 1; r >= half; r-- {
		q := minv.apply(post[r])
		p.partialKey[r-half] = q[0]
		for i := 1; i < t; i++ {
			post[r-1][i].Add(&post[r-1][i], &q[i])
		}
		post[r] = nil
	}

	p.sparse = make([]sparseMatrix, rp)
	cur := p.mds
	var d matrix
	for j := rp - 1; j >= 0; j-- {
		hat := cur.minor()
		hatInv, err := hat.inverse()
		if err != nil {
			return err
		}
		b := cur.mul(blockDiag(hatInv))
		if !b.minor().isIdentity() {
			return fmt.Errorf("poseidon: partial round %d: factor is not sparse", j)
		}
		s := sparseMatrix{col: make([]fr.Element, t), row: append([]fr.Element(nil), b[0][1:]...)}
		for i := range t {
			s.col[i] = b[i][0]
		}
		p.sparse[j] = s
		d = blockDiag(hat)
		cur = d.mul(p.mds)
	}
	p.preFlat = flatten(cur)
	post[half-1] = d.apply(post[half-1])

	for r := range half {
		p.post = append(p.post, post[r])
	}
	for r := half + rp; r < rounds-1; r++ {
		p.post = append(p.post, post[r])
	}
	return nil
}

// blockDiag returns diag(1, m).
func blockDiag(m matrix) matrix {
	out := identity(len(m) + 1)
	for i := range m {
		copy(out[i+1][1:], m[i])
	}
	return out
}

func flatten(m matrix) []fr.Element {
	out := make([]fr.Element, 0, len(m)*len(m))
	for _, row := range m {
		out = append(out, row...)
	}
	return out
}

// RoundNumbers returns the full and partial round counts for arity.
func RoundNumbers(arity int) (full, partial int, err error) {
	p, err := paramsFor(arity)
	if err != nil {
		return 0, 0, err
	}
	return p.full, p.partial, nil
}
