package groth16

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// convertChain is the chain length of the conversion tests: a domain of
// 256 (the fixture's 4096 would take the CPU DFT seconds).
const convertChain = 100

// convertFixture is a monomial key of the chain of convertChain steps
// (seed "convert") with its circuit and CPU key.
type convertFixture struct {
	sys     *r1cs.System
	circuit *Circuit
	pk      *ProvingKey
	key     Key
}

func newConvertFixture(t *testing.T) *convertFixture {
	t.Helper()
	ctx := context.Background()
	f := &convertFixture{sys: groth16test.ChainSystem(convertChain, 3, 0xdeadbeefcafe, 7)}
	var err error
	f.pk, _, err = SetupR1CS(ctx, f.sys, SetupSeed([]byte("convert")))
	require.NoError(t, err)
	f.circuit = circuitOf(t, f.sys)
	f.key, err = NewCPUBackend().Load(ctx, f.pk)
	require.NoError(t, err)
	return f
}

// randomG1 returns n points k_i·G for random k_i (and the identity at
// index 1 when n > 1, to cover it).
func randomG1(t testing.TB, n int) []curve.G1Affine {
	t.Helper()
	_, _, g, _ := curve.Generators()
	pts := make([]curve.G1Affine, n)
	for i := range pts {
		var k fr.Element
		_, err := k.SetRandom()
		require.NoError(t, err)
		var b big.Int
		pts[i].ScalarMultiplication(&g, k.BigInt(&b))
	}
	if n > 1 {
		pts[1].SetInfinity()
	}
	return pts
}

// naiveDFT is the definition: out_i = Σ_j w^{ij}·in_j, one scalar
// multiplication per pair.
func naiveDFT(in []curve.G1Affine, w fr.Element) []curve.G1Affine {
	n := len(in)
	out := make([]curve.G1Affine, n)
	for i := range n {
		var acc curve.G1Jac
		for j := range n {
			var e fr.Element
			e.Exp(w, big.NewInt(int64(i*j%n)))
			var b big.Int
			var t curve.G1Jac
			t.FromAffine(&in[j])
			t.ScalarMultiplication(&t, e.BigInt(&b))
			acc.AddAssign(&t)
		}
		out[i].FromJacobian(&acc)
	}
	return out
}

func TestCPUDFTG1AgainstNaiveDFT(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, 2, 4, 8, 16} {
		w, err := fft.Generator(uint64(n))
		require.NoError(t, err)
		// ω is the primitive n-th root of gnark-crypto's domain.
		require.Equal(t, fft.NewDomain(uint64(n)).Generator, w)
		var wn, wh fr.Element
		wn.Exp(w, big.NewInt(int64(n)))
		require.True(t, wn.IsOne())
		if n > 1 {
			wh.Exp(w, big.NewInt(int64(n/2)))
			require.False(t, wh.IsOne(), "ω of order < %d", n)
		}
		var wInv fr.Element
		wInv.Inverse(&w)

		in := randomG1(t, n)
		fwd := append([]curve.G1Affine(nil), in...)
		require.NoError(t, CPUDFTG1(ctx, fwd, false, nil))
		require.Equal(t, naiveDFT(in, w), fwd, "forward, n = %d", n)
		inv := append([]curve.G1Affine(nil), in...)
		require.NoError(t, CPUDFTG1(ctx, inv, true, nil))
		require.Equal(t, naiveDFT(in, wInv), inv, "inverse, n = %d", n)

		// A scale: the transform of (c·x^j·in_j), scaled here by
		// gnark-crypto's scalar multiplication.
		var sc DFTScale
		sc.C.SetRandom()
		sc.X.SetRandom()
		scaled := make([]curve.G1Affine, n)
		var f fr.Element
		f.Set(&sc.C)
		for j := range in {
			var b big.Int
			scaled[j].ScalarMultiplication(&in[j], f.BigInt(&b))
			f.Mul(&f, &sc.X)
		}
		got := append([]curve.G1Affine(nil), in...)
		require.NoError(t, CPUDFTG1(ctx, got, true, &sc))
		require.Equal(t, naiveDFT(scaled, wInv), got, "inverse with a scale, n = %d", n)

		// Round trip: inverse(forward(x)) = n·x.
		require.NoError(t, CPUDFTG1(ctx, fwd, true, nil))
		var nb big.Int
		nb.SetInt64(int64(n))
		for i := range in {
			var want curve.G1Affine
			want.ScalarMultiplication(&in[i], &nb)
			require.Equal(t, want, fwd[i], "round trip, n = %d, point %d", n, i)
		}
	}
	for _, n := range []int{0, 3, 12} {
		require.ErrorContains(t, CPUDFTG1(ctx, make([]curve.G1Affine, n), false, nil), "want a power of two")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, CPUDFTG1(cancelled, randomG1(t, 8), false, nil), context.Canceled)
}

