package groth16

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func TestRoundTripAndGnarkOracle(t *testing.T) {
	f := getFixture(t)
	require.Equal(t, f.circuit.NumInputs(), len(f.pk.VK.IC))
	require.Equal(t, f.circuit.NumAux(), len(f.pk.L))
	require.Equal(t, f.circuit.DomainSize()-1, len(f.pk.H))

	rnd, err := NewRandomness()
	require.NoError(t, err)
	proof, tm, err := Prove(context.Background(), f.key, f.w, rnd)
	require.NoError(t, err)
	require.Positive(t, tm.Compute)

	require.NoError(t, Verify(&f.pk.VK, proof, f.public))
	pvk, err := PrepareVerifyingKey(&f.pk.VK)
	require.NoError(t, err)
	require.NoError(t, pvk.Verify(proof, f.public))
	require.NoError(t, gnarkVerify(&f.pk.VK, proof, f.public), "gnark's verifier rejects our proof")

	// Through the wire encoding.
	b, err := proof.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, ProofSize)
	var back Proof
	require.NoError(t, back.UnmarshalBinary(b))
	require.Equal(t, *proof, back)
}

func TestProofRejections(t *testing.T) {
	f := getFixture(t)
	proof, _, err := Prove(context.Background(), f.key, f.w, fixedRandomness(11, 13))
	require.NoError(t, err)
	good, err := proof.MarshalBinary()
	require.NoError(t, err)
	pvk, err := PrepareVerifyingKey(&f.pk.VK)
	require.NoError(t, err)

	t.Run("every-bit-flip", func(t *testing.T) {
		for bit := 0; bit < ProofSize*8; bit++ {
			b := bytes.Clone(good)
			b[bit/8] ^= 1 << (bit % 8)
			var p Proof
			if err := p.UnmarshalBinary(b); err != nil {
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				continue
			}
			require.ErrorIs(t, pvk.Verify(&p, f.public), ErrInvalidProof, "bit %d", bit)
		}
	})
	t.Run("wrong-public-input", func(t *testing.T) {
		for i := range f.public {
			pub := slices.Clone(f.public)
			pub[i].SetUint64(12345)
			require.ErrorIs(t, Verify(&f.pk.VK, proof, pub), ErrInvalidProof)
			require.ErrorIs(t, pvk.Verify(proof, pub), ErrInvalidProof)
			require.Error(t, gnarkVerify(&f.pk.VK, proof, pub))
		}
		require.ErrorIs(t, Verify(&f.pk.VK, proof, f.public[1:]), ErrShape)
		require.ErrorIs(t, pvk.Verify(proof, append(slices.Clone(f.public), fr.One())), ErrShape)
	})
	t.Run("other-vk", func(t *testing.T) {
		other, _, err := SetupR1CS(context.Background(), f.sys, SetupSeed([]byte("another ceremony")))
		require.NoError(t, err)
		require.ErrorIs(t, Verify(&other.VK, proof, f.public), ErrInvalidProof)
		require.Error(t, gnarkVerify(&other.VK, proof, f.public))
	})
	t.Run("encodings", func(t *testing.T) {
		cases := []struct {
			name string
			mut  func(b []byte)
			want error
		}{
			{"short", nil, ErrTruncated},
			{"long", nil, ErrTrailingData},
			{"A uncompressed flag", func(b []byte) { b[0] &^= 0x80 }, ErrBadFlags},
			{"B uncompressed flag", func(b []byte) { b[48] &^= 0x80 }, ErrBadFlags},
			{"C infinity", func(b []byte) { clear(b[144:]); b[144] = 0xc0 }, ErrInfinity},
			{"A infinity with sort bit", func(b []byte) { clear(b[:48]); b[0] = 0xe0 }, ErrBadFlags},
			{"A x ≥ p", func(b []byte) {
				b[0] |= 0x1f
				for i := 1; i < 48; i++ {
					b[i] = 0xff
				}
			}, ErrNonCanonical},
			{"B x.c0 ≥ p", func(b []byte) {
				b[96] = 0x1f
				for i := 97; i < 144; i++ {
					b[i] = 0xff
				}
			}, ErrNonCanonical},
			{"C not in subgroup", func(b []byte) {
				var x, y fp.Element
				p := offSubgroupG1(t)
				x.SetBytes(p[:48])
				y.SetBytes(p[48:])
				q := curve.G1Affine{X: x, Y: y}
				c := q.Bytes()
				copy(b[144:], c[:])
			}, ErrNotInSubgroup},
			{"B not in subgroup", func(b []byte) {
				p := offSubgroupG2(t)
				var q curve.G2Affine
				dec := curve.NewDecoder(bytes.NewReader(p[:]), curve.NoSubgroupChecks())
				require.NoError(t, dec.Decode(&q))
				c := q.Bytes()
				copy(b[48:], c[:])
			}, ErrNotInSubgroup},
		}
		for _, c := range cases {
			b := bytes.Clone(good)
			switch c.name {
			case "short":
				b = b[:191]
			case "long":
				b = append(b, 0)
			default:
				c.mut(b)
			}
			var p Proof
			err := p.UnmarshalBinary(b)
			require.ErrorIs(t, err, c.want, c.name)
		}
		// An x with no curve point: find one by scanning.
		for i := 0; i < 100; i++ {
			b := bytes.Clone(good)
			b[47] ^= byte(i + 1)
			var p Proof
			err := p.UnmarshalBinary(b)
			if errors.Is(err, ErrNotOnCurve) {
				return
			}
		}
		t.Fatal("no off-curve x found in 100 tries")
	})
	t.Run("split-join", func(t *testing.T) {
		p2, _, err := Prove(context.Background(), f.key, f.w, fixedRandomness(5, 6))
		require.NoError(t, err)
		joined, err := JoinProofs([]*Proof{proof, p2})
		require.NoError(t, err)
		require.Len(t, joined, 2*ProofSize)
		split, err := SplitProofs(joined)
		require.NoError(t, err)
		require.Equal(t, []*Proof{proof, p2}, split)
		bad := bytes.Clone(joined)
		bad[ProofSize] &^= 0x80
		_, err = SplitProofs(bad)
		require.ErrorIs(t, err, ErrBadFlags)
		require.ErrorContains(t, err, "partition proof 1")
		_, err = SplitProofs(joined[:300])
		require.ErrorIs(t, err, ErrTruncated)
		_, err = SplitProofs(nil)
		require.ErrorIs(t, err, ErrTruncated)
	})
}

