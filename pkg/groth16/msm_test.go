package groth16

import (
	"context"
	"math/big"
	"math/rand/v2"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// witnessScalars draws n scalars with a PoRep witness's classes (0, 1,
// r − 1, random) in the given shares.
func witnessScalars(r *rand.Rand, n int, pZero, pOne, pMinusOne float64) []fr.Element {
	sc := make([]fr.Element, n)
	for i := range sc {
		switch u := r.Float64(); {
		case u < pZero:
		case u < pZero+pOne:
			sc[i].SetOne()
		case u < pZero+pOne+pMinusOne:
			sc[i].SetOne()
			sc[i].Neg(&sc[i])
		default:
			sc[i].SetUint64(r.Uint64())
			sc[i].Mul(&sc[i], &sc[i]).Mul(&sc[i], &sc[i]) // a full-size value
		}
	}
	return sc
}

// TestMSMWitness: the class-split MSM (sums of the points of scalars 1 and
// r − 1, MultiExp over the rest) equals gnark-crypto's MultiExp over all
// the scalars, in G1 and G2, for mixes of classes and for the edge cases of
// its sums: a point added to itself (doubling inside AddMixed), a point
// and its negation in one sum (infinity), the point at infinity as a base,
// no points, only ones, only r − 1, only other values. A cancelled context
// is its error.
func TestMSMWitness(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 11))
	g1, g2, _, _ := curve.Generators()
	const n = 3000
	// distinct points k·G, then duplicates, a negation and infinity
	j1, j2 := make([]curve.G1Jac, n), make([]curve.G2Jac, n)
	step1, step2 := g1, g2
	var k fr.Element
	k.SetUint64(r.Uint64())
	step1.ScalarMultiplication(&g1, k.BigInt(new(big.Int)))
	step2.ScalarMultiplication(&g2, k.BigInt(new(big.Int)))
	j1[0], j2[0] = step1, step2
	for i := 1; i < n; i++ {
		j1[i].Set(&j1[i-1]).AddAssign(&step1)
		j2[i].Set(&j2[i-1]).AddAssign(&step2)
	}
	p1, p2 := curve.BatchJacobianToAffineG1(j1), make([]curve.G2Affine, n)
	for i := range p2 {
		p2[i].FromJacobian(&j2[i])
	}
	for i := 10; i < 20; i++ { // repeats of point 0..9
		p1[i], p2[i] = p1[i-10], p2[i-10]
	}
	p1[20].Neg(&p1[21]) // 20 = −21
	p2[20].Neg(&p2[21])
	p1[30], p2[30] = curve.G1Affine{}, curve.G2Affine{} // infinity

	check := func(t *testing.T, sc []fr.Element) {
		t.Helper()
		var want1, got1 curve.G1Jac
		require.NoError(t, multiExp(ctx, &want1, p1[:len(sc)], sc, 2))
		require.NoError(t, msmWitness(ctx, &got1, p1[:len(sc)], sc, 3))
		require.True(t, got1.Equal(&want1), "G1")
		var want2, got2 curve.G2Jac
		require.NoError(t, multiExp(ctx, &want2, p2[:len(sc)], sc, 2))
		require.NoError(t, msmWitness(ctx, &got2, p2[:len(sc)], sc, 3))
		require.True(t, got2.Equal(&want2), "G2")
	}
	for _, c := range []struct {
		name                string
		zero, one, minusOne float64
	}{
		{"porep aux", 0.555, 0.297, 0.136},
		{"even", 0.25, 0.25, 0.25},
		{"only ones", 0, 1, 0},
		{"only r − 1", 0, 0, 1},
		{"only other", 0, 0, 0},
		{"ones and r − 1", 0, 0.5, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) { check(t, witnessScalars(r, n, c.zero, c.one, c.minusOne)) })
	}
	t.Run("edge points", func(t *testing.T) {
		sc := witnessScalars(r, 40, 0, 0.5, 0.5)
		sc[20].SetOne() // P − P in the ones' sum
		sc[21].SetOne()
		check(t, sc)
	})
	t.Run("empty", func(t *testing.T) { check(t, nil) })
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		var got curve.G1Jac
		require.ErrorIs(t, msmWitness(cctx, &got, p1, witnessScalars(r, n, 0.5, 0.2, 0.2), 2), context.Canceled)
	})
	t.Run("shape", func(t *testing.T) {
		var got curve.G1Jac
		require.ErrorIs(t, msmWitness(ctx, &got, p1[:3], make([]fr.Element, 2), 2), ErrShape)
	})
}
