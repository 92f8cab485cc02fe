//go:build cgo

package cuda

import (
	"math/big"
	"math/bits"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// Self-test ops of c2g.h.
const (
	stFpAdd = 1 + iota
	stFpSub
	stFpMul
	stFpSqr
	stFpNeg
	stFpFromMont
	stFpInv
	stFpInvEuclid
	stFpInvDivsteps
)

const (
	stFrAdd = 10 + iota
	stFrSub
	stFrMul
	stFrFromMont
)

const (
	stFp2Add = 20 + iota
	stFp2Sub
	stFp2Mul
	stFp2Sqr
	stFp2Inv
)

const (
	stG1Madd = 30 + iota
	stG1Add
	stG1Dbl
	stG1MulSmall
)

const (
	stG2Madd = 40 + iota
	stG2Add
	stG2Dbl
	stG2MulSmall
)

// arithRunner runs one element-wise op over n elements.
type arithRunner func(op int, in0, in1, out []byte, n int) error

func bytesOf[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(v[0])))
}

func run2[T, O any](t *testing.T, run arithRunner, op int, a, b []T) []O {
	t.Helper()
	out := make([]O, len(a))
	require.NoError(t, run(op, bytesOf(a), bytesOf(b), bytesOf(out), len(a)))
	return out
}

// fpInputs returns pairs of Fp elements: edge values (0, 1, -1, 2, and
// raw limbs p-1, 2^380-1, 2^64-1, alternating bits: the longest carry
// chains of the limb products) against each other, x with x and -x, and
// random values.
func fpInputs(rng *rand.Rand, n int) (a, b []fp.Element) {
	var one, m1, two fp.Element
	one.SetOne()
	m1.Neg(&one)
	two.SetUint64(2)
	var pm1 fp.Element
	modulusMinusOne(pm1[:], fp.Modulus())
	const ones = ^uint64(0)
	a, b = allPairs([]fp.Element{{}, one, m1, two, pm1, {ones, ones, ones, ones, ones, 1<<60 - 1}, {ones},
		{0xaaaaaaaaaaaaaaaa, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0x0555555555555555}})
	for len(a) < n {
		var x, y fp.Element
		x.SetRandom()
		y.SetRandom()
		switch rng.IntN(4) {
		case 0:
			y = x
		case 1:
			y.Neg(&x)
		}
		a, b = append(a, x), append(b, y)
	}
	return a, b
}

func frInputs(rng *rand.Rand, n int) (a, b []fr.Element) {
	var one, m1 fr.Element
	one.SetOne()
	m1.Neg(&one)
	var rm1 fr.Element
	modulusMinusOne(rm1[:], fr.Modulus())
	const ones = ^uint64(0)
	a, b = allPairs([]fr.Element{{}, one, m1, rm1, {ones, ones, ones, 1<<62 - 1}, {ones}})
	for len(a) < n {
		var x, y fr.Element
		x.SetRandom()
		y.SetRandom()
		if rng.IntN(4) == 0 {
			y.Neg(&x)
		}
		a, b = append(a, x), append(b, y)
	}
	return a, b
}

// modulusMinusOne writes m - 1 as raw little-endian 64-bit limbs (not
// Montgomery form: an input whose limbs are the largest canonical value).
func modulusMinusOne(dst []uint64, m *big.Int) {
	for i, w := range m.Bits() {
		dst[i] = uint64(w)
	}
	dst[0]-- // m is odd
}

// allPairs returns every (x, y) of edge × edge as two parallel slices.
func allPairs[T any](edge []T) (a, b []T) {
	for _, x := range edge {
		for _, y := range edge {
			a, b = append(a, x), append(b, y)
		}
	}
	return a, b
}

func randomG1(rng *rand.Rand) curve.G1Affine {
	_, _, g, _ := curve.Generators()
	var k fr.Element
	k.SetRandom()
	var kb big.Int
	k.BigInt(&kb)
	var p curve.G1Affine
	p.ScalarMultiplication(&g, &kb)
	return p
}

func randomG2(rng *rand.Rand) curve.G2Affine {
	_, _, _, g := curve.Generators()
	var k fr.Element
	k.SetRandom()
	var kb big.Int
	k.BigInt(&kb)
	var p curve.G2Affine
	p.ScalarMultiplication(&g, &kb)
	return p
}

