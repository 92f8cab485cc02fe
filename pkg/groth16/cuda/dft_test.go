//go:build cgo

package cuda

import (
	"context"
	"fmt"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// The Backend's method is a groth16.G1DFT.
var _ groth16.G1DFT = (*Backend)(nil).DFTG1

// dftRoot is ω (or ω⁻¹) of fft.NewDomain(n).
func dftRoot(n int, inverse bool) fr.Element {
	w := fft.NewDomain(uint64(n)).Generator
	if inverse {
		w.Inverse(&w)
	}
	return w
}

// naiveDFTG1 is the O(n²) oracle: out_i = Σ_j ω^{ij}·in_j, one gnark-crypto
// scalar multiplication per term.
func naiveDFTG1(in []curve.G1Affine, inverse bool) []curve.G1Affine {
	n := len(in)
	w := dftRoot(n, inverse)
	pow := make([]big.Int, n) // ω^e, e < n
	var x fr.Element
	x.SetOne()
	for e := range pow {
		x.BigInt(&pow[e])
		x.Mul(&x, &w)
	}
	out := make([]curve.G1Affine, n)
	for i := range out {
		var acc curve.G1Jac
		for j := range in {
			var p curve.G1Jac
			p.FromAffine(&in[j])
			p.ScalarMultiplication(&p, &pow[(i*j)%n])
			acc.AddAssign(&p)
		}
		out[i].FromJacobian(&acc)
	}
	return out
}

// dftInputs is n random points of G1 with the butterflies' special cases:
// points at infinity, and pairs of the first stage (i, i + n/2) that are
// equal (a − b = ∞) or opposite (a + b = ∞), and repeated points.
func dftInputs(rng *rand.Rand, n int) []curve.G1Affine {
	pts := randomPointsG1(n)
	switch {
	case n == 2:
		pts[1] = curve.G1Affine{} // infinity
	case n == 4:
		pts[0] = curve.G1Affine{}
		pts[3] = pts[1] // a = b
	case n >= 8:
		h := n / 2
		pts[0] = curve.G1Affine{}
		pts[h+1] = curve.G1Affine{}
		pts[h+2] = pts[2]     // a = b
		pts[h+3].Neg(&pts[3]) // a = −b
		pts[n-1] = pts[rng.IntN(n-1)]
	}
	return pts
}

func requirePointsEqual(t *testing.T, want, got []curve.G1Affine, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.True(t, want[i].Equal(&got[i]), "%s: point %d differs", what, i)
	}
}

// TestDFTG1 compares the device DFT with the naive transform, forward and
// inverse, for 1 … 64 points, and under the window and table knobs.
func TestDFTG1(t *testing.T) {
	lib, dev := gpu(t)
	rng := rand.New(rand.NewPCG(28, 1))
	check := func(t *testing.T, n int) {
		in := dftInputs(rng, n)
		for _, inverse := range []bool{false, true} {
			got := append([]curve.G1Affine(nil), in...)
			st, err := lib.DFTG1(context.Background(), dev, got, inverse, nil, nil)
			require.NoError(t, err)
			requirePointsEqual(t, naiveDFTG1(in, inverse), got, fmt.Sprintf("n = %d, inverse %v", n, inverse))
			require.Equal(t, dftScalarMuls(n), st.ScalarMuls)
			require.Zero(t, st.ScaleMuls)
		}
		// the input scaled by c·x^j on the device
		sc := randomScale(rng)
		got := append([]curve.G1Affine(nil), in...)
		st, err := lib.DFTG1(context.Background(), dev, got, true, &sc, nil)
		require.NoError(t, err)
		requirePointsEqual(t, naiveDFTG1(scaleInputs(in, sc), true), got, fmt.Sprintf("n = %d, inverse, scaled", n))
		require.Equal(t, int64(n), st.ScaleMuls)
	}
	for _, n := range []int{1, 2, 4, 8, 16, 64} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) { check(t, n) })
	}
	for _, knobs := range [][2]string{{"5", "on"}, {"4", "off"}, {"5", "off"}} {
		t.Run(fmt.Sprintf("window=%s,affine=%s", knobs[0], knobs[1]), func(t *testing.T) {
			t.Setenv("C2G_DFT_WINDOW", knobs[0])
			t.Setenv("C2G_DFT_AFFINE", knobs[1])
			check(t, 16)
		})
	}
}

