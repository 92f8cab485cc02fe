//go:build cgo

package cuda

import (
	"fmt"
	"slices"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// TestMSMOneBucketPatterns puts every point in one bucket (the same scalar
// everywhere) in orders that make the bucket's consecutive points equal
// (P+P), opposite (P+(−P)) or at infinity, also after a pairwise halving
// (P, Q, −P, −Q gives P+Q and −(P+Q)): the special cases of any
// accumulation that adds a bucket's points in pairs (a batch-affine one was
// tried: docs/cuda.md), and a long single-bucket chain for the XYZZ one.
func TestMSMOneBucketPatterns(t *testing.T) {
	oneBucketPatterns(t, []int{3, 64, 777})
}

func oneBucketPatterns(t *testing.T, sizes []int) {
	lib, dev := gpu(t)
	var rv fr.Element
	rv.SetRandom()
	three := fr.NewElement(3)
	patterns := map[string]func(i int) int{ // index into {P_k} (k >= 0), ^k = −P_k, -1 = infinity
		"same":        func(i int) int { return 0 },
		"alternating": func(i int) int { return []int{0, ^0}[i%2] },
		"pq-pq":       func(i int) int { return []int{0, 1, ^0, ^1}[i%4] },
		"pqpq":        func(i int) int { return []int{0, 1}[i%2] },
		"mixed":       func(i int) int { return []int{0, 0, 1, ^1, -1, 2, -1, -1, 3, 4, ^3, ^4, 5, 5, 5, 5}[i%16] },
	}
	for _, n := range sizes {
		p1, p2 := randomPointsG1(6), randomPointsG2(6)
		for name, pat := range patterns {
			pts1 := make([]curve.G1Affine, n)
			pts2 := make([]curve.G2Affine, n)
			for i := range pts1 {
				switch k := pat(i); {
				case k == -1:
				case k >= 0:
					pts1[i], pts2[i] = p1[k], p2[k]
				default:
					pts1[i].Neg(&p1[^k])
					pts2[i].Neg(&p2[^k])
				}
			}
			for _, v := range []fr.Element{three, rv} {
				sc := make([]fr.Element, n)
				for i := range sc {
					sc[i] = v
				}
				t.Run(fmt.Sprintf("%s/%d/%s", name, n, v.String()[:min(8, len(v.String()))]), func(t *testing.T) {
					// every scalar is v: the oracle is v · Σ P_i
					var s1 curve.G1Jac
					var s2 curve.G2Jac
					for i := range pts1 {
						s1.AddMixed(&pts1[i])
						s2.AddMixed(&pts2[i])
					}
					var a1 curve.G1Affine
					var a2 curve.G2Affine
					a1.FromJacobian(&s1)
					a2.FromJacobian(&s2)
					got1, _ := gpuMSMG1(t, lib, dev, pts1, sc)
					want1 := naiveG1([]curve.G1Affine{a1}, sc[:1])
					require.True(t, got1.Equal(&want1), "g1")
					got2, _ := gpuMSMG2(t, lib, dev, pts2, sc)
					want2 := naiveG2([]curve.G2Affine{a2}, sc[:1])
					require.True(t, got2.Equal(&want2), "g2")
				})
			}
		}
	}
}

// TestMSMBatchAffine runs the MSM tests again with every tail accumulated
// batch-affine (C2G_MSM_AFFINE=on; by default only tails of 3·2^25 points
// and more are): chunks cut at bucket boundaries, the lanes' shared inversions,
// and the special cases the affine formulas need (a base at infinity, an
// accumulator at infinity, P + P, P + (−P)) against gnark-crypto.
func TestMSMBatchAffine(t *testing.T) {
	lib, dev := gpu(t)
	pts, sc := randomPointsG1(300), randomScalars(300)
	for mode, want := range map[string]bool{"on": true, "off": false, "": false} {
		t.Setenv("C2G_MSM_AFFINE", mode)
		_, st := gpuMSMG1(t, lib, dev, pts, sc)
		require.Equal(t, want, st.BatchAffine, "C2G_MSM_AFFINE=%q: stats %+v", mode, st)
	}
	t.Setenv("C2G_MSM_AFFINE", "on")
	t.Run("random", TestMSMRandom)
	t.Run("edge", TestMSMEdgeCases)
	// 200 points still make several chunks per bucket; the emulator
	// takes ~4x longer per point batch-affine (its 4-bit windows)
	t.Run("one-bucket", func(t *testing.T) { oneBucketPatterns(t, sized([]int{3, 64, 777}, []int{3, 64, 200})) })
}

// TestMSMReductionGroups runs the bucket reduction in groups of windows of
// every size — one window at a time, groups that do not divide the window
// count (a short last group, both halves of the bucket pool alternating),
// all windows in one group — through C2G_MSM_RED_GROUP, in G1 and G2, and
// on the GPU also in the groups the pool's size makes for wide windows
// (C2G_MSM_WINDOW_BITS 20 in G1, 18 in G2), each against gnark-crypto.
func TestMSMReductionGroups(t *testing.T) {
	lib, dev := gpu(t)
	pts1, pts2 := randomPointsG1(sized(3000, 300)), randomPointsG2(sized(1000, 100))
	sc := randomScalars(len(pts1))
	want1 := naiveG1(pts1, sc)
	want2 := naiveG2(pts2, sc[:len(pts2)])
	t.Setenv("C2G_MSM_WINDOW_BITS", "8") // 32 windows
	for _, g := range []string{"1", "3", "7", "64"} {
		t.Setenv("C2G_MSM_RED_GROUP", g)
		got1, st := gpuMSMG1(t, lib, dev, pts1, sc)
		require.Equal(t, 8, st.WindowBits)
		require.True(t, got1.Equal(&want1), "g1, %s windows per group", g)
		got2, _ := gpuMSMG2(t, lib, dev, pts2, sc[:len(pts2)])
		require.True(t, got2.Equal(&want2), "g2, %s windows per group", g)
	}
	if testLibEmu {
		t.Log("the pool-sized groups of 2^17+ buckets per window run on a GPU only (too slow for the CPU emulator)")
		return
	}
	t.Setenv("C2G_MSM_RED_GROUP", "")
	t.Setenv("C2G_MSM_WINDOW_BITS", "20")
	got1, _ := gpuMSMG1(t, lib, dev, pts1, sc)
	require.True(t, got1.Equal(&want1), "g1 at c = 20 (groups of 2 windows)")
	t.Setenv("C2G_MSM_WINDOW_BITS", "18")
	got2, _ := gpuMSMG2(t, lib, dev, pts2, sc[:len(pts2)])
	require.True(t, got2.Equal(&want2), "g2 at c = 18 (groups of 5 windows)")
}

// TestMSMSplitBases runs G1 MSMs on split bases (C2G_MSM_SPLIT=on: the
// library makes the copy 2^(c·h)·P_i on the device, then each of h windows
// sorts digit w of every scalar on P_i and digit w + h on the copy) against
// gnark-crypto: window counts even and odd (c = 7: 37 windows, so the
// copy's last window lies past the scalars' top), XYZZ and batch-affine
// accumulation, every scalar in the tail and a tail that is a class list
// (a tenth 0, 1 or r − 1), and a tail under half the MSM, which runs the
// plain way.
func TestMSMSplitBases(t *testing.T) {
	lib, dev := gpu(t)
	n := sized(2000, 240)
	pts := randomPointsG1(n)
	scs := map[string][]fr.Element{"random": randomScalars(n)}
	var one, minusOne fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	mixed := slices.Clone(scs["random"])
	for i := 0; i < n; i += 10 {
		mixed[i] = []fr.Element{{}, one, minusOne}[(i/10)%3]
	}
	scs["classes"] = mixed
	sparse := slices.Clone(scs["random"])
	for i := range sparse {
		if i%4 != 0 {
			sparse[i] = fr.Element{}
		}
	}
	t.Setenv("C2G_MSM_SPLIT", "on")
	for _, c := range []int{5, 7, 8, 13} {
		for _, aff := range []string{"off", "on"} {
			t.Setenv("C2G_MSM_WINDOW_BITS", fmt.Sprint(c))
			t.Setenv("C2G_MSM_AFFINE", aff)
			for name, sc := range scs {
				t.Run(fmt.Sprintf("c%d/affine-%s/%s", c, aff, name), func(t *testing.T) {
					got, st := gpuMSMG1(t, lib, dev, pts, sc)
					require.True(t, st.Split, "stats %+v", st)
					require.Equal(t, c, st.WindowBits)
					want := naiveG1(pts, sc)
					require.True(t, got.Equal(&want))
				})
			}
		}
	}
	t.Setenv("C2G_MSM_WINDOW_BITS", "8")
	t.Setenv("C2G_MSM_AFFINE", "")
	got, st := gpuMSMG1(t, lib, dev, pts, sparse)
	require.False(t, st.Split, "a quarter of the scalars in the tail: %+v", st)
	want := naiveG1(pts, sparse)
	require.True(t, got.Equal(&want), "sparse")
	// G2 has no split bases; unset (as auto) and off split no standalone MSM
	_, st = gpuMSMG2(t, lib, dev, randomPointsG2(16), scs["random"][:16])
	require.False(t, st.Split, "g2")
	for _, mode := range []string{"", "off"} {
		t.Setenv("C2G_MSM_SPLIT", mode)
		got, st = gpuMSMG1(t, lib, dev, pts, scs["random"])
		require.False(t, st.Split, "C2G_MSM_SPLIT=%q", mode)
		want = naiveG1(pts, scs["random"])
		require.True(t, got.Equal(&want), "C2G_MSM_SPLIT=%q", mode)
	}
}