// checkArithmetic compares every self-test op of run with gnark-crypto.
func checkArithmetic(t *testing.T, run arithRunner) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 300

	t.Run("fp", func(t *testing.T) {
		a, b := fpInputs(rng, n)
		ops := []struct {
			op int
			f  func(x, y *fp.Element) fp.Element
		}{
			{stFpAdd, func(x, y *fp.Element) (z fp.Element) { z.Add(x, y); return }},
			{stFpSub, func(x, y *fp.Element) (z fp.Element) { z.Sub(x, y); return }},
			{stFpMul, func(x, y *fp.Element) (z fp.Element) { z.Mul(x, y); return }},
			{stFpSqr, func(x, _ *fp.Element) (z fp.Element) { z.Square(x); return }},
			{stFpNeg, func(x, _ *fp.Element) (z fp.Element) { z.Neg(x); return }},
			{stFpFromMont, func(x, _ *fp.Element) fp.Element { return fp.Element(x.Bits()) }},
			{stFpInv, func(x, _ *fp.Element) (z fp.Element) { z.Inverse(x); return }},
			{stFpInvEuclid, func(x, _ *fp.Element) (z fp.Element) { z.Inverse(x); return }},
			{stFpInvDivsteps, func(x, _ *fp.Element) (z fp.Element) { z.Inverse(x); return }},
		}
		for _, o := range ops {
			got := run2[fp.Element, fp.Element](t, run, o.op, a, b)
			for i := range a {
				require.Equal(t, o.f(&a[i], &b[i]), got[i], "fp op %d, element %d: %v, %v", o.op, i, a[i].String(), b[i].String())
			}
		}
	})

	t.Run("fr", func(t *testing.T) {
		a, b := frInputs(rng, n)
		ops := []struct {
			op int
			f  func(x, y *fr.Element) fr.Element
		}{
			{stFrAdd, func(x, y *fr.Element) (z fr.Element) { z.Add(x, y); return }},
			{stFrSub, func(x, y *fr.Element) (z fr.Element) { z.Sub(x, y); return }},
			{stFrMul, func(x, y *fr.Element) (z fr.Element) { z.Mul(x, y); return }},
			{stFrFromMont, func(x, _ *fr.Element) fr.Element { return fr.Element(x.Bits()) }},
		}
		for _, o := range ops {
			got := run2[fr.Element, fr.Element](t, run, o.op, a, b)
			for i := range a {
				require.Equal(t, o.f(&a[i], &b[i]), got[i], "fr op %d, element %d", o.op, i)
			}
		}
	})

	t.Run("fp2", func(t *testing.T) {
		x0, x1 := fpInputs(rng, n)
		y0, y1 := fpInputs(rng, n)
		a := make([]curve.E2, n)
		b := make([]curve.E2, n)
		for i := range a {
			a[i] = curve.E2{A0: x0[i], A1: y0[i]}
			b[i] = curve.E2{A0: x1[(i+7)%n], A1: y1[i]}
		}
		ops := []struct {
			op int
			f  func(x, y *curve.E2) curve.E2
		}{
			{stFp2Add, func(x, y *curve.E2) (z curve.E2) { z.Add(x, y); return }},
			{stFp2Sub, func(x, y *curve.E2) (z curve.E2) { z.Sub(x, y); return }},
			{stFp2Mul, func(x, y *curve.E2) (z curve.E2) { z.Mul(x, y); return }},
			{stFp2Sqr, func(x, _ *curve.E2) (z curve.E2) { z.Square(x); return }},
			{stFp2Inv, func(x, _ *curve.E2) (z curve.E2) { z.Inverse(x); return }},
		}
		for _, o := range ops {
			got := run2[curve.E2, curve.E2](t, run, o.op, a, b)
			for i := range a {
				require.Equal(t, o.f(&a[i], &b[i]), got[i], "fp2 op %d, element %d", o.op, i)
			}
		}
	})

	t.Run("g1", func(t *testing.T) {
		var a, b []curve.G1Affine
		inf := curve.G1Affine{}
		for i := 0; i < 40; i++ {
			p, q := randomG1(rng), randomG1(rng)
			var np curve.G1Affine
			np.Neg(&p)
			a = append(a, p, p, p, inf, p, inf)
			b = append(b, q, p, np, q, inf, inf)
		}
		// small multipliers in b.X's first raw limb for MUL_SMALL
		bk := make([]curve.G1Affine, len(b))
		copy(bk, b)
		for i := range bk {
			bk[i].X[0] = uint64(i*2654435761) % 5000
			if i%7 == 0 {
				bk[i].X[0] = 1<<63 | uint64(i)
			}
		}
		type xyzz = [g1XYZZ]byte
		check := func(op int, in1 []curve.G1Affine, want func(i int) curve.G1Jac) {
			got := run2[curve.G1Affine, xyzz](t, run, op, a, in1)
			for i := range a {
				g := g1FromXYZZ(got[i][:])
				w := want(i)
				require.True(t, g.Equal(&w), "g1 op %d, element %d", op, i)
			}
		}
		jac := func(p curve.G1Affine) (j curve.G1Jac) { j.FromAffine(&p); return }
		check(stG1Madd, b, func(i int) curve.G1Jac { j := jac(a[i]); q := jac(b[i]); j.AddAssign(&q); return j })
		check(stG1Add, b, func(i int) curve.G1Jac {
			j := jac(a[i])
			q := jac(b[i])
			j.AddAssign(&q)
			j.Double(&j)
			return j
		})
		check(stG1Dbl, b, func(i int) curve.G1Jac { j := jac(a[i]); j.Double(&j); j.Double(&j); return j })
		check(stG1MulSmall, bk, func(i int) curve.G1Jac {
			j := jac(a[i])
			j.ScalarMultiplication(&j, new(big.Int).SetUint64(bk[i].X[0]))
			return j
		})
	})

	t.Run("g2", func(t *testing.T) {
		var a, b []curve.G2Affine
		inf := curve.G2Affine{}
		for i := 0; i < 20; i++ {
			p, q := randomG2(rng), randomG2(rng)
			var np curve.G2Affine
			np.Neg(&p)
			a = append(a, p, p, p, inf, p, inf)
			b = append(b, q, p, np, q, inf, inf)
		}
		bk := make([]curve.G2Affine, len(b))
		copy(bk, b)
		for i := range bk {
			bk[i].X.A0[0] = uint64(i*40503) % 3000
		}
		type xyzz = [g2XYZZ]byte
		check := func(op int, in1 []curve.G2Affine, want func(i int) curve.G2Jac) {
			got := run2[curve.G2Affine, xyzz](t, run, op, a, in1)
			for i := range a {
				g := g2FromXYZZ(got[i][:])
				w := want(i)
				require.True(t, g.Equal(&w), "g2 op %d, element %d", op, i)
			}
		}
		jac := func(p curve.G2Affine) (j curve.G2Jac) { j.FromAffine(&p); return }
		check(stG2Madd, b, func(i int) curve.G2Jac { j := jac(a[i]); q := jac(b[i]); j.AddAssign(&q); return j })
		check(stG2Add, b, func(i int) curve.G2Jac {
			j := jac(a[i])
			q := jac(b[i])
			j.AddAssign(&q)
			j.Double(&j)
			return j
		})
		check(stG2Dbl, b, func(i int) curve.G2Jac { j := jac(a[i]); j.Double(&j); j.Double(&j); return j })
		check(stG2MulSmall, bk, func(i int) curve.G2Jac {
			j := jac(a[i])
			j.ScalarMultiplication(&j, new(big.Int).SetUint64(bk[i].X.A0[0]))
			return j
		})
	})
}