func TestDeterministicAcrossRunsAndGOMAXPROCS(t *testing.T) {
	f := getFixture(t)
	rnd := fixedRandomness(0x1234, 0x5678)
	var want []byte
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	for _, procs := range []int{1, 2, 4, 3} {
		runtime.GOMAXPROCS(procs)
		key, err := NewCPUBackend().Load(context.Background(), f.pk)
		require.NoError(t, err)
		p, _, err := Prove(context.Background(), key, f.w, rnd)
		require.NoError(t, err)
		b, err := p.MarshalBinary()
		require.NoError(t, err)
		if want == nil {
			want = b
			require.NoError(t, Verify(&f.pk.VK, p, f.public))
		}
		require.Equal(t, want, b, "GOMAXPROCS=%d", procs)
	}
	// Different randomness, different bytes, still valid.
	p, _, err := Prove(context.Background(), f.key, f.w, fixedRandomness(1, 2))
	require.NoError(t, err)
	b, err := p.MarshalBinary()
	require.NoError(t, err)
	require.NotEqual(t, want, b)
	require.NoError(t, Verify(&f.pk.VK, p, f.public))
}

func TestBatchVerify(t *testing.T) {
	f := getFixture(t)
	pvk, err := PrepareVerifyingKey(&f.pk.VK)
	require.NoError(t, err)
	const n = 4
	proofs := make([]*Proof, n)
	inputs := make([][]fr.Element, n)
	for i := range proofs {
		// Different witnesses: different public inputs.
		w, pub := chainInstance(t, f.n, uint64(10+i), uint64(1000+i), uint64(i))
		rnd, err := NewRandomness()
		require.NoError(t, err)
		proofs[i], _, err = Prove(context.Background(), f.key, w, rnd)
		require.NoError(t, err)
		inputs[i] = pub
		require.NoError(t, gnarkVerify(&f.pk.VK, proofs[i], inputs[i]))
	}
	require.NoError(t, pvk.VerifyBatch(proofs, inputs))
	require.NoError(t, pvk.VerifyBatch(proofs[:1], inputs[:1]))

	// Swapped inputs: proofs 1 and 2 are each valid but not for these inputs.
	swapped := slices.Clone(inputs)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	err = pvk.VerifyBatch(proofs, swapped)
	require.ErrorIs(t, err, ErrInvalidProof)
	var ipe *InvalidProofsError
	require.ErrorAs(t, err, &ipe)
	require.Equal(t, []int{1, 2}, ipe.Indexes)

	// A tampered proof (C replaced by A, still a valid point).
	bad := slices.Clone(proofs)
	q := *bad[3]
	q.C = q.A
	bad[3] = &q
	err = pvk.VerifyBatch(bad, inputs)
	require.ErrorAs(t, err, &ipe)
	require.Equal(t, []int{3}, ipe.Indexes)

	require.ErrorIs(t, pvk.VerifyBatch(proofs, inputs[:3]), ErrShape)
	require.ErrorIs(t, pvk.VerifyBatch(nil, nil), ErrShape)
}

