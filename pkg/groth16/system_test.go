package groth16

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// small is a circuit written with pkg/r1cs whose variables take every
// place the setup rules distinguish: inputs in A only (through their
// input rows), in B (X, Z, ONE) and in C only (OUT); aux variables in A
// and B, in B only (e), in C only (d, f, g) and in A and C.
//
//	a · b = t1
//	t1 · X = s0
//	s_i · s_i = s_{i+1} − a        (i < chain)
//	a · a = d
//	a · e = f
//	t1 · Z = g
//	s_chain · ONE = OUT
type small struct {
	sys                      *r1cs.System
	public                   []fr.Element // X, OUT, Z: without ONE
	x, z, out                r1cs.Variable
	a, b, t1, d, e, f, g, sK r1cs.Variable
}

const smallChain = 25

// buildSmall synthesizes small for the values x, z (public), a, b, e
// (private). With broken set, t1's value is off by one (no longer a·b).
func buildSmall(x, z, a, b, e uint64, broken bool, opts ...r1cs.SystemOption) *small {
	el := func(v uint64) fr.Element { var f fr.Element; f.SetUint64(v); return f }
	s := &small{sys: r1cs.NewSystem(append([]r1cs.SystemOption{r1cs.WithValues()}, opts...)...)}
	cs := s.sys
	fx, fz, fa, fb, fe := el(x), el(z), el(a), el(b), el(e)
	var ft1, fs, fd, ff, fg, t fr.Element
	ft1.Mul(&fa, &fb)
	if broken {
		one := fr.One()
		ft1.Add(&ft1, &one)
	}
	fs.Mul(&ft1, &fx)
	for range smallChain {
		t.Square(&fs)
		fs.Add(&t, &fa)
	}
	fd.Square(&fa)
	ff.Mul(&fa, &fe)
	fg.Mul(&ft1, &fz)

	s.x = cs.AllocInput(r1cs.N("X"), fx)
	s.out = cs.AllocInput(r1cs.N("OUT"), fs)
	s.z = cs.AllocInput(r1cs.N("Z"), fz)
	s.public = []fr.Element{fx, fs, fz}
	s.a = cs.Alloc(r1cs.N("a"), fa)
	s.b = cs.Alloc(r1cs.N("b"), fb)
	s.e = cs.Alloc(r1cs.N("e"), fe)
	s.t1 = cs.Alloc(r1cs.N("t1"), ft1)
	enforce := func(a, b, c *r1cs.LC) { cs.Enforce(r1cs.N("c"), a, b, c) }
	lc := func(vs ...r1cs.Variable) *r1cs.LC {
		var l r1cs.LC
		for _, v := range vs {
			l.Add(v)
		}
		return &l
	}
	enforce(lc(s.a), lc(s.b), lc(s.t1))
	// Recompute the chain's values for the variables.
	var vs fr.Element
	vs.Mul(&ft1, &fx)
	si := cs.Alloc(r1cs.N("s0"), vs)
	enforce(lc(s.t1), lc(s.x), lc(si))
	for range smallChain {
		t.Square(&vs)
		vs.Add(&t, &fa)
		next := cs.Alloc(r1cs.N("s"), vs)
		enforce(lc(si), lc(si), lc(next).Sub(s.a))
		si = next
	}
	s.sK = si
	s.d = cs.Alloc(r1cs.N("d"), fd)
	enforce(lc(s.a), lc(s.a), lc(s.d))
	s.f = cs.Alloc(r1cs.N("f"), ff)
	enforce(lc(s.a), lc(s.e), lc(s.f))
	s.g = cs.Alloc(r1cs.N("g"), fg)
	enforce(lc(s.t1), lc(s.z), lc(s.g))
	enforce(lc(s.sK), lc(r1cs.One), lc(s.out))
	return s
}

var smallSeed = SetupSeed([]byte("small r1cs"))