// The converted key proves the monomial key's proofs, byte for byte, for
// the same randomness (the oracle: the monomial prover, checked against
// gnark's verifier elsewhere), and they verify with the unchanged
// verifying key (gnark's verifier).
func TestConvertHCosetLagrangeProvesTheSameProofs(t *testing.T) {
	f := newConvertFixture(t)
	ctx := context.Background()
	var stages []string
	conv, err := ConvertHCosetLagrange(ctx, f.pk, f.sys, CPUDFTG1, func(stage string, done, total int64) {
		if done == 0 {
			stages = append(stages, stage)
		}
	})
	require.NoError(t, err)
	require.Equal(t, []string{"convert h: dft", "convert h: c matrix", "convert h: fold"}, stages)
	require.NoError(t, CheckProvingKey(conv))
	require.NoError(t, checkFitsCircuit(conv, f.circuit))
	require.Equal(t, HCosetLagrange, conv.HForm)
	require.Equal(t, f.pk.VK, conv.VK)
	require.Len(t, f.pk.H, f.circuit.DomainSize()-1, "the monomial key is left as it was")

	// H' against its definition from the fixture's toxic waste: H'_i =
	// κ/δ·(1/n)·Σ_{j≤n−2} τ^j·x_i^{−j}·G, x_i = g·ω^i.
	n := f.circuit.DomainSize()
	tw, err := sampleToxicWaste([]byte("convert"), uint64(n))
	require.NoError(t, err)
	g, gn := cosetShift(uint64(n))
	omega, err := fft.Generator(uint64(n))
	require.NoError(t, err)
	var kappa, one, nInv, deltaInv fr.Element
	one.SetOne()
	kappa.Exp(tw.tau, big.NewInt(int64(n))).Sub(&kappa, &one)
	var den fr.Element
	den.Sub(&gn, &one).Inverse(&den)
	kappa.Mul(&kappa, &den)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	deltaInv.Inverse(&tw.delta)
	_, _, g1, _ := curve.Generators()
	for _, i := range []int{0, 1, n / 2, n - 1} {
		var x, xInv, term, sum fr.Element
		x.Exp(omega, big.NewInt(int64(i))).Mul(&x, &g)
		xInv.Inverse(&x)
		term.SetOne()
		for range n - 1 {
			sum.Add(&sum, &term)
			term.Mul(&term, &tw.tau).Mul(&term, &xInv)
		}
		sum.Mul(&sum, &kappa).Mul(&sum, &deltaInv).Mul(&sum, &nInv)
		var want curve.G1Affine
		var b big.Int
		want.ScalarMultiplication(&g1, sum.BigInt(&b))
		require.Equal(t, want, conv.H[i], "H'[%d]", i)
	}

	key, err := NewCPUBackend().Load(ctx, conv)
	require.NoError(t, err)
	for _, seed := range []struct{ x, w, q, r, s uint64 }{{3, 0xdeadbeefcafe, 7, 11, 13}, {5, 0x1234567, 9, 1 << 40, 77}} {
		w, pub := chainInstance(t, convertChain, seed.x, seed.w, seed.q)
		rnd := fixedRandomness(seed.r, seed.s)
		want, _, err := Prove(ctx, f.key, w, rnd)
		require.NoError(t, err)
		w2, _ := chainInstance(t, convertChain, seed.x, seed.w, seed.q)
		got, _, err := Prove(ctx, key, w2, rnd)
		require.NoError(t, err)
		wb, _ := want.MarshalBinary()
		gb, _ := got.MarshalBinary()
		require.Equal(t, wb, gb, "the converted key's proof differs from the monomial key's")
		require.NoError(t, gnarkVerify(&conv.VK, got, pub))
	}
}

