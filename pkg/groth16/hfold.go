package groth16

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sort"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// foldC returns, for M the points mr indexed by constraint,
//
//	LInput_k = −Σ_r C[r][k]·M_r        (the inputs)
//	L'_k     = L_k − Σ_r C[r][k]·M_r   (the aux variables, l their L)
//
// in two passes. The first multiplies every term whose coefficient is
// not 0 or ±1, in parallel by constraint: a coefficient ±2^k comes from
// one doubling chain per constraint (SHA-256's MultiEq and num's packing
// put 2^0 … 2^252 in one row, so a row costs its largest exponent in
// doublings, not a scalar multiplication per term), another small one
// (|c| < 2^30) from a double-and-add, the rest from a full scalar
// multiplication. The second walks the columns: additions only, so a
// variable with many terms (ONE) costs no more than its additions.
// L' goes into into (which may be l itself: each variable's L is read
// before its L' is written), or a new array when into is nil. Progress
// counts the products, then the variables.
func foldC(ctx context.Context, cols *columns, mr, l, into []curve.G1Affine, m, nIn, nw int, progress Progress) (lInput, lOut []curve.G1Affine, err error) {
	nAux := len(cols.start) - 1 - nIn
	n := 0
	for _, c := range cols.codes {
		if multiplied(c) {
			n++
		}
	}
	if n > math.MaxUint32 {
		return nil, nil, fmt.Errorf("matrix C: %d terms with a coefficient other than ±1: at most 2^32", n)
	}
	pos := make([]int, 0, n) // the multiplied terms' positions in cols, ascending
	for x, c := range cols.codes {
		if multiplied(c) {
			pos = append(pos, x)
		}
	}
	pr := newProgressReporter(progress, "convert h: fold", int64(n+nIn+nAux))
	prod, err := termProducts(ctx, cols, pos, mr, m, nw, pr)
	if err != nil {
		return nil, nil, err
	}
	lInput = make([]curve.G1Affine, nIn)
	lOut = into
	if lOut == nil {
		lOut = make([]curve.G1Affine, nAux)
	}
	err = parallelRange(ctx, nIn+nAux, 1<<12, nw, func(s, e int) error {
		jac := make([]curve.G1Jac, e-s)
		p := sort.SearchInts(pos, cols.start[s]) // the chunk's first product
		for v := s; v < e; v++ {
			acc := &jac[v-s] // Σ_r C[r][v]·M_r, then its negation plus L_v
			for x := cols.start[v]; x < cols.start[v+1]; x++ {
				switch cols.codes[x] {
				case 1:
					acc.AddMixed(&mr[cols.rows[x]])
				case -1:
					var q curve.G1Affine
					q.Neg(&mr[cols.rows[x]])
					acc.AddMixed(&q)
				case 0:
				default:
					acc.AddMixed(&prod[p])
					p++
				}
			}
			acc.Neg(acc)
			if v >= nIn {
				acc.AddMixed(&l[v-nIn])
			}
		}
		aff := curve.BatchJacobianToAffineG1(jac)
		for v := s; v < e; v++ {
			if v < nIn {
				lInput[v] = aff[v-s]
			} else {
				lOut[v-nIn] = aff[v-s]
			}
		}
		pr.add(int64(e - s))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return lInput, lOut, nil
}

// multiplied reports whether a term of code c is multiplied before the
// column walk (its coefficient is neither 0 nor ±1).
func multiplied(c int32) bool { return c < -1 || c > 1 }

// termProducts returns prod[i] = coefficient·M_row for the term of cols
// at pos[i] (the terms whose coefficient is neither 0 nor ±1).
func termProducts(ctx context.Context, cols *columns, pos []int, mr []curve.G1Affine, m, nw int, pr *progressReporter) ([]curve.G1Affine, error) {
	n := len(pos)

	// Each large coefficient's power of two, when it is ±2^k.
	largeExp := make([]int16, len(cols.large))
	largeNeg := make([]bool, len(cols.large))
	var b big.Int
	for i := range cols.large {
		largeExp[i] = -1
		for _, neg := range []bool{false, true} {
			c := cols.large[i]
			if neg {
				c.Neg(&c)
			}
			c.BigInt(&b)
			if k := b.BitLen() - 1; k >= 1 && b.TrailingZeroBits() == uint(k) {
				largeExp[i], largeNeg[i] = int16(k), neg
			}
		}
	}
	// pow2 is k and the sign when the coefficient of code c is ±2^k
	// (k ≥ 1), k = −1 otherwise.
	pow2 := func(c int32) (int, bool) {
		if c <= codeLarge {
			i := c - math.MinInt32
			return int(largeExp[i]), largeNeg[i]
		}
		u := uint32(c)
		if c < 0 {
			u = uint32(-c)
		}
		if u&(u-1) == 0 {
			return bits.Len32(u) - 1, c < 0
		}
		return -1, false
	}

	// The products grouped by row (a counting sort): row r's are
	// order[rowEnd[r−1]:rowEnd[r]].
	rowEnd := make([]uint32, m)
	for _, x := range pos {
		rowEnd[cols.rows[x]]++
	}
	var sum uint32
	for r := range rowEnd {
		sum += rowEnd[r]
		rowEnd[r] = sum - rowEnd[r] // the row's start, for now
	}
	order := make([]uint32, n)
	for i, x := range pos {
		r := cols.rows[x]
		order[rowEnd[r]] = uint32(i)
		rowEnd[r]++ // now the row's end
	}
	rowStart := func(r int) uint32 {
		if r == 0 {
			return 0
		}
		return rowEnd[r-1]
	}

	prod := make([]curve.G1Affine, n)
	const batch = 1 << 12
	err := parallelRange(ctx, m, 1<<14, nw, func(s, e int) error {
		ids := order[rowStart(s):rowStart(e)]
		if len(ids) == 0 {
			return nil
		}
		jac := make([]curve.G1Jac, 0, min(batch, len(ids)))
		at := make([]uint32, 0, cap(jac))
		flush := func() {
			aff := curve.BatchJacobianToAffineG1(jac)
			for j, id := range at {
				prod[id] = aff[j]
			}
			jac, at = jac[:0], at[:0]
		}
		var t, q curve.G1Jac
		var k big.Int
		exp := func(id uint32) int { e, _ := pow2(cols.codes[pos[id]]); return e }
		byExp := func(a, b uint32) int { return cmp.Compare(exp(a), exp(b)) }
		for r := s; r < e; r++ {
			row := order[rowStart(r):rowEnd[r]]
			if len(row) == 0 {
				continue
			}
			slices.SortFunc(row, byExp)
			p := &mr[r]
			t.FromAffine(p)
			have := 0 // t = 2^have·M_r
			for _, id := range row {
				c := cols.codes[pos[id]]
				switch e, neg := pow2(c); {
				case e >= 0:
					for ; have < e; have++ {
						t.DoubleAssign()
					}
					q.Set(&t)
					if neg {
						q.Neg(&q)
					}
				case c > codeLarge:
					mulSmall(&q, p, c)
				default:
					cols.large[c-math.MinInt32].BigInt(&k)
					q.FromAffine(p)
					q.ScalarMultiplication(&q, &k)
				}
				jac = append(jac, q)
				at = append(at, id)
				if len(jac) == cap(jac) {
					flush()
				}
			}
		}
		if len(jac) > 0 {
			flush()
		}
		pr.add(int64(len(ids)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return prod, nil
}

// mulSmall sets t = c·p for a small non-zero c (|c| < 2^30) by double
// and add.
func mulSmall(t *curve.G1Jac, p *curve.G1Affine, c int32) {
	u := uint32(c)
	if c < 0 {
		u = uint32(-c)
	}
	t.FromAffine(p)
	for i := bits.Len32(u) - 2; i >= 0; i-- {
		t.DoubleAssign()
		if u>>uint(i)&1 == 1 {
			t.AddMixed(p)
		}
	}
	if c < 0 {
		t.Neg(t)
	}
}