// SetupR1CS on a pkg/r1cs circuit: the key's lengths are the density
// counts, the densities are the reference synthesis's, proofs by the
// CPU backend verify (our verifier and gnark's), also with the key
// written and read back, and in coset-Lagrange form (same proof bytes).
func TestSetupR1CSProves(t *testing.T) {
	ctx := context.Background()
	s := buildSmall(3, 5, 7, 11, 13, false)
	require.NoError(t, s.sys.Satisfied())
	pk, d, err := SetupR1CS(ctx, s.sys, smallSeed)
	require.NoError(t, err)
	require.NoError(t, CheckProvingKey(pk))
	nIn, nAux := s.sys.NumInputs(), s.sys.NumAux()
	require.Len(t, pk.VK.IC, nIn)
	require.Len(t, pk.L, nAux)
	require.Len(t, pk.H, domainSize(s.sys.NumConstraints()+nIn)-1)
	require.Len(t, pk.A, nIn+d.ADensityAux.Count())
	require.Len(t, pk.BG1, d.BDensityInput.Count()+d.BDensityAux.Count())
	require.Len(t, pk.BG2, len(pk.BG1))

	// The densities, by the variables' places in the circuit.
	for _, c := range []struct {
		v     r1cs.Variable
		a, b  bool
		where string
	}{
		{s.a, true, true, "A, B and C"}, {s.b, false, true, "B only"}, {s.e, false, true, "B only"},
		{s.t1, true, false, "A and C"}, {s.sK, true, false, "A and C"},
		{s.d, false, false, "C only"}, {s.f, false, false, "C only"}, {s.g, false, false, "C only"},
	} {
		require.Equal(t, c.a, d.ADensityAux.Get(c.v.Index()), "aux %d (%s) in A", c.v.Index(), c.where)
		require.Equal(t, c.b, d.BDensityAux.Get(c.v.Index()), "aux %d (%s) in B", c.v.Index(), c.where)
	}
	for _, c := range []struct {
		v r1cs.Variable
		b bool
	}{{r1cs.One, true}, {s.x, true}, {s.z, true}, {s.out, false}} {
		require.Equal(t, c.b, d.BDensityInput.Get(c.v.Index()), "input %d in B", c.v.Index())
	}

	w, err := SynthesizeSystem(s.sys)
	require.NoError(t, err)
	require.True(t, d.Equal(&Densities{w.ADensityAux, w.BDensityInput, w.BDensityAux}), "setup's densities differ from the synthesis's")

	key, err := NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	rnd := fixedRandomness(17, 19)
	proof, _, err := Prove(ctx, key, w, rnd)
	require.NoError(t, err)
	require.NoError(t, Verify(&pk.VK, proof, s.public))
	require.NoError(t, gnarkVerify(&pk.VK, proof, s.public))
	bad := append([]fr.Element(nil), s.public...)
	bad[1].SetUint64(1)
	require.ErrorIs(t, Verify(&pk.VK, proof, bad), ErrInvalidProof)

	// Through a .params file.
	path := filepath.Join(t.TempDir(), "small.params")
	require.NoError(t, WriteParamsFile(path, pk))
	back, err := ReadParams(path)
	require.NoError(t, err)
	require.Equal(t, pk.VK, back.VK)
	require.Equal(t, pk.H, back.H)
	require.Equal(t, pk.L, back.L)
	require.Equal(t, pk.A, back.A)
	require.Equal(t, pk.BG1, back.BG1)
	require.Equal(t, pk.BG2, back.BG2)
	bkey, err := NewCPUBackend().Load(ctx, back)
	require.NoError(t, err)
	p2, _, err := Prove(ctx, bkey, w, rnd)
	require.NoError(t, err)
	require.Equal(t, *proof, *p2)

	// Coset-Lagrange form: same toxic waste, same proof.
	lpk, ld, err := SetupR1CS(ctx, s.sys, smallSeed, SetupHForm(HCosetLagrange))
	require.NoError(t, err)
	require.True(t, d.Equal(ld))
	require.Equal(t, pk.VK, lpk.VK)
	lkey, err := NewCPUBackend().Load(ctx, lpk)
	require.NoError(t, err)
	p3, _, err := Prove(ctx, lkey, w, rnd)
	require.NoError(t, err)
	require.Equal(t, *proof, *p3)

	// Another instance (other public inputs) proves under the same key.
	s2 := buildSmall(4, 6, 8, 9, 10, false)
	w2, err := SynthesizeSystem(s2.sys)
	require.NoError(t, err)
	p4, _, err := Prove(ctx, key, w2, rnd)
	require.NoError(t, err)
	require.NoError(t, Verify(&pk.VK, p4, s2.public))
	require.ErrorIs(t, Verify(&pk.VK, p4, s.public), ErrInvalidProof)
}