// coeffSystem is a small circuit whose C matrix has large coefficients
// (positive and negative), small ones other than ±1, repeated terms and
// a row of ±2^k (the doubling chain), the fold's other paths than the
// chain circuit's; with values that satisfy it.
func coeffSystem(t *testing.T) *r1cs.System {
	t.Helper()
	sys := r1cs.NewSystem(r1cs.WithValues())
	var big1, big2 fr.Element
	big1.SetString("0x1234567890abcdef1234567890abcdef")
	big2.Neg(&big1).Add(&big2, new(fr.Element).SetUint64(1<<40)) // r − 2^128ish + 2^40: not small either way
	x := sys.AllocInput(r1cs.N("x"), fr.NewElement(5))
	y := sys.Alloc(r1cs.N("y"), fr.NewElement(9))
	// z = x·y − big1·y − 3·x − big2·ONE + 2^29 (a small code at the bound's edge)
	var xv, yv, z fr.Element
	xv.SetUint64(5)
	yv.SetUint64(9)
	z.Mul(&xv, &yv)
	var tmp fr.Element
	z.Sub(&z, tmp.Mul(&big1, &yv))
	z.Sub(&z, tmp.SetUint64(15))
	z.Sub(&z, &big2)
	small := fr.NewElement(1 << 29)
	z.Add(&z, &small)
	zv := sys.Alloc(r1cs.N("z"), z)
	// x · y = z + big1·y + 3·x + big2·ONE − 2^29·ONE, with y's term split in two
	var a, b, c r1cs.LC
	a.Add(x)
	b.Add(y)
	c.Add(zv).AddCoeff(&big1, y).AddCoeff(new(fr.Element).SetUint64(3), x).AddCoeff(&big2, r1cs.One)
	negSmall := r1cs.Coeff(-(1 << 29))
	c.AddCoeff(&negSmall, r1cs.One)
	sys.Enforce(r1cs.N("mix"), &a, &b, &c)
	// y · y = 81·ONE, z · ONE = z (z's A and B presence)
	a.Reset().Add(y)
	b.Reset().Add(y)
	eighty := fr.NewElement(81)
	c.Reset().AddCoeff(&eighty, r1cs.One)
	sys.Enforce(r1cs.N("sq"), &a, &b, &c)
	a.Reset().Add(zv)
	b.Reset().Add(r1cs.One)
	c.Reset().Add(zv)
	sys.Enforce(r1cs.N("z"), &a, &b, &c)
	// packed · ONE = Σ ±2^k·v over one row, as MultiEq and num's packing
	// write it: exponents repeated and out of order, small and large,
	// positive and negative, ONE among the variables.
	var packed fr.Element
	c.Reset()
	for i, term := range []struct {
		k   int
		neg bool
		val uint64
	}{{5, false, 3}, {200, true, 1}, {3, true, 4}, {5, false, 6}, {100, false, 1}, {77, false, 0}, {31, true, 2}, {1, false, 9}} {
		var co, v fr.Element
		co.Exp(fr.NewElement(2), big.NewInt(int64(term.k)))
		if term.neg {
			co.Neg(&co)
		}
		v.SetUint64(term.val)
		vr := r1cs.One
		if term.k != 77 {
			vr = sys.Alloc(r1cs.N(fmt.Sprintf("bit %d", i)), v)
		} else {
			v.SetOne()
		}
		c.AddCoeff(&co, vr)
		packed.Add(&packed, v.Mul(&v, &co))
	}
	pv := sys.Alloc(r1cs.N("packed"), packed)
	a.Reset().Add(pv)
	b.Reset().Add(r1cs.One)
	sys.Enforce(r1cs.N("pack"), &a, &b, &c)
	require.NoError(t, sys.Satisfied())
	return sys
}

// In place, the conversion gives the copying one's key and takes over the
// key's arrays: L' in L's, one transform in H's when its capacity holds
// the domain; without that capacity it copies H and gives the same key.
func TestConvertHCosetLagrangeInPlace(t *testing.T) {
	f := newConvertFixture(t)
	ctx := context.Background()
	want, err := ConvertHCosetLagrange(ctx, f.pk, f.sys, CPUDFTG1, nil)
	require.NoError(t, err)
	n := f.circuit.DomainSize()
	for _, spare := range []int{1, 0} {
		t.Run(fmt.Sprintf("h capacity domain-1+%d", spare), func(t *testing.T) {
			pk := *f.pk
			pk.H = append(make([]curve.G1Affine, 0, len(f.pk.H)+spare), f.pk.H...)
			pk.L = slices.Clone(f.pk.L)
			h, l := pk.H[:cap(pk.H)], pk.L
			got, err := ConvertHCosetLagrangeInPlace(ctx, &pk, f.sys, CPUDFTG1, nil)
			require.NoError(t, err)
			require.Equal(t, want.H, got.H)
			require.Equal(t, want.L, got.L)
			require.Equal(t, want.LInput, got.LInput)
			require.Same(t, &l[0], &got.L[0], "L' is in the key's L array")
			if spare == 1 {
				require.NotEqual(t, f.pk.H[0], h[0], "a transform ran in the key's H array")
			} else {
				require.Equal(t, f.pk.H, h, "H without room for the domain is copied, not changed")
			}
			require.Len(t, h, n-1+spare)
		})
	}
}

