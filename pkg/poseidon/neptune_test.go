package poseidon

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// permuteOptimized runs the permutation as Optimized documents it.
func permuteOptimized(o *Optimized, inputs []fr.Element) fr.Element {
	t := o.Width
	x := make([]fr.Element, t)
	x[0] = o.Tag
	copy(x[1:], inputs)
	keys := o.RoundKeys
	take := func(n int) []fr.Element { k := keys[:n]; keys = keys[n:]; return k }
	mul := func(m []fr.Element) {
		y := make([]fr.Element, t)
		var p fr.Element
		for i := range t {
			for j := range t {
				p.Mul(&m[i*t+j], &x[j])
				y[i].Add(&y[i], &p)
			}
		}
		x = y
	}
	half := o.FullRounds / 2
	for i, k := range take(t) {
		x[i].Add(&x[i], &k)
	}
	for r := range half {
		for i, k := range take(t) {
			sbox(&x[i])
			x[i].Add(&x[i], &k)
		}
		if r == half-1 {
			mul(o.PreSparse)
		} else {
			mul(o.MDS)
		}
	}
	for j := range o.PartialRounds {
		sbox(&x[0])
		x[0].Add(&x[0], &take(1)[0])
		s := &o.Sparse[j]
		var y0, p fr.Element
		for i := range t {
			p.Mul(&s.W[i], &x[i])
			y0.Add(&y0, &p)
		}
		for i := 1; i < t; i++ {
			p.Mul(&s.V[i-1], &x[0])
			x[i].Add(&x[i], &p)
		}
		x[0] = y0
	}
	for r := range half {
		if r < half-1 {
			for i, k := range take(t) {
				sbox(&x[i])
				x[i].Add(&x[i], &k)
			}
		} else {
			for i := range x {
				sbox(&x[i])
			}
		}
		mul(o.MDS)
	}
	if len(keys) != 0 {
		panic("round keys left over")
	}
	return x[1]
}

// TestOptimizedConstants: the circuit layout of the constants computes the
// same hash.
func TestOptimizedConstants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for arity := 1; arity <= MaxArity; arity++ {
		o, err := OptimizedConstants(arity)
		require.NoError(t, err)
		half := o.FullRounds / 2
		require.Len(t, o.RoundKeys, 2*o.Width+(2*half-2)*o.Width+o.PartialRounds)
		in := randomElements(rng, arity)
		got, want := permuteOptimized(o, in), Hash(in)
		require.Truef(t, got.Equal(&want), "arity %d", arity)
	}
	_, err := OptimizedConstants(0)
	require.ErrorIs(t, err, ErrArity)
}