// randomScale is a DFTScale of random c and x.
func randomScale(rng *rand.Rand) groth16.DFTScale {
	var sc groth16.DFTScale
	sc.C.SetUint64(rng.Uint64()).Mul(&sc.C, new(fr.Element).SetUint64(rng.Uint64()|1<<63)).Square(&sc.C)
	sc.X.SetUint64(rng.Uint64()).Mul(&sc.X, new(fr.Element).SetUint64(rng.Uint64()|1<<63)).Square(&sc.X)
	return sc
}

// scaleInputs is in_j·c·x^j by gnark-crypto's scalar multiplication.
func scaleInputs(in []curve.G1Affine, sc groth16.DFTScale) []curve.G1Affine {
	out := make([]curve.G1Affine, len(in))
	f := sc.C
	for j := range in {
		var b big.Int
		out[j].ScalarMultiplication(&in[j], f.BigInt(&b))
		f.Mul(&f, &sc.X)
	}
	return out
}

// dftScalarMuls is the number of butterflies whose twiddle is not 1.
func dftScalarMuls(n int) int64 {
	var m int64
	logN := bits.TrailingZeros(uint(n))
	for hb := 1; hb < logN; hb++ {
		m += int64(n>>(hb+1)) * int64(1<<hb-1)
	}
	return m
}

// TestDFTG1LargeRoundTrip checks a larger transform two ways: some outputs
// against gnark-crypto's MSM Σ_j ω^{ij}·in_j, and the inverse of the
// forward transform against n·in.
func TestDFTG1LargeRoundTrip(t *testing.T) {
	lib, dev := gpu(t)
	rng := rand.New(rand.NewPCG(28, 2))
	logN := sized(16, 8)
	n := 1 << logN
	in := dftInputs(rng, n)
	pts := append([]curve.G1Affine(nil), in...)
	var calls int
	var last [2]int64
	st, err := lib.DFTG1(context.Background(), dev, pts, false, nil, func(done, total int64) { calls++; last = [2]int64{done, total} })
	require.NoError(t, err)
	require.Positive(t, calls)
	require.Equal(t, [2]int64{dftScalarMuls(n), dftScalarMuls(n)}, last)
	t.Logf("2^%d points: %.1f ms (stages %.1f ms on the device), %d twiddle multiplications, window %d, affine table %v",
		logN, st.Millis, st.DeviceMillis, st.ScalarMuls, st.WindowBits, st.AffineTable)

	// outputs 0, 1, n/2, n−1 and two random ones against MSMs
	w := dftRoot(n, false)
	var nz []curve.G1Affine
	var nzIdx []int
	for j := range in {
		if !in[j].IsInfinity() {
			nz, nzIdx = append(nz, in[j]), append(nzIdx, j)
		}
	}
	for _, i := range []int{0, 1, n / 2, n - 1, rng.IntN(n), rng.IntN(n)} {
		var wi fr.Element
		wi.Exp(w, big.NewInt(int64(i)))
		sc := make([]fr.Element, len(nz))
		for k, j := range nzIdx {
			sc[k].Exp(wi, big.NewInt(int64(j)))
		}
		var want curve.G1Affine
		_, err := want.MultiExp(nz, sc, ecc.MultiExpConfig{})
		require.NoError(t, err)
		require.True(t, want.Equal(&pts[i]), "output %d differs from its MSM", i)
	}

	_, err = lib.DFTG1(context.Background(), dev, pts, true, nil, nil)
	require.NoError(t, err)
	nBig := big.NewInt(int64(n))
	for i := range in {
		var want curve.G1Affine
		want.ScalarMultiplication(&in[i], nBig)
		require.True(t, want.Equal(&pts[i]), "inverse(forward(x))[%d] != n·x[%d]", i, i)
	}
}

