package groth16

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
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
		other, err := Setup(context.Background(), f.circuit, SetupSeed([]byte("another ceremony")))
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
		full, pub := chainWitness(t, f.n, uint64(10+i), uint64(1000+i), uint64(i))
		w, err := f.circuit.Solve(full)
		require.NoError(t, err)
		rnd, err := NewRandomness()
		require.NoError(t, err)
		proofs[i], _, err = Prove(context.Background(), f.key, w, rnd)
		require.NoError(t, err)
		inputs[i] = pub.Vector().(fr.Vector)
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

	// The solver refuses a wrong witness.
	full, _ := chainWitness(t, f.n, 3, 5, 7)
	bad := groth16test.ChainAssignment(f.n, 3, 5, 7)
	bad.Y = 1
	badW, err := frontend.NewWitness(bad, ecc.BLS12_381.ScalarField())
	require.NoError(t, err)
	_, err = f.circuit.Solve(badW)
	require.Error(t, err)
	_, err = f.circuit.Solve(full)
	require.NoError(t, err)

	// Bad keys.
	_, err = NewCPUBackend().Load(ctx, &ProvingKey{H: make([]curve.G1Affine, 6)})
	require.ErrorIs(t, err, ErrShape)
	key, err := NewCPUBackend().Load(ctx, f.pk)
	require.NoError(t, err)
	require.NoError(t, key.Close())
	_, err = key.Prepare(ctx, f.w, rnd)
	require.Error(t, err)
}

type commitCircuit struct {
	X frontend.Variable `gnark:",public"`
	Y frontend.Variable
}

func (c *commitCircuit) Define(api frontend.API) error {
	cm, err := api.(frontend.Committer).Commit(c.Y)
	if err != nil {
		return err
	}
	api.AssertIsDifferent(cm, c.X)
	return nil
}

func TestCircuitWithCommitmentsRefused(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &commitCircuit{})
	require.NoError(t, err)
	_, err = NewCircuit(ccs)
	require.ErrorIs(t, err, ErrCommitments)
	// And a PLONK (sparse) system or another curve is not an R1CS here.
	ccs2, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &groth16test.Chain{N: 2})
	require.NoError(t, err)
	_, err = NewCircuit(ccs2)
	require.Error(t, err)
}

func TestCircuitLayout(t *testing.T) {
	c := compileChain(t, 10)
	r := c.R1CS()
	require.Equal(t, r.GetNbPublicVariables(), c.NumInputs())
	require.Equal(t, 4, c.NumInputs()) // one, X, Y, Q
	require.Equal(t, r.GetNbSecretVariables()+r.GetNbInternalVariables(), c.NumAux())
	require.Equal(t, domainSize(c.NumConstraints()+c.NumInputs()), c.DomainSize())
	full, _ := chainWitness(t, 10, 2, 3, 4)
	w, err := c.Solve(full)
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
	// Every constraint row satisfies a·b = c.
	for j := 0; j < c.NumConstraints(); j++ {
		var ab fr.Element
		ab.Mul(&w.A[j], &w.B[j])
		require.True(t, ab.Equal(&w.C[j]), "row %d", j)
	}
	// The 64 bits of W are boolean wires: they appear in A and B.
	aAux, bIn, bAux := c.Densities()
	require.GreaterOrEqual(t, aAux.Count(), 64)
	require.GreaterOrEqual(t, bAux.Count(), 64)
	require.True(t, bIn.Get(0), "the constant one appears in B")
	require.Less(t, aAux.Count(), c.NumAux()+1)
}

func BenchmarkVerify(b *testing.B) {
	c := compileChain(b, 10)
	pk, err := Setup(context.Background(), c, SetupSeed([]byte("bench")))
	require.NoError(b, err)
	key, err := NewCPUBackend().Load(context.Background(), pk)
	require.NoError(b, err)
	full, pub := chainWitness(b, 10, 2, 3, 4)
	w, err := c.Solve(full)
	require.NoError(b, err)
	p, _, err := Prove(context.Background(), key, w, fixedRandomness(3, 4))
	require.NoError(b, err)
	inputs := []fr.Element(pub.Vector().(fr.Vector))
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

// NewCircuit's parallel scan (ranges of 2^16 instructions) gives the same
// densities as a sequential walk with gnark's own iterator, and a term
// outside the wires is reported with its constraint's index, here in the
// third range.
func TestNewCircuitScan(t *testing.T) {
	const n = 150_000 // > 2 ranges of instructions
	c := compileChain(t, n)
	r := c.R1CS()
	require.Greater(t, len(r.Instructions), 2<<16)
	aAux, bIn, bAux := NewBitmap(c.NumAux()), NewBitmap(c.NumInputs()), NewBitmap(c.NumAux())
	it := r.GetR1CIterator()
	for rc := it.Next(); rc != nil; rc = it.Next() {
		for _, t := range rc.L {
			if w := t.WireID(); t.CoeffID() != constraint.CoeffIdZero && w >= c.NumInputs() {
				aAux.Set(w - c.NumInputs())
			}
		}
		for _, t := range rc.R {
			if t.CoeffID() == constraint.CoeffIdZero {
				continue
			}
			if w := t.WireID(); w < c.NumInputs() {
				bIn.Set(w)
			} else {
				bAux.Set(w - c.NumInputs())
			}
		}
	}
	gotA, gotBIn, gotBAux := c.Densities()
	require.Equal(t, aAux, gotA)
	require.Equal(t, bIn, gotBIn)
	require.Equal(t, bAux, gotBAux)
	require.Positive(t, gotA.Count())

	k := 2<<16 + 123 // an instruction in the third range
	inst := r.Instructions[k]
	_, isR1C := r.Blueprints[inst.BlueprintID].(constraint.BlueprintR1C)
	require.True(t, isR1C)
	cd := r.CallData[inst.StartCallData:]
	require.Positive(t, cd[1], "the constraint has an L term")
	saved := cd[5]
	cd[5] = uint32(c.NumInputs() + c.NumAux() + 7) // L's first wire
	_, err := NewCircuit(r)
	cd[5] = saved
	require.ErrorContains(t, err, fmt.Sprintf("constraint %d: term with wire %d outside the %d wires",
		inst.ConstraintOffset, c.NumInputs()+c.NumAux()+7, c.NumInputs()+c.NumAux()))
}