func TestProverRejectsBadInput(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	rnd := fixedRandomness(1, 1)
	mut := func(m func(w *Synthesized)) *Synthesized {
		w := *f.w
		m(&w)
		return &w
	}
	cases := map[string]*Synthesized{
		"nil":          nil,
		"short aux":    mut(func(w *Synthesized) { w.Aux = w.Aux[1:] }),
		"short input":  mut(func(w *Synthesized) { w.Input = w.Input[1:] }),
		"short a":      mut(func(w *Synthesized) { w.A = w.A[1:] }),
		"bad density":  mut(func(w *Synthesized) { w.ADensityAux = NewBitmap(len(w.Aux)) }),
		"bad b bitmap": mut(func(w *Synthesized) { w.BDensityInput = NewBitmap(3) }),
		"bit beyond len": mut(func(w *Synthesized) {
			// Move the last set bit of the B aux density past Len: same
			// count, but it would select a variable that does not exist.
			d := Bitmap{Len: w.BDensityAux.Len, Words: slices.Clone(w.BDensityAux.Words)}
			last := -1
			for i := 0; i < d.Len; i++ {
				if d.Get(i) {
					last = i
				}
			}
			require.GreaterOrEqual(t, last, 0)
			d.Words[last>>6] &^= 1 << (uint(last) & 63)
			d.Words[len(d.Words)-1] |= 1 << 63
			require.NotZero(t, d.Len%64, "the test needs a partial last word")
			w.BDensityAux = d
		}),
	}
	for name, w := range cases {
		_, _, err := Prove(ctx, f.key, w, rnd)
		require.ErrorIs(t, err, ErrShape, name)
	}
	// A witness that does not satisfy the constraints.
	w := mut(func(w *Synthesized) {
		w.C = slices.Clone(w.C)
		w.C[5].SetUint64(99)
	})
	_, _, err := Prove(ctx, f.key, w, rnd)
	require.ErrorIs(t, err, ErrUnsatisfied)

	// Cancellation before and between stages.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = Prove(cctx, f.key, f.w, rnd)
	require.ErrorIs(t, err, context.Canceled)
	task, err := f.key.Prepare(ctx, f.w, rnd)
	require.NoError(t, err)
	require.ErrorIs(t, task.Compute(cctx), context.Canceled)
	_, err = task.Finish(ctx)
	require.Error(t, err, "Finish before a successful Compute")
	task.Release()
	task.Release()
	require.Error(t, task.Compute(ctx))

	// A wrong assignment (Y off by one): the System names the failing
	// constraint, the last step, and the prover refuses its instance; the
	// honest one of the same values proves.
	badSys := groth16test.Chain{N: f.n, X: 3, W: 5, Q: 7, Corrupt: true}.System()
	var u *r1cs.Unsatisfied
	require.ErrorAs(t, badSys.Satisfied(), &u)
	require.Equal(t, groth16test.ChainConstraints(f.n)-3, u.Index)
	badW, err := SynthesizeSystem(badSys)
	require.NoError(t, err)
	_, _, err = Prove(ctx, f.key, badW, rnd)
	require.ErrorIs(t, err, ErrUnsatisfied)
	goodW, public := chainInstance(t, f.n, 3, 5, 7)
	p, _, err := Prove(ctx, f.key, goodW, rnd)
	require.NoError(t, err)
	require.NoError(t, Verify(&f.pk.VK, p, public))

	// Bad keys.
	_, err = NewCPUBackend().Load(ctx, &ProvingKey{H: make([]curve.G1Affine, 6)})
	require.ErrorIs(t, err, ErrShape)
	key, err := NewCPUBackend().Load(ctx, f.pk)
	require.NoError(t, err)
	require.NoError(t, key.Close())
	_, err = key.Prepare(ctx, f.w, rnd)
	require.Error(t, err)
}

