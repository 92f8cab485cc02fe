//go:build cgo && !c2nocuda

package backend

import (
	"math/big"
	"os"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/cuda/cudatest"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cudatest.Cleanup()
	os.Exit(code)
}

// The cuda factory's subgroup checker (what a worker uses at start) runs on
// the library (a GPU, or the CPU emulator built from the sources) and agrees
// with gnark-crypto: a point on the curve outside G1 is found at its index;
// the CPU factory has none (its decoder checks).
func TestCUDASubgroupChecker(t *testing.T) {
	lib := cudatest.Library(t)
	cpu, _ := Lookup(NameCPU)
	require.Nil(t, cpu.SubgroupChecker)
	f, _ := Lookup(NameCUDA)
	require.NotNil(t, f.SubgroupChecker)
	c, err := f.SubgroupChecker(Options{CUDALibrary: lib})
	require.NoError(t, err)

	pts := make([]curve.G1Affine, 6)
	for i := range pts {
		pts[i].ScalarMultiplicationBase(new(big.Int).SetInt64(int64(3*i + 1)))
	}
	first, err := c.FirstNotInSubgroupG1(pts)
	require.NoError(t, err)
	require.Equal(t, -1, first)
	pts[4] = groth16test.NotInSubgroupG1(t, 9)
	first, err = c.FirstNotInSubgroupG1(pts)
	require.NoError(t, err)
	require.Equal(t, 4, first)

	_, err = f.SubgroupChecker(Options{CUDALibrary: lib, Device: 99})
	require.Error(t, err)
}