// TestHostArithmetic builds the kernels' arithmetic for the CPU (the same
// source, with the PTX carry chains emulated) and checks it against
// gnark-crypto. It needs only a C++ compiler, so it runs in CI.
func TestHostArithmetic(t *testing.T) {
	checkArithmetic(t, buildHostArith(t).runner())
}

// TestHostInverse checks the inversion's two algorithms alone (divsteps
// without its fallback, and the binary Euclid) against gnark-crypto on
// inputs whose raw Montgomery limbs — what both algorithms run on — are
// random, random of every bit length, small, powers of two, just below p
// and consecutive Fibonacci numbers, plus random field elements.
func TestHostInverse(t *testing.T) {
	h := buildHostArith(t)
	rng := rand.New(rand.NewPCG(3, 4))
	p := fp.Modulus()
	var in []fp.Element
	raw := func(v *big.Int) {
		var e fp.Element
		for i, w := range v.Bits() {
			e[i] = uint64(w)
		}
		in = append(in, e)
	}
	for k := 0; k < 381; k++ {
		raw(new(big.Int).Lsh(big.NewInt(1), uint(k)))
		raw(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(k+1)), big.NewInt(1)))
		r := new(big.Int)
		for i := 0; i < 6; i++ {
			r.Lsh(r, 64).Or(r, new(big.Int).SetUint64(rng.Uint64()))
		}
		raw(r.Rsh(r, uint(384-k-1)).SetBit(r, k, 1)) // k + 1 bits
	}
	for d := int64(1); d <= 64; d++ {
		raw(big.NewInt(d))
		raw(new(big.Int).Sub(p, big.NewInt(d)))
	}
	fa, fb := big.NewInt(1), big.NewInt(1)
	for fb.Cmp(p) < 0 {
		raw(fb)
		fa, fb = fb, new(big.Int).Add(fa, fb)
	}
	for len(in) < 40000 {
		var x fp.Element
		x.SetRandom()
		in = append(in, x)
	}
	for _, op := range []int{stFpInvDivsteps, stFpInvEuclid, stFpInv} {
		got := run2[fp.Element, fp.Element](t, h.runner(), op, in, in)
		for i := range in {
			var want fp.Element
			want.Inverse(&in[i])
			require.Equal(t, want, got[i], "op %d, raw limbs %x", op, [6]uint64(in[i]))
		}
	}
}

