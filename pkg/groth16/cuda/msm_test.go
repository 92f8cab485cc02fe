//go:build cgo

package cuda

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// randomPointsG1 draws n points k_i*G with fresh random k_i on the CPU.
func randomPointsG1(n int) []curve.G1Affine {
	ks := make([]fr.Element, n)
	for i := range ks {
		ks[i].SetRandom()
	}
	_, _, g, _ := curve.Generators()
	return curve.BatchScalarMultiplicationG1(&g, ks)
}

func randomPointsG2(n int) []curve.G2Affine {
	ks := make([]fr.Element, n)
	for i := range ks {
		ks[i].SetRandom()
	}
	_, _, _, g := curve.Generators()
	return curve.BatchScalarMultiplicationG2(&g, ks)
}

func randomScalars(n int) []fr.Element {
	s := make([]fr.Element, n)
	for i := range s {
		s[i].SetRandom()
	}
	return s
}

// naive sums k_i*P_i one scalar multiplication at a time (the oracle for
// inputs with points at infinity).
func naiveG1(pts []curve.G1Affine, sc []fr.Element) curve.G1Jac {
	var acc curve.G1Jac
	for i := range pts {
		var k big.Int
		sc[i].BigInt(&k)
		var p curve.G1Jac
		p.FromAffine(&pts[i])
		p.ScalarMultiplication(&p, &k)
		acc.AddAssign(&p)
	}
	return acc
}

func naiveG2(pts []curve.G2Affine, sc []fr.Element) curve.G2Jac {
	var acc curve.G2Jac
	for i := range pts {
		var k big.Int
		sc[i].BigInt(&k)
		var p curve.G2Jac
		p.FromAffine(&pts[i])
		p.ScalarMultiplication(&p, &k)
		acc.AddAssign(&p)
	}
	return acc
}

func gpuMSMG1(t *testing.T, lib *Library, dev int, pts []curve.G1Affine, sc []fr.Element) (curve.G1Jac, MSMStats) {
	t.Helper()
	bb, err := lib.Alloc(dev, int64(max(len(pts), 1))*g1Size)
	require.NoError(t, err)
	defer bb.Free()
	sb, err := lib.Alloc(dev, int64(max(len(sc), 1))*frSize)
	require.NoError(t, err)
	defer sb.Free()
	require.NoError(t, bb.WriteG1(pts))
	require.NoError(t, sb.WriteFr(sc))
	before := append([]fr.Element(nil), sc...)
	res, st, err := lib.MSMG1(bb, sb, len(pts))
	require.NoError(t, err)
	after, err := sb.ReadFr(len(sc))
	require.NoError(t, err)
	require.True(t, slices.Equal(before, after), "the MSM must leave its scalars unchanged")
	return res, st
}

func gpuMSMG2(t *testing.T, lib *Library, dev int, pts []curve.G2Affine, sc []fr.Element) (curve.G2Jac, MSMStats) {
	t.Helper()
	bb, err := lib.Alloc(dev, int64(max(len(pts), 1))*g2Size)
	require.NoError(t, err)
	defer bb.Free()
	sb, err := lib.Alloc(dev, int64(max(len(sc), 1))*frSize)
	require.NoError(t, err)
	defer sb.Free()
	require.NoError(t, bb.WriteG2(pts))
	require.NoError(t, sb.WriteFr(sc))
	res, st, err := lib.MSMG2(bb, sb, len(pts))
	require.NoError(t, err)
	return res, st
}

// TestMSMRandom compares G1 and G2 MSMs of fresh random points and scalars
// with gnark-crypto's MultiExp at several sizes, powers of two or not.
func TestMSMRandom(t *testing.T) {
	lib, dev := gpu(t)
	cfg := ecc.MultiExpConfig{}
	for _, n := range sized([]int{1, 2, 3, 31, 100, 1023, 4097, 1<<13 + 5, 1<<16 + 3}, []int{1, 2, 3, 31, 100, 1023, 4097}) {
		t.Run(fmt.Sprintf("g1/%d", n), func(t *testing.T) {
			pts, sc := randomPointsG1(n), randomScalars(n)
			got, st := gpuMSMG1(t, lib, dev, pts, sc)
			var want curve.G1Jac
			_, err := want.MultiExp(pts, sc, cfg)
			require.NoError(t, err)
			require.True(t, got.Equal(&want), "n=%d stats=%+v", n, st)
			require.Equal(t, int64(n), st.Zero+st.One+st.MinusOne+st.Other)
		})
	}
	for _, n := range sized([]int{1, 5, 257, 3001, 1<<14 + 1}, []int{1, 5, 1001}) {
		t.Run(fmt.Sprintf("g2/%d", n), func(t *testing.T) {
			pts, sc := randomPointsG2(n), randomScalars(n)
			got, st := gpuMSMG2(t, lib, dev, pts, sc)
			var want curve.G2Jac
			_, err := want.MultiExp(pts, sc, cfg)
			require.NoError(t, err)
			require.True(t, got.Equal(&want), "n=%d stats=%+v", n, st)
		})
	}
}

