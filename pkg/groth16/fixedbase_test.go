package groth16

import (
	"context"
	"math/big"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// The comb must agree with gnark-crypto's scalar multiplication on edge
// scalars (0, 1, r−1, window boundaries) and random ones, for several
// window widths.
func TestFixedBaseMatchesScalarMultiplication(t *testing.T) {
	_, _, g1, g2 := curve.Generators()
	var sc []fr.Element
	var e fr.Element
	sc = append(sc, fr.Element{}, fr.One())
	e.SetInt64(-1)
	sc = append(sc, e)
	for _, v := range []int64{2, 7, 8, 9, 127, 128, 129, 255, 256, 1 << 15, 1<<16 - 1, -2, -128} {
		e.SetInt64(v)
		sc = append(sc, e)
	}
	for i := 0; i < 40; i++ {
		_, err := e.SetRandom()
		require.NoError(t, err)
		sc = append(sc, e)
	}
	for _, n := range []int{1, 1 << 10, 1 << 16, 1 << 22} {
		fb1, err := newG1FixedBase(context.Background(), &g1, n, 2)
		require.NoError(t, err)
		require.Equal(t, fixedBaseWindow(n), fb1.c)
		out1 := make([]curve.G1Affine, len(sc))
		require.NoError(t, fb1.mul(context.Background(), sc, out1, 2, nil))
		for i := range sc {
			var b big.Int
			sc[i].BigInt(&b)
			var w1 curve.G1Affine
			w1.ScalarMultiplication(&g1, &b)
			require.Equal(t, w1, out1[i], "G1 c=%d scalar %d", fb1.c, i)
		}
		if n > 1<<16 {
			continue // the G2 table of the widest window is slow to build here
		}
		fb2, err := newG2FixedBase(context.Background(), &g2, n, 2)
		require.NoError(t, err)
		out2 := make([]curve.G2Affine, len(sc))
		require.NoError(t, fb2.mul(context.Background(), sc, out2, 2, nil))
		for i := range sc {
			var b big.Int
			sc[i].BigInt(&b)
			var w2 curve.G2Affine
			w2.ScalarMultiplication(&g2, &b)
			require.Equal(t, w2, out2[i], "G2 c=%d scalar %d", fb2.c, i)
		}
	}
}

// BenchmarkFixedBaseCPU times the CPU comb per point on one core, with the
// window Setup uses for large circuits (16 bits); on the GPU, c2g-bench
// -fixed-base measures the same (docs/perf/README.md).
func BenchmarkFixedBaseCPU(b *testing.B) {
	_, _, g1, g2 := curve.Generators()
	const n = 1 << 14
	sc := make([]fr.Element, n)
	for i := range sc {
		_, _ = sc[i].SetRandom()
	}
	total := 1 << 30 // a large circuit's total: the 16-bit window
	b.Run("g1", func(b *testing.B) {
		fb, err := newG1FixedBase(context.Background(), &g1, total, 0)
		require.NoError(b, err)
		require.Equal(b, 16, fb.c)
		out := make([]curve.G1Affine, n)
		b.ResetTimer()
		for range b.N {
			require.NoError(b, fb.mul(context.Background(), sc, out, 1, nil))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
	})
	b.Run("g2", func(b *testing.B) {
		fb, err := newG2FixedBase(context.Background(), &g2, total, 0)
		require.NoError(b, err)
		out := make([]curve.G2Affine, n)
		b.ResetTimer()
		for range b.N {
			require.NoError(b, fb.mul(context.Background(), sc, out, 1, nil))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
	})
}