// NewCircuit refuses counts and densities that describe no circuit.
func TestNewCircuitRefusals(t *testing.T) {
	d := func(nIn, nAux int) Densities {
		return Densities{ADensityAux: NewBitmap(nAux), BDensityInput: NewBitmap(nIn), BDensityAux: NewBitmap(nAux)}
	}
	c, err := NewCircuit(10, 4, 70, d(4, 70))
	require.NoError(t, err)
	require.Equal(t, 10, c.NumConstraints())
	require.Equal(t, 4, c.NumInputs())
	require.Equal(t, 70, c.NumAux())
	require.Equal(t, 16, c.DomainSize())
	overflow := d(4, 70)
	overflow.BDensityAux.Words[1] |= 1 << 63 // a bit past Len
	for name, tc := range map[string]struct {
		m, in, aux int
		d          Densities
		want       string
	}{
		"negative constraints": {-1, 4, 70, d(4, 70), "circuit of -1 constraints"},
		"no ONE":               {10, 0, 70, d(0, 70), "ONE is input 0"},
		"negative aux":         {10, 4, -1, d(4, 0), "circuit of 10 constraints"},
		"short A density":      {10, 4, 70, Densities{NewBitmap(69), NewBitmap(4), NewBitmap(70)}, "A density of 69 bits for 70 aux"},
		"long B input density": {10, 4, 70, Densities{NewBitmap(70), NewBitmap(5), NewBitmap(70)}, "B density of 5 bits for 4 inputs"},
		"short B aux density":  {10, 4, 70, Densities{NewBitmap(70), NewBitmap(4), NewBitmap(7)}, "B density of 7 bits for 70 aux"},
		"bit past the length":  {10, 4, 70, overflow, "B density of 70 bits for 70 aux"},
		"words missing":        {10, 4, 70, Densities{Bitmap{Len: 70}, NewBitmap(4), NewBitmap(70)}, "A density of 70 bits"},
	} {
		_, err := NewCircuit(tc.m, tc.in, tc.aux, tc.d)
		require.ErrorContains(t, err, tc.want, name)
	}
}