// A witness that does not satisfy the constraints does not prove.
func TestSetupR1CSWrongWitness(t *testing.T) {
	ctx := context.Background()
	s := buildSmall(3, 5, 7, 11, 13, false)
	pk, _, err := SetupR1CS(ctx, s.sys, smallSeed)
	require.NoError(t, err)
	bad := buildSmall(3, 5, 7, 11, 13, true)
	var u *r1cs.Unsatisfied
	require.ErrorAs(t, bad.sys.Satisfied(), &u)
	require.Equal(t, 0, u.Index)
	w, err := SynthesizeSystem(bad.sys)
	require.NoError(t, err)
	for _, form := range []HForm{HMonomial, HCosetLagrange} {
		k := pk
		if form == HCosetLagrange {
			k, _, err = SetupR1CS(ctx, s.sys, smallSeed, SetupHForm(form))
			require.NoError(t, err)
		}
		key, err := NewCPUBackend().Load(ctx, k)
		require.NoError(t, err)
		_, _, err = Prove(ctx, key, w, fixedRandomness(1, 2))
		require.ErrorIs(t, err, ErrUnsatisfied, form)
	}
}

// The key's points against an independent evaluation of bellperson's
// formulas from the same toxic waste: the Lagrange basis as products
// over bellperson's domain, u, v, w from the System's rows plus the
// input rows, A and B filtered by non-zero evaluation.
func TestSetupR1CSPointsAreBellpersons(t *testing.T) {
	s := buildSmall(3, 5, 7, 11, 13, false)
	pk, _, err := SetupR1CS(context.Background(), s.sys, smallSeed)
	require.NoError(t, err)
	sys := s.sys
	m, nIn, nAux := sys.NumConstraints(), sys.NumInputs(), sys.NumAux()
	n := domainSize(m + nIn)
	tw, err := sampleToxicWaste([]byte("small r1cs"), uint64(n))
	require.NoError(t, err)

	// ω as bellperson's EvaluationDomain makes it: Fr's ROOT_OF_UNITY
	// (7^((r−1)/2^32), the constant of blstrs) squared 32 − log n times.
	var omega fr.Element
	_, err = omega.SetString("0x16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b")
	require.NoError(t, err)
	for k := n; k < 1<<32; k <<= 1 {
		omega.Square(&omega)
	}
	pts := make([]fr.Element, n)
	pts[0].SetOne()
	for i := 1; i < n; i++ {
		pts[i].Mul(&pts[i-1], &omega)
	}
	lagrange := func(j int) fr.Element {
		var num, den, t fr.Element
		num.SetOne()
		den.SetOne()
		for i := range n {
			if i == j {
				continue
			}
			t.Sub(&tw.tau, &pts[i])
			num.Mul(&num, &t)
			t.Sub(&pts[j], &pts[i])
			den.Mul(&den, &t)
		}
		den.Inverse(&den)
		return *num.Mul(&num, &den)
	}
	var uvw [3][]fr.Element
	for k := range uvw {
		uvw[k] = make([]fr.Element, nIn+nAux)
	}
	idx := func(v r1cs.Variable) int {
		if v.IsInput() {
			return v.Index()
		}
		return nIn + v.Index()
	}
	coeffs := sys.Coeffs()
	for j := range m {
		lj := lagrange(j)
		ra, rb, rc := sys.Row(j)
		for k, row := range [3][]r1cs.STerm{ra, rb, rc} {
			for _, x := range row {
				var t fr.Element
				t.Mul(&coeffs[x.K], &lj)
				uvw[k][idx(x.V)].Add(&uvw[k][idx(x.V)], &t)
			}
		}
	}
	for i := range nIn {
		lj := lagrange(m + i)
		uvw[0][i].Add(&uvw[0][i], &lj)
	}

	_, _, g1, g2 := curve.Generators()
	mul1 := func(s fr.Element) curve.G1Affine {
		var p curve.G1Affine
		return *p.ScalarMultiplication(&g1, s.BigInt(new(big.Int)))
	}
	mul2 := func(s fr.Element) curve.G2Affine {
		var p curve.G2Affine
		return *p.ScalarMultiplication(&g2, s.BigInt(new(big.Int)))
	}
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.gamma)
	deltaInv.Inverse(&tw.delta)
	var wantA, wantB1, wantIC, wantL []curve.G1Affine
	var wantB2 []curve.G2Affine
	for i := range nIn + nAux {
		u, v, w := uvw[0][i], uvw[1][i], uvw[2][i]
		if !u.IsZero() {
			wantA = append(wantA, mul1(u))
		}
		if !v.IsZero() {
			wantB1 = append(wantB1, mul1(v))
			wantB2 = append(wantB2, mul2(v))
		}
		var t, x fr.Element
		t.Mul(&tw.beta, &u)
		x.Mul(&tw.alpha, &v)
		t.Add(&t, &x).Add(&t, &w)
		if i < nIn {
			wantIC = append(wantIC, mul1(*t.Mul(&t, &gammaInv)))
		} else {
			wantL = append(wantL, mul1(*t.Mul(&t, &deltaInv)))
		}
	}
	require.Equal(t, wantA, pk.A)
	require.Equal(t, wantB1, pk.BG1)
	require.Equal(t, wantB2, pk.BG2)
	require.Equal(t, wantIC, pk.VK.IC)
	require.Equal(t, wantL, pk.L)
	var z, p fr.Element
	z.Exp(tw.tau, big.NewInt(int64(n)))
	z.Sub(&z, new(fr.Element).SetOne()).Mul(&z, &deltaInv)
	p.SetOne()
	require.Len(t, pk.H, n-1)
	for i := range n - 1 {
		var h fr.Element
		h.Mul(&p, &z)
		require.Equal(t, mul1(h), pk.H[i], "h[%d]", i)
		p.Mul(&p, &tw.tau)
	}
	require.Equal(t, mul1(tw.alpha), pk.VK.AlphaG1)
	require.Equal(t, mul2(tw.gamma), pk.VK.GammaG2)
	require.Equal(t, mul2(tw.delta), pk.VK.DeltaG2)
}