// TestDFTG1Refusals: lengths that are not a power of two or exceed 2^27,
// a log size the library does not take, and cancellation.
func TestDFTG1Refusals(t *testing.T) {
	lib, dev := gpu(t)
	for _, n := range []int{0, 3, 6, 12, 1000} {
		_, err := lib.DFTG1(context.Background(), dev, make([]curve.G1Affine, n), false, nil, nil)
		require.ErrorIs(t, err, ErrInvalid, "n = %d", n)
		require.ErrorContains(t, err, "power of two")
	}
	// lengths above 2^27 (checked before any slice is read)
	for _, n := range []int{MaxDFTPoints * 2, MaxDFTPoints + 1, -4} {
		_, err := dftLogN(n)
		require.ErrorIs(t, err, ErrInvalid, "n = %d", n)
		require.ErrorContains(t, err, "power of two from 1 to 2^27")
	}
	logN, err := dftLogN(MaxDFTPoints)
	require.NoError(t, err)
	require.Equal(t, 27, logN)
	// the library's own bound
	pts := dftInputs(rand.New(rand.NewPCG(28, 3)), 8)
	ctl := newDFTControl()
	defer ctl.free()
	_, err = lib.a.dftG1(dev, unsafe.Pointer(&pts[0]), 28, false, nil, ctl)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "2^28")
	// a scale that is not a canonical Fr element (x = r)
	bad := [2]fr.Element{}
	bad[0].SetOne()
	bad[1] = fr.Element{0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48}
	_, err = lib.a.dftG1(dev, unsafe.Pointer(&pts[0]), 3, false, unsafe.Pointer(&bad), ctl)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "scale x is not a canonical Fr element")

	// cancelled before the call: nothing runs
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	orig := append([]curve.G1Affine(nil), pts...)
	_, err = lib.DFTG1(ctx, dev, pts, false, nil, nil)
	require.ErrorIs(t, err, context.Canceled)
	requirePointsEqual(t, orig, pts, "after a cancelled call")
	// the flag set: the library stops at its first check, points untouched
	ctl.cancel()
	_, err = lib.a.dftG1(dev, unsafe.Pointer(&pts[0]), 3, false, nil, ctl)
	require.ErrorIs(t, err, context.Canceled)
	requirePointsEqual(t, orig, pts, "after a cancelled transform")
}

// TestDFTG1MatchesCPU: the backend's G1DFT gives groth16.CPUDFTG1's points,
// forward and inverse, at 2^12 (2^7 emulated).
func TestDFTG1MatchesCPU(t *testing.T) {
	b := newTestBackend(t, ResidencyAuto)
	lib, dev := gpu(t)
	// The DFT c2-params -convert-h takes (SelectDFT), on the test's device.
	selected, why, err := SelectDFT(ModeCUDA, Config{LibraryPath: lib.Path(), Device: dev})
	require.NoError(t, err)
	require.Contains(t, why, "on device")
	n := 1 << sized(12, 7)
	in := dftInputs(rand.New(rand.NewPCG(28, 4)), n)
	for name, dft := range map[string]groth16.G1DFT{"Backend.DFTG1": b.DFTG1, "SelectDFT": selected} {
		for _, inverse := range []bool{false, true} {
			want := append([]curve.G1Affine(nil), in...)
			got := append([]curve.G1Affine(nil), in...)
			require.NoError(t, groth16.CPUDFTG1(context.Background(), want, inverse, nil))
			require.NoError(t, dft(context.Background(), got, inverse, nil))
			requirePointsEqual(t, want, got, fmt.Sprintf("%s, n = %d, inverse %v", name, n, inverse))
		}
		// scaled as groth16.ConvertHCosetLagrange scales: the same x^j, and x = 1
		for _, x := range []uint64{0, 1} {
			sc := randomScale(rand.New(rand.NewPCG(28, 5)))
			if x == 1 {
				sc.X.SetOne()
			}
			want := append([]curve.G1Affine(nil), in...)
			got := append([]curve.G1Affine(nil), in...)
			require.NoError(t, groth16.CPUDFTG1(context.Background(), want, true, &sc))
			require.NoError(t, dft(context.Background(), got, true, &sc))
			requirePointsEqual(t, want, got, fmt.Sprintf("%s, n = %d, scaled, x one %v", name, n, x == 1))
		}
	}
	_, why, err = SelectDFT(ModeCPU, Config{})
	require.NoError(t, err)
	require.Contains(t, why, "on the CPU")
	_, _, err = SelectDFT("gpu", Config{})
	require.ErrorContains(t, err, `"gpu"`)
}