// A Circuit's counts are its System's, and Synthesized wraps a solution
// (wires inputs ‖ aux, and the constraints' A, B, C evaluations) into
// the instance SynthesizeSystem makes: the input rows (input_i, 0, 0)
// appended, every constraint row satisfied, the circuit's densities.
func TestCircuitLayout(t *testing.T) {
	sys := groth16test.ChainSystem(10, 2, 3, 4)
	c := circuitOf(t, sys)
	require.Equal(t, 4, c.NumInputs()) // one, X, Y, Q
	require.Equal(t, sys.NumInputs(), c.NumInputs())
	require.Equal(t, groth16test.ChainAux(10), c.NumAux())
	require.Equal(t, sys.NumAux(), c.NumAux())
	require.Equal(t, groth16test.ChainConstraints(10), c.NumConstraints())
	require.Equal(t, domainSize(c.NumConstraints()+c.NumInputs()), c.DomainSize())
	require.Equal(t, 128, c.DomainSize())
	w, err := SynthesizeSystem(sys)
	require.NoError(t, err)
	require.Len(t, w.A, c.NumConstraints()+c.NumInputs())
	one := fr.One()
	require.True(t, w.Input[0].Equal(&one), "Input[0] is the constant one")
	// Input rows: (input_i, 0, 0).
	for i := range w.Input {
		row := c.NumConstraints() + i
		require.True(t, w.A[row].Equal(&w.Input[i]))
		require.True(t, w.B[row].IsZero())
		require.True(t, w.C[row].IsZero())
	}
	// Every constraint row satisfies a·b = c, and is the System's row.
	for j := 0; j < c.NumConstraints(); j++ {
		var ab fr.Element
		ab.Mul(&w.A[j], &w.B[j])
		require.True(t, ab.Equal(&w.C[j]), "row %d", j)
		ra, rb, rc := sys.Row(j)
		for k, v := range [3][]r1cs.STerm{ra, rb, rc} {
			want := sys.Eval(v)
			require.Equal(t, want, [3][]fr.Element{w.A, w.B, w.C}[k][j], "row %d, matrix %d", j, k)
		}
	}
	// The 64 bits of W are boolean variables: they appear in A and B.
	aAux, bIn, bAux := c.Densities()
	require.GreaterOrEqual(t, aAux.Count(), 64)
	require.GreaterOrEqual(t, bAux.Count(), 64)
	require.Less(t, aAux.Count(), c.NumAux(), "P is in C only")
	require.Less(t, bAux.Count(), c.NumAux(), "P is in C only")
	require.True(t, bIn.Get(0), "the constant one appears in B")
	require.False(t, bIn.Get(2), "Y is in no B")

	// Synthesized over the same values, in buffers of the domain's
	// capacity (in place) and of none (copied).
	inputs, aux := sys.Values()
	nc := c.NumConstraints()
	for _, capacity := range []int{c.DomainSize(), nc} {
		wires := append(slices.Clone(inputs), aux...)
		a, b, cv := make([]fr.Element, nc, capacity), make([]fr.Element, nc, capacity), make([]fr.Element, nc, capacity)
		copy(a, w.A)
		copy(b, w.B)
		copy(cv, w.C)
		s, err := c.Synthesized(wires, a, b, cv)
		require.NoError(t, err)
		require.Equal(t, w.A, s.A)
		require.Equal(t, w.B, s.B)
		require.Equal(t, w.C, s.C)
		require.Equal(t, w.Input, s.Input)
		require.Equal(t, w.Aux, s.Aux)
		require.Equal(t, w.ADensityAux, s.ADensityAux)
		require.Equal(t, w.BDensityInput, s.BDensityInput)
		require.Equal(t, w.BDensityAux, s.BDensityAux)
		require.Equal(t, capacity == c.DomainSize(), &a[0] == &s.A[0], "in place when the capacity allows")
		require.Same(t, &wires[0], &s.Input[0], "Input aliases the wires")
	}
	_, err = c.Synthesized(make([]fr.Element, 3), w.A[:nc], w.B[:nc], w.C[:nc])
	require.ErrorContains(t, err, "solution of 3 wires")
	_, err = c.Synthesized(append(slices.Clone(inputs), aux...), w.A[:nc-1], w.B[:nc], w.C[:nc])
	require.Error(t, err)
}

func BenchmarkVerify(b *testing.B) {
	pk, _, err := SetupR1CS(context.Background(), groth16test.ChainSystem(10, 2, 3, 4), SetupSeed([]byte("bench")))
	require.NoError(b, err)
	key, err := NewCPUBackend().Load(context.Background(), pk)
	require.NoError(b, err)
	w, inputs := chainInstance(b, 10, 2, 3, 4)
	p, _, err := Prove(context.Background(), key, w, fixedRandomness(3, 4))
	require.NoError(b, err)
	pvk, err := PrepareVerifyingKey(&pk.VK)
	require.NoError(b, err)
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, Verify(&pk.VK, p, inputs))
		}
	})
	b.Run("prepared", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, pvk.Verify(p, inputs))
		}
	})
	b.Run("batch10", func(b *testing.B) {
		ps := make([]*Proof, 10)
		ins := make([][]fr.Element, 10)
		for i := range ps {
			ps[i], ins[i] = p, inputs
		}
		for b.Loop() {
			require.NoError(b, pvk.VerifyBatch(ps, ins))
		}
	})
}

