//go:build cgo

package cuda

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

// TestFixedBase compares the device's fixed-base multiplications with
// gnark-crypto's (k·G for every scalar) for fresh random scalars mixed with
// 0, 1, 2, r−1 and (r−1)/2, at sizes around the per-thread batch, with
// windows of 4 and 7 bits (a digit carry reaching the last window).
func TestFixedBase(t *testing.T) {
	lib, dev := gpu(t)
	_, _, g1, g2 := curve.Generators()
	rng := rand.New(rand.NewPCG(5, 6))
	scalars := func(n int) []fr.Element {
		var one, m1, half fr.Element
		one.SetOne()
		m1.Neg(&one)
		half.SetBigInt(new(big.Int).Rsh(fr.Modulus(), 1))
		sc := randomScalars(n)
		for i := range sc {
			switch rng.IntN(8) {
			case 0:
				sc[i].SetZero()
			case 1:
				sc[i] = one
			case 2:
				sc[i].SetUint64(2)
			case 3:
				sc[i] = m1
			case 4:
				sc[i] = half
			}
		}
		return sc
	}
	for _, c := range []int{4, 7} {
		t1, windows, err := groth16.FixedBaseTableG1(context.Background(), &g1, c)
		require.NoError(t, err)
		t2, _, err := groth16.FixedBaseTableG2(context.Background(), &g2, c)
		require.NoError(t, err)
		for _, n := range sized([]int{1, 15, 16, 17, 1000, 1 << 14}, []int{1, 17, 100}) {
			t.Run(fmt.Sprintf("c=%d/n=%d", c, n), func(t *testing.T) {
				sc := scalars(n)
				got1 := make([]curve.G1Affine, n)
				require.NoError(t, lib.FixedBaseG1(dev, t1, c, windows, sc, got1))
				want1 := curve.BatchScalarMultiplicationG1(&g1, sc)
				got2 := make([]curve.G2Affine, n)
				require.NoError(t, lib.FixedBaseG2(dev, t2, c, windows, sc, got2))
				want2 := curve.BatchScalarMultiplicationG2(&g2, sc)
				for i := range sc {
					require.True(t, got1[i].Equal(&want1[i]), "G1 point %d (scalar %s)", i, sc[i].String())
					require.True(t, got2[i].Equal(&want2[i]), "G2 point %d (scalar %s)", i, sc[i].String())
				}
			})
		}
	}
	t.Run("bad arguments", func(t *testing.T) {
		sc := scalars(4)
		out := make([]curve.G1Affine, 4)
		tab, _, err := groth16.FixedBaseTableG1(context.Background(), &g1, 4) // 65 windows
		require.NoError(t, err)
		require.ErrorIs(t, lib.FixedBaseG1(dev, tab, 4, 64, sc, out), ErrInvalid) // 64·4 bits, table of 65 windows
		require.ErrorIs(t, lib.FixedBaseG1(dev, tab[:10], 4, 65, sc, out), ErrInvalid)
		require.ErrorIs(t, lib.FixedBaseG1(dev, tab, 4, 65, sc, out[:3]), ErrInvalid)
		require.ErrorIs(t, lib.FixedBaseG1(dev, tab, 1, 65, sc, out), ErrInvalid)
	})
}

// TestSetupFixedBaseMatchesCPU runs groth16.SetupR1CS with the same seed on the
// CPU and with the device's fixed-base multiplications: every point of the
// two proving keys must be equal.
func TestSetupFixedBaseMatchesCPU(t *testing.T) {
	lib, dev := gpu(t)
	sys := groth16test.ChainSystem(sized(3000, 300), 1, 2, 3)
	seed := []byte("fixed-base")
	cpu, cpuD, err := groth16.SetupR1CS(context.Background(), sys, groth16.SetupSeed(seed))
	require.NoError(t, err)
	gpuKey, gpuD, err := groth16.SetupR1CS(context.Background(), sys, groth16.SetupSeed(seed),
		groth16.SetupFixedBase(fixedBase{lib: lib, dev: dev}))
	require.NoError(t, err)
	require.True(t, cpuD.Equal(gpuD))
	require.Equal(t, cpu.VK, gpuKey.VK)
	require.Equal(t, cpu.H, gpuKey.H)
	require.Equal(t, cpu.L, gpuKey.L)
	require.Equal(t, cpu.A, gpuKey.A)
	require.Equal(t, cpu.BG1, gpuKey.BG1)
	require.Equal(t, cpu.BG2, gpuKey.BG2)
}