// runner runs the self-test ops on the host build, as checkArithmetic and
// run2 want them.
func (h *hostArith) runner() arithRunner {
	return func(op int, in0, in1, out []byte, n int) error {
		return h.run(op, unsafe.Pointer(&in0[0]), unsafe.Pointer(&in1[0]), unsafe.Pointer(&out[0]), int64(n))
	}
}

// buildHostArith compiles cuda/test/hostarith.cpp with g++ (skips without).
func buildHostArith(t *testing.T) *hostArith {
	t.Helper()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++ on PATH: cannot build the host arithmetic library")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "..", "cuda", "test", "hostarith.cpp"))
	require.NoError(t, err)
	lib := filepath.Join(t.TempDir(), "libc2g_hostarith.so")
	out, err := exec.Command(cxx, "-O1", "-std=c++17", "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
	require.NoError(t, err, "g++: %s", out)
	h, err := openHostArith(lib)
	require.NoError(t, err)
	return h
}

// TestPopcountBits checks the upload's density count (bits.cuh: several
// threads from 2^19 words on) against math/bits on random bitmaps, whole
// and cut inside a word, around the thread split's sizes.
func TestPopcountBits(t *testing.T) {
	h := buildHostArith(t)
	rng := rand.New(rand.NewPCG(5, 9))
	for _, words := range []int{0, 1, 3, 1 << 18, 1<<19 - 1, 1 << 19, 1<<19 + 7, 3 << 20} {
		w := make([]uint64, words)
		for i := range w {
			w[i] = rng.Uint64()
		}
		for _, cut := range []int{0, 1, 63} {
			if words == 0 && cut > 0 {
				continue
			}
			nbits := uint64(words*64 - cut)
			var want uint64
			for i := range uint64(nbits / 64) {
				want += uint64(bits.OnesCount64(w[i]))
			}
			if r := nbits % 64; r != 0 {
				want += uint64(bits.OnesCount64(w[nbits/64] & (1<<r - 1)))
			}
			require.Equal(t, want, h.countBits(w, nbits), "%d words, %d bits", words, nbits)
		}
	}
}

// TestSignedDigits checks the MSM's window recoding: for every window size
// the digits are in [-2^(c-1)+1, 2^(c-1)], sum back to the scalar, and
// equal the carry chain's (the host library returns an error where
// signed_digit, which looks down only to the first window that is not
// 2^(c-1), and the chain from window 0 disagree).
func TestSignedDigits(t *testing.T) {
	h := buildHostArith(t)
	var one, m1 fr.Element
	one.SetOne()
	m1.Neg(&one)
	scalars := []fr.Element{{}, one, m1}
	for i := 0; i < 40; i++ {
		var x fr.Element
		x.SetRandom()
		scalars = append(scalars, x)
	}
	for c := 2; c <= 24; c++ {
		// values that hit the carry edge: 2^(c-1), 2^c - 1, 2^(c-1)+1 at every window
		for _, v := range []uint64{1 << (c - 1), 1<<c - 1, 1<<(c-1) + 1} {
			var x fr.Element
			x.SetUint64(v)
			scalars = append(scalars, x)
		}
		// carries passed along runs of windows that are exactly 2^(c-1),
		// started by a low window above, at or below 2^(c-1), under a
		// window of each kind
		cs := slices.Clone(scalars)
		for run := 1; run*c < 250; run += 1 + run/3 {
			for _, low := range []int64{1<<(c-1) + 1, 1 << (c - 1), 1<<(c-1) - 1} {
				for _, top := range []int64{0, 1, 1 << (c - 1), 1<<c - 1} {
					v := big.NewInt(top)
					for u := 0; u < run; u++ {
						v.Lsh(v, uint(c))
						v.Add(v, big.NewInt(1<<(c-1)))
					}
					v.Lsh(v, uint(c))
					v.Add(v, big.NewInt(low))
					var x fr.Element
					x.SetBigInt(v)
					cs = append(cs, x)
				}
			}
		}
		for _, s := range cs {
			var bi big.Int
			s.BigInt(&bi)
			var limbs [8]uint32
			bits := s.Bits()
			for k := 0; k < 4; k++ {
				limbs[2*k], limbs[2*k+1] = uint32(bits[k]), uint32(bits[k]>>32)
			}
			d, err := h.signedDigits(&limbs, c)
			require.NoError(t, err)
			sum := new(big.Int)
			for w := len(d) - 1; w >= 0; w-- {
				require.LessOrEqual(t, d[w], int32(1)<<(c-1), "c=%d w=%d", c, w)
				require.Greater(t, d[w], -(int32(1) << (c - 1)), "c=%d w=%d", c, w)
				sum.Lsh(sum, uint(c))
				sum.Add(sum, big.NewInt(int64(d[w])))
			}
			require.Zero(t, sum.Cmp(&bi), "c=%d scalar %s", c, bi.String())
		}
	}
}