func TestConvertHCosetLagrangeLargeCoefficients(t *testing.T) {
	ctx := context.Background()
	sys := coeffSystem(t)
	pk, _, err := SetupR1CS(ctx, sys, SetupSeed([]byte("coeffs")))
	require.NoError(t, err)
	conv, err := ConvertHCosetLagrange(ctx, pk, sys, nil, nil)
	require.NoError(t, err)
	mono, err := NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	key, err := NewCPUBackend().Load(ctx, conv)
	require.NoError(t, err)
	w, err := SynthesizeSystem(sys)
	require.NoError(t, err)
	want, _, err := Prove(ctx, mono, w, fixedRandomness(17, 19))
	require.NoError(t, err)
	w2, err := SynthesizeSystem(sys)
	require.NoError(t, err)
	got, _, err := Prove(ctx, key, w2, fixedRandomness(17, 19))
	require.NoError(t, err)
	require.Equal(t, *want, *got)
	require.NoError(t, Verify(&pk.VK, got, w.Input[1:]))
}

func TestConvertHCosetLagrangeRefusals(t *testing.T) {
	f := newConvertFixture(t)
	ctx := context.Background()
	lag, _, err := SetupR1CS(ctx, f.sys, SetupSeed([]byte("convert")), SetupHForm(HCosetLagrange))
	require.NoError(t, err)
	_, err = ConvertHCosetLagrange(ctx, lag, f.sys, nil, nil)
	require.ErrorIs(t, err, ErrShape)
	require.ErrorContains(t, err, "coset-lagrange form, want monomial")

	n := f.circuit.DomainSize()
	for name, c := range map[string]struct {
		mut  func(k *ProvingKey)
		want string
	}{
		"short h":  {func(k *ProvingKey) { k.H = k.H[1:] }, "section h has 254 points, the circuit needs 255 (domain − 1: domain 256)"},
		"long l":   {func(k *ProvingKey) { k.L = append(k.L[:len(k.L):len(k.L)], k.L[0]) }, "section l has"},
		"short ic": {func(k *ProvingKey) { k.VK.IC = k.VK.IC[1:] }, "section ic has 3 points, the circuit needs 4"},
		"l_input":  {func(k *ProvingKey) { k.LInput = k.L[:1] }, "no l_input"},
	} {
		k := *f.pk
		c.mut(&k)
		_, err := ConvertHCosetLagrange(ctx, &k, f.sys, nil, nil)
		require.ErrorIs(t, err, ErrShape, name)
		require.ErrorContains(t, err, c.want, name)
	}
	require.Equal(t, 256, n, "the messages above assume the fixture's domain")

	// The DFT's error, and a done context.
	boom := errors.New("device lost")
	_, err = ConvertHCosetLagrange(ctx, f.pk, f.sys, func(context.Context, []curve.G1Affine, bool, *DFTScale) error { return boom }, nil)
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "dft of 256 points")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ConvertHCosetLagrange(cancelled, f.pk, f.sys, nil, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// checkFitsCircuit compares a coset-Lagrange key's lengths with c.
func checkFitsCircuit(pk *ProvingKey, c *Circuit) error {
	if len(pk.H) != c.DomainSize() || len(pk.LInput) != c.NumInputs() || len(pk.L) != c.NumAux() {
		return errors.New("lengths do not fit")
	}
	return nil
}

// BenchmarkConvertHCosetLagrange converts a monomial key of the chain
// circuit for domains of 2^8, 2^10 and 2^12 points with the CPU DFT (the
// setup is outside the timer): go test -run XXX -bench ConvertHCoset
// -benchtime 1x ./pkg/groth16/
func BenchmarkConvertHCosetLagrange(b *testing.B) {
	ctx := context.Background()
	for _, k := range []int{8, 10, 12} {
		steps := 1<<k - (groth16test.ChainConstraints(0) + groth16test.ChainInputs + 1)
		b.Run(fmt.Sprintf("domain=2^%d", k), func(b *testing.B) {
			sys := groth16test.ChainSystem(steps, 3, 5, 7)
			pk, _, err := SetupR1CS(ctx, sys, SetupSeed([]byte("bench")))
			require.NoError(b, err)
			require.Len(b, pk.H, 1<<k-1)
			b.ResetTimer()
			for range b.N {
				if _, err := ConvertHCosetLagrange(ctx, pk, sys, CPUDFTG1, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/convert")
		})
	}
}