// edgeScalars mixes 0, 1, r−1, 2, small values, values near window edges
// and random values.
func edgeScalars(rng *rand.Rand, n int) []fr.Element {
	var one, m1 fr.Element
	one.SetOne()
	m1.Neg(&one)
	sc := make([]fr.Element, n)
	for i := range sc {
		switch rng.IntN(8) {
		case 0:
			// zero
		case 1:
			sc[i] = one
		case 2:
			sc[i] = m1
		case 3:
			sc[i].SetUint64(2)
		case 4:
			sc[i].SetUint64(uint64(rng.IntN(1 << 20)))
		case 5:
			sc[i].SetUint64(1 << (rng.IntN(63)))
		default:
			sc[i].SetRandom()
		}
	}
	return sc
}

// TestMSMEdgeCases covers scalars 0, 1, r−1 and repeated values, bases at
// infinity, repeated bases and P next to −P, against a naive sum.
func TestMSMEdgeCases(t *testing.T) {
	lib, dev := gpu(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var one, m1 fr.Element
	one.SetOne()
	m1.Neg(&one)
	fill := func(n int, v fr.Element) []fr.Element {
		s := make([]fr.Element, n)
		for i := range s {
			s[i] = v
		}
		return s
	}

	t.Run("g1", func(t *testing.T) {
		const n = 700
		base := randomPointsG1(n)
		// infinity, repeats, P and -P
		pts := append([]curve.G1Affine(nil), base...)
		for i := 0; i < n; i += 10 {
			pts[i] = curve.G1Affine{}
		}
		for i := 1; i < n; i += 10 {
			pts[i] = pts[3]
		}
		for i := 5; i+1 < n; i += 10 {
			pts[i+1].Neg(&pts[i])
		}
		three := fr.NewElement(3)
		cases := map[string][]fr.Element{
			"zeros":  fill(n, fr.Element{}),
			"ones":   fill(n, one),
			"r-1":    fill(n, m1),
			"threes": fill(n, three), // one bucket holding every point
			"mixed":  edgeScalars(rng, n),
		}
		for name, sc := range cases {
			got, st := gpuMSMG1(t, lib, dev, pts, sc)
			want := naiveG1(pts, sc)
			require.True(t, got.Equal(&want), "%s: stats %+v", name, st)
			var classes MSMStats // the classes the scalars fall in, counted here
			for i := range sc {
				switch {
				case sc[i].IsZero():
					classes.Zero++
				case sc[i].IsOne():
					classes.One++
				case sc[i].Equal(&m1):
					classes.MinusOne++
				default:
					classes.Other++
				}
			}
			require.Equal(t, classes, MSMStats{Zero: st.Zero, One: st.One, MinusOne: st.MinusOne, Other: st.Other}, name)
		}
		// the same value everywhere on distinct points: one bucket holding
		// every point, spread over many accumulation slices (3: in one
		// window; a random value: in every window)
		many := randomPointsG1(5000)
		var rv fr.Element
		rv.SetRandom()
		for name, v := range map[string]fr.Element{"three": three, "random": rv} {
			sc := fill(5000, v)
			got, _ := gpuMSMG1(t, lib, dev, many, sc)
			want := naiveG1(many, sc)
			require.True(t, got.Equal(&want), "skewed bucket, scalar %s", name)
		}
		// empty MSM
		got, _ := gpuMSMG1(t, lib, dev, nil, nil)
		require.True(t, got.Z.IsZero(), "empty MSM is infinity")
	})

	t.Run("g2", func(t *testing.T) {
		const n = 300
		pts := randomPointsG2(n)
		for i := 0; i < n; i += 10 {
			pts[i] = curve.G2Affine{}
		}
		for i := 1; i < n; i += 10 {
			pts[i] = pts[3]
		}
		for i := 5; i+1 < n; i += 10 {
			pts[i+1].Neg(&pts[i])
		}
		for name, sc := range map[string][]fr.Element{
			"zeros": fill(n, fr.Element{}), "ones": fill(n, one), "r-1": fill(n, m1), "mixed": edgeScalars(rng, n),
		} {
			got, _ := gpuMSMG2(t, lib, dev, pts, sc)
			want := naiveG2(pts, sc)
			require.True(t, got.Equal(&want), name)
		}
	})
}

// TestMSMDeviceData checks the device's random points (on the curve, in the
// subgroup, distinct) and a larger MSM over them with 85 % 0/1 scalars.
func TestMSMDeviceData(t *testing.T) {
	lib, dev := gpu(t)
	n := sized(1<<18+77, 1<<12+77)
	bb, err := lib.Alloc(dev, int64(n)*g1Size)
	require.NoError(t, err)
	defer bb.Free()
	sb, err := lib.Alloc(dev, int64(n)*frSize)
	require.NoError(t, err)
	defer sb.Free()
	require.NoError(t, bb.FillRandomG1(n, 42))
	require.NoError(t, sb.FillRandomFr(n, 43, 0.85))
	pts, err := bb.ReadG1(n)
	require.NoError(t, err)
	sc, err := sb.ReadFr(n)
	require.NoError(t, err)
	seen := make(map[curve.G1Affine]bool, 4096)
	for i := 0; i < n; i += 64 {
		require.True(t, pts[i].IsOnCurve(), "point %d off the curve", i)
		require.True(t, pts[i].IsInSubGroup(), "point %d outside G1", i)
		require.False(t, seen[pts[i]], "point %d repeated", i)
		seen[pts[i]] = true
	}
	got, st, err := lib.MSMG1(bb, sb, n)
	require.NoError(t, err)
	var want curve.G1Jac
	_, err = want.MultiExp(pts, sc, ecc.MultiExpConfig{})
	require.NoError(t, err)
	require.True(t, got.Equal(&want), "stats %+v", st)
	require.InDelta(t, 0.85, float64(st.Zero+st.One)/float64(n), 0.03)

	m := sized(1<<12+3, 1<<9+3)
	gb, err := lib.Alloc(dev, int64(m)*g2Size)
	require.NoError(t, err)
	defer gb.Free()
	require.NoError(t, gb.FillRandomG2(m, 44))
	p2, err := gb.ReadG2(m)
	require.NoError(t, err)
	for i := 0; i < m; i += 97 {
		require.True(t, p2[i].IsOnCurve() && p2[i].IsInSubGroup(), "g2 point %d", i)
	}
	got2, _, err := lib.MSMG2(gb, sb, m)
	require.NoError(t, err)
	var want2 curve.G2Jac
	_, err = want2.MultiExp(p2, sc[:m], ecc.MultiExpConfig{})
	require.NoError(t, err)
	require.True(t, got2.Equal(&want2))

	_, _, err = lib.MSMG1(bb, sb, n+1)
	require.ErrorIs(t, err, ErrInvalid)
}

// TestMSMSliceBound runs the MSM whose Pippenger part needs the most
// per-slice scratch of any size near it: 2^22+1 points of which exactly 2^22
// have scalars other than 0 and 1 (the slice count is not monotonic in n;
// scratch sized from the call's 2^22+1 points was 11 % short for it). The
// CPU emulator would take hours at this size, so it runs on a GPU only.
func TestMSMSliceBound(t *testing.T) {
	lib, dev := gpu(t)
	if testLibEmu {
		t.Skip("2^22-point MSM: GPU only (the CPU emulator is too slow for it)")
	}
	const n = 1<<22 + 1
	pts, sc := randomPointsG1(n), randomScalars(n)
	sc[n/2].SetOne()
	got, st := gpuMSMG1(t, lib, dev, pts, sc)
	require.Equal(t, int64(1<<22), st.Other, "stats=%+v", st)
	var want curve.G1Jac
	_, err := want.MultiExp(pts, sc, ecc.MultiExpConfig{})
	require.NoError(t, err)
	require.True(t, got.Equal(&want), "stats=%+v", st)
}
