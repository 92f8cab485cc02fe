//go:build cgo

package cuda

import (
	"fmt"
	"slices"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

// offSubgroupG1 returns k distinct points on the curve outside G1.
func offSubgroupG1(t *testing.T, k int) []curve.G1Affine {
	out := make([]curve.G1Affine, k)
	for i := range out {
		out[i] = groth16test.NotInSubgroupG1(t, uint64(1000+i))
	}
	return out
}

func offSubgroupG2(t *testing.T, k int) []curve.G2Affine {
	out := make([]curve.G2Affine, k)
	for i := range out {
		out[i] = groth16test.NotInSubgroupG2(t, uint64(2000+i))
	}
	return out
}

// tile repeats the distinct points up to n (a large set without a large
// CPU setup: the device tests each copy on its own).
func tile[P any](distinct []P, n int) []P {
	out := make([]P, n)
	for i := range out {
		out[i] = distinct[i%len(distinct)]
	}
	return out
}

// TestSubgroupCheck compares the device's subgroup test with gnark-crypto's
// IsInSubGroup: random subgroup points and infinity pass; points on the curve
// outside the subgroup, put at the first, last and (on a GPU) the first
// index of the second device chunk, and in pairs, are found as the first
// such index. On the GPU the sets cross the 2^21-point chunk of
// c2g_subgroup_check.
func TestSubgroupCheck(t *testing.T) {
	lib, dev := gpu(t)
	n, distinct := 2<<21+1000, 512
	if testLibEmu {
		n, distinct = 96, 32 // ~3 ms per point on the emulator
	}
	positions := [][]int{{0}, {n - 1}, {n / 2, n/2 + 3}, {n/2 + 3, n - 2}}
	if !testLibEmu {
		positions = append(positions, []int{1 << 21}, []int{1<<21 - 1, 1 << 21})
	}
	t.Run("g1", func(t *testing.T) {
		pts := tile(randomPointsG1(distinct), n)
		pts[5].X.SetZero() // infinity, gnark's (0, 0)
		pts[5].Y.SetZero()
		firstBadAt(t, pts, offSubgroupG1(t, 2), positions, func(p []curve.G1Affine) (int, error) {
			return lib.FirstNotInSubgroupG1(dev, p)
		})
	})
	t.Run("g2", func(t *testing.T) {
		pts := tile(randomPointsG2(distinct), n)
		pts[7].X.SetZero()
		pts[7].Y.SetZero()
		firstBadAt(t, pts, offSubgroupG2(t, 2), positions, func(p []curve.G2Affine) (int, error) {
			return lib.FirstNotInSubgroupG2(dev, p)
		})
	})
	t.Run("empty and bad arguments", func(t *testing.T) {
		first, err := lib.FirstNotInSubgroupG1(dev, nil)
		require.NoError(t, err)
		require.Equal(t, -1, first)
		_, err = lib.FirstNotInSubgroupG1(99, randomPointsG1(1))
		require.ErrorIs(t, err, ErrNoDevice)
	})
}

// firstBadAt checks that first finds no bad point in pts (all in the
// subgroup), then, for each list of positions, that it returns the first
// of them once they hold points of bad.
func firstBadAt[P any](t *testing.T, pts, bad []P, positions [][]int, first func([]P) (int, error)) {
	t.Helper()
	got, err := first(pts)
	require.NoError(t, err)
	require.Equal(t, -1, got, "every point is in the subgroup")
	for _, pos := range positions {
		t.Run(fmt.Sprint(pos), func(t *testing.T) {
			p := slices.Clone(pts)
			for k, i := range pos {
				p[i] = bad[k%len(bad)]
			}
			got, err := first(p)
			require.NoError(t, err)
			require.Equal(t, pos[0], got)
		})
	}
}