// CircuitOf's densities are those of an independent walk over the
// System's rows (a variable with a non-zero coefficient in some A or B
// combination); a term outside the counts is an error naming the matrix
// and the constraint, and a done context stops it.
func TestCircuitOf(t *testing.T) {
	ctx := context.Background()
	s := buildSmall(3, 5, 7, 11, 13, false)
	sys := s.sys
	// bellpepper keeps terms whose coefficient sums to zero; they are not
	// in the densities: q = a·b in A with coefficient 0 only, OUT in B
	// likewise.
	q := sys.Alloc(r1cs.N("q"), *sys.Value(s.t1))
	var a, b, c, a2, one, c2, a3, b3, c3 r1cs.LC
	sys.Enforce(r1cs.N("q"), a.Add(s.a), b.Add(s.b), c.Add(q))
	sys.Enforce(r1cs.N("cancel A"), a2.Add(s.a).Add(q).Sub(q), one.Add(r1cs.One), c2.Add(s.a))
	sys.Enforce(r1cs.N("cancel B"), a3.Add(s.a), b3.Add(r1cs.One).Add(s.out).Sub(s.out), c3.Add(s.a))
	require.NoError(t, sys.Satisfied())
	for _, sys := range []*r1cs.System{sys, groth16test.ChainSystem(300, 1, 2, 3)} {
		nIn, nAux := sys.NumInputs(), sys.NumAux()
		aAux, bIn, bAux := NewBitmap(nAux), NewBitmap(nIn), NewBitmap(nAux)
		coeffs := sys.Coeffs()
		for j := range sys.NumConstraints() {
			ra, rb, _ := sys.Row(j)
			for _, x := range ra {
				if !x.V.IsInput() && !coeffs[x.K].IsZero() {
					aAux.Set(x.V.Index())
				}
			}
			for _, x := range rb {
				switch {
				case coeffs[x.K].IsZero():
				case x.V.IsInput():
					bIn.Set(x.V.Index())
				default:
					bAux.Set(x.V.Index())
				}
			}
		}
		c, err := CircuitOf(ctx, sys)
		require.NoError(t, err)
		gotA, gotBIn, gotBAux := c.Densities()
		require.Equal(t, aAux, gotA)
		require.Equal(t, bIn, gotBIn)
		require.Equal(t, bAux, gotBAux)
		require.Positive(t, gotA.Count())
		require.Less(t, gotA.Count(), nAux)
		require.Less(t, gotBAux.Count(), nAux)
		require.Equal(t, sys.NumConstraints(), c.NumConstraints())
		_, d, err := SetupR1CS(ctx, sys, SetupSeed([]byte("circuit of")))
		require.NoError(t, err)
		require.True(t, d.Equal(&Densities{gotA, gotBIn, gotBAux}), "CircuitOf's densities differ from SetupR1CS's")
	}
	sc, err := CircuitOf(ctx, sys)
	require.NoError(t, err)
	aAux, bIn, _ := sc.Densities()
	require.False(t, aAux.Get(q.Index()), "a zero A term is not in the density")
	require.False(t, bIn.Get(s.out.Index()), "a zero B term is not in the density")

	// Terms outside the counts: the chain's x_{n−1} (the last aux but P)
	// is first in A at the last step; Q (input 3) at Q·W.
	const n = 20
	chain := groth16test.ChainSystem(n, 1, 2, 3)
	_, err = CircuitOf(ctx, fewerAuxBy{chain, 2})
	require.ErrorContains(t, err, fmt.Sprintf("matrix A: constraint %d: term of aux %d, the system has %d aux variables",
		64+n, chain.NumAux()-2, chain.NumAux()-2))
	_, err = CircuitOf(ctx, fewerInputs{chain})
	require.ErrorContains(t, err, fmt.Sprintf("matrix A: constraint %d: term of input 3, the system has 3 inputs", 65+n))

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = CircuitOf(cctx, chain)
	require.ErrorIs(t, err, context.Canceled)
	_, err = CircuitOf(ctx, noInputs{chain})
	require.ErrorContains(t, err, "ONE is input 0")
}

type fewerAuxBy struct {
	*r1cs.System
	k int
}

func (f fewerAuxBy) NumAux() int { return f.System.NumAux() - f.k }

type fewerInputs struct{ *r1cs.System }

func (f fewerInputs) NumInputs() int { return f.System.NumInputs() - 1 }

type noInputs struct{ *r1cs.System }

func (noInputs) NumInputs() int { return 0 }
