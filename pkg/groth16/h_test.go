package groth16

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/require"
)

// interpolate returns the coefficients of the polynomial of degree < n
// taking the values v on the domain's points ω^i, by the O(n²) inverse
// DFT (no FFT: the oracle shares no code with computeH).
func interpolate(d *fft.Domain, v []fr.Element) []fr.Element {
	n := len(v)
	var wInv fr.Element
	wInv.Inverse(&d.Generator)
	coef := make([]fr.Element, n)
	var step fr.Element // ω^-k
	step.SetOne()
	for k := range coef {
		var x, t fr.Element // x = ω^-ik
		x.SetOne()
		for i := range v {
			t.Mul(&v[i], &x)
			coef[k].Add(&coef[k], &t)
			x.Mul(&x, &step)
		}
		step.Mul(&step, &wInv)
	}
	var nInv fr.Element
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	for k := range coef {
		coef[k].Mul(&coef[k], &nInv)
	}
	return coef
}

// quotientByZ returns the quotient and remainder of p divided by xⁿ − 1.
func quotientByZ(p []fr.Element, n int) (q, rem []fr.Element) {
	rem = append([]fr.Element(nil), p...)
	q = make([]fr.Element, max(len(p)-n, 0))
	for k := len(rem) - 1; k >= n; k-- {
		q[k-n] = rem[k]
		rem[k-n].Add(&rem[k-n], &rem[k])
		rem[k].SetZero()
	}
	return q, rem[:n]
}

// TestComputeH: computeH's six-FFT h equals the quotient of A·B − C by
// xⁿ − 1 computed the long way (interpolation by the inverse DFT,
// schoolbook product, long division) for satisfied random witnesses, and a
// witness with one unsatisfied constraint is ErrUnsatisfied.
func TestComputeH(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 7))
	for _, n := range []int{2, 4, 16, 64} {
		d := fft.NewDomain(uint64(n))
		witness := func() [3][]fr.Element {
			var abc [3][]fr.Element
			for k := range abc {
				abc[k] = make([]fr.Element, n)
			}
			for i := 0; i < n; i++ {
				abc[0][i].SetUint64(r.Uint64())
				abc[1][i].SetUint64(r.Uint64())
				abc[0][i].Square(&abc[0][i]).Square(&abc[0][i])
				abc[2][i].Mul(&abc[0][i], &abc[1][i])
			}
			return abc
		}
		abc := witness()
		A, B, C := interpolate(d, abc[0]), interpolate(d, abc[1]), interpolate(d, abc[2])
		prod := make([]fr.Element, 2*n-1)
		for i := range A {
			for j := range B {
				var t fr.Element
				t.Mul(&A[i], &B[j])
				prod[i+j].Add(&prod[i+j], &t)
			}
		}
		for i := range C {
			prod[i].Sub(&prod[i], &C[i])
		}
		want, rem := quotientByZ(prod, n)
		for i := range rem {
			require.True(t, rem[i].IsZero(), "n=%d: the oracle's remainder is not zero", n)
		}
		for _, nw := range []int{1, 3} {
			in := [3][]fr.Element{}
			for k := range in {
				in[k] = append([]fr.Element(nil), abc[k]...)
			}
			h, err := computeH(context.Background(), d, &in, nw)
			require.NoError(t, err)
			require.Equal(t, want, h, "n=%d, %d tasks", n, nw)
		}

		bad := witness()
		j := r.IntN(n)
		var one fr.Element
		one.SetOne()
		bad[2][j].Add(&bad[2][j], &one)
		_, err := computeH(context.Background(), d, &bad, 2)
		require.ErrorIs(t, err, ErrUnsatisfied, "n=%d, constraint %d broken", n, j)
	}
}