// Circuits bellperson's generator or prover cannot handle are refused,
// naming the variable.
func TestSetupR1CSRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("unconstrained aux", func(t *testing.T) {
		s := buildSmall(3, 5, 7, 11, 13, false)
		v := s.sys.Alloc(r1cs.N("loose"), fr.One())
		_, _, err := SetupR1CS(ctx, s.sys, smallSeed)
		require.ErrorIs(t, err, ErrUnconstrainedVariable)
		require.ErrorContains(t, err, fmt.Sprintf("aux %d ", v.Index()))
	})
	t.Run("aux whose A coefficient cancels", func(t *testing.T) {
		s := buildSmall(3, 5, 7, 11, 13, false)
		cs := s.sys
		// q = a·b, then (a + q − q)·ONE = a: q is a term of A with
		// coefficient 0, constrained through C. bellperson's prover skips
		// the zero term and its generator filters q's identity A point:
		// the key and the densities agree without q, and proofs verify.
		ab := *s.sys.Value(s.t1)
		q := cs.Alloc(r1cs.N("q"), ab)
		var a, b, c, a2, one, c2 r1cs.LC
		cs.Enforce(r1cs.N("q"), a.Add(s.a), b.Add(s.b), c.Add(q))
		cs.Enforce(r1cs.N("cancel"), a2.Add(s.a).Add(q).Sub(q), one.Add(r1cs.One), c2.Add(s.a))
		require.NoError(t, cs.Satisfied())
		w, err := SynthesizeSystem(cs)
		require.NoError(t, err)
		require.False(t, w.ADensityAux.Get(q.Index()))
		pk, d, err := SetupR1CS(ctx, cs, smallSeed)
		require.NoError(t, err)
		require.False(t, d.ADensityAux.Get(q.Index()))
		require.Len(t, pk.A, cs.NumInputs()+d.ADensityAux.Count())
		proveAndVerify(t, pk, w)
	})
	t.Run("input whose B coefficient cancels", func(t *testing.T) {
		s := buildSmall(3, 5, 7, 11, 13, false)
		cs := s.sys
		// a·(ONE + OUT − OUT) = a: OUT is in B with coefficient 0 only.
		var a, b, c r1cs.LC
		cs.Enforce(r1cs.N("cancel"), a.Add(s.a), b.Add(r1cs.One).Add(s.out).Sub(s.out), c.Add(s.a))
		require.NoError(t, cs.Satisfied())
		w, err := SynthesizeSystem(cs)
		require.NoError(t, err)
		require.False(t, w.BDensityInput.Get(s.out.Index()))
		pk, d, err := SetupR1CS(ctx, cs, smallSeed)
		require.NoError(t, err)
		require.False(t, d.BDensityInput.Get(s.out.Index()))
		proveAndVerify(t, pk, w)
	})
	t.Run("term outside the counts", func(t *testing.T) {
		s := buildSmall(3, 5, 7, 11, 13, false)
		_, _, err := SetupR1CS(ctx, fewerAux{s.sys}, smallSeed)
		require.ErrorContains(t, err, fmt.Sprintf("term of aux %d, the system has %d aux variables", s.sys.NumAux()-1, s.sys.NumAux()-1))
		_, _, err = SetupR1CS(ctx, fewerRows{s.sys}, smallSeed)
		require.ErrorContains(t, err, fmt.Sprintf("term of constraint %d, the system has %d", s.sys.NumConstraints()-1, s.sys.NumConstraints()-1))
	})
	t.Run("terms error and cancellation", func(t *testing.T) {
		s := buildSmall(3, 5, 7, 11, 13, false)
		boom := errors.New("replay failed")
		_, _, err := SetupR1CS(ctx, failingTerms{s.sys, boom}, smallSeed)
		require.ErrorIs(t, err, boom)
		require.ErrorContains(t, err, "matrix B")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err = SetupR1CS(cctx, s.sys, smallSeed)
		require.ErrorIs(t, err, context.Canceled)
		_, _, err = SetupR1CS(ctx, nil)
		require.Error(t, err)
	})
	t.Run("no values", func(t *testing.T) {
		_, err := SynthesizeSystem(r1cs.NewSystem())
		require.ErrorContains(t, err, "WithValues")
	})
}

type fewerAux struct{ *r1cs.System }

func (f fewerAux) NumAux() int { return f.System.NumAux() - 1 }

type fewerRows struct{ *r1cs.System }

func (f fewerRows) NumConstraints() int { return f.System.NumConstraints() - 1 }

type failingTerms struct {
	*r1cs.System
	err error
}

func (f failingTerms) Terms(m int, fn func(int, r1cs.Variable, *fr.Element) error) error {
	if m == MatrixB {
		return f.err
	}
	return f.System.Terms(m, fn)
}

// proveAndVerify proves w with pk on the CPU backend and verifies the
// proof against w's public inputs (without ONE).
func proveAndVerify(t *testing.T, pk *ProvingKey, w *Synthesized) {
	t.Helper()
	ctx := context.Background()
	key, err := NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	proof, _, err := Prove(ctx, key, w, fixedRandomness(23, 29))
	require.NoError(t, err)
	require.NoError(t, Verify(&pk.VK, proof, w.Input[1:]))
}
