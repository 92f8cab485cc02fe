package groth16

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/sha256"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// shaSystem is blocks SHA-256 compressions of allocated bits: the C matrix
// of the PoRep circuit's label and tree-D hashing (MultiEq rows of ±2^k,
// the round constants on ONE).
func shaSystem(tb testing.TB, blocks int) *r1cs.System {
	tb.Helper()
	sys := r1cs.NewSystem()
	for i := range blocks {
		r1cs.In(sys, r1cs.N(fmt.Sprintf("block %d", i)), func() {
			in := make([]boolean.Boolean, 512)
			for j := range in {
				in[j] = boolean.Is(boolean.AllocBit(sys, (i*7+j*13)%5 < 2))
			}
			sha256.BlockNoPadding(sys, in)
		})
	}
	return sys
}

// distinctPoints is n distinct G1 points (i+1)·G, from additions.
func distinctPoints(n int) []curve.G1Affine {
	_, _, g, _ := curve.Generators()
	jac := make([]curve.G1Jac, n)
	var acc curve.G1Jac
	for i := range jac {
		acc.AddMixed(&g)
		jac[i] = acc
	}
	return curve.BatchJacobianToAffineG1(jac)
}

// foldC against the definition, term by term with gnark-crypto's scalar
// multiplication, on a SHA-256 compression's C matrix: the 2^k of its
// MultiEq rows (coeffSystem's test covers negative and other large
// coefficients).
func TestFoldCAgainstScalarMultiplication(t *testing.T) {
	ctx := context.Background()
	sys := shaSystem(t, 1)
	m, nIn, nAux := sys.NumConstraints(), sys.NumInputs(), sys.NumAux()
	cols, err := readColumns(ctx, sys, MatrixC, nil, "")
	require.NoError(t, err)
	pts := distinctPoints(m + nAux)
	mr, l := pts[:m], pts[m:]
	want := make([]curve.G1Jac, nIn+nAux)
	for v := range want {
		want[v].FromAffine(&curve.G1Affine{}) // the identity
		if v >= nIn {
			want[v].FromAffine(&l[v-nIn])
		}
	}
	var b big.Int
	pow2 := 0
	err = sys.Terms(MatrixC, func(row int, v r1cs.Variable, c *fr.Element) error {
		k := v.Index()
		if !v.IsInput() {
			k += nIn
		}
		var q curve.G1Affine
		q.ScalarMultiplication(&mr[row], c.BigInt(&b))
		q.Neg(&q)
		want[k].AddMixed(&q)
		if code, ok := smallCode(c, new(fr.Element)); !ok {
			if b.TrailingZeroBits() == uint(b.BitLen()-1) {
				pow2++
			}
		} else if code > 2 && code&(code-1) == 0 {
			pow2++
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, pow2, 1000, "the compression has MultiEq rows")

	var stages []int64
	lInput, lOut, err := foldC(ctx, cols, mr, l, nil, m, nIn, 0, func(stage string, done, total int64) {
		require.Equal(t, "convert h: fold", stage)
		stages = append(stages, total)
	})
	require.NoError(t, err)
	wantAff := curve.BatchJacobianToAffineG1(want)
	require.Equal(t, wantAff[:nIn], lInput)
	require.Equal(t, wantAff[nIn:], lOut)
	require.Greater(t, stages[0], int64(nIn+nAux), "progress counts the products too")

	// into l itself: the same points, in l's array
	lc := slices.Clone(l)
	lInput, lOut, err = foldC(ctx, cols, mr, lc, lc, m, nIn, 0, nil)
	require.NoError(t, err)
	require.Equal(t, wantAff[:nIn], lInput)
	require.Equal(t, wantAff[nIn:], lc, "L' written over L")
	require.Same(t, &lc[0], &lOut[0], "the result is l's array")
}

// BenchmarkFoldC folds the C matrix of SHA-256 compressions (the
// conversion's "convert h: fold" stage) into L with distinct points for M
// and L: go test -run XXX -bench FoldC -benchtime 1x ./pkg/groth16/
func BenchmarkFoldC(b *testing.B) {
	ctx := context.Background()
	for _, blocks := range []int{16} {
		sys := shaSystem(b, blocks)
		m, nIn, nAux := sys.NumConstraints(), sys.NumInputs(), sys.NumAux()
		cols, err := readColumns(ctx, sys, MatrixC, nil, "")
		require.NoError(b, err)
		mr := distinctPoints(max(m, nAux))
		b.Run(fmt.Sprintf("sha256-blocks=%d", blocks), func(b *testing.B) {
			for range b.N {
				if _, _, err := foldC(ctx, cols, mr[:m], mr[:nAux], nil, m, nIn, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(cols.rows)), "ns/term")
			b.ReportMetric(float64(len(cols.rows)), "terms")
		})
	}
}
