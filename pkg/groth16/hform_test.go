package groth16

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// lagrangeKey is the fixture's circuit set up from the same seed with
// its H query in coset-Lagrange form.
func lagrangeKey(t *testing.T, f *fixture) (*ProvingKey, Key) {
	t.Helper()
	pk, _, err := SetupR1CS(context.Background(), f.sys, SetupSeed([]byte("fixture")), SetupHForm(HCosetLagrange))
	require.NoError(t, err)
	key, err := NewCPUBackend().Load(context.Background(), pk)
	require.NoError(t, err)
	return pk, key
}

// The two forms from one toxic waste prove the same proofs: the
// coset-Lagrange key's H sum carries κ·C(τ)/δ, which its L query and
// LInput take back out, so the proof bytes equal the monomial key's (the
// oracle: the monomial prover, itself checked against gnark's verifier).
func TestCosetLagrangeKeyProvesTheSameProofs(t *testing.T) {
	f := getFixture(t)
	pk, key := lagrangeKey(t, f)
	require.NoError(t, CheckProvingKey(pk))
	n := f.circuit.DomainSize()
	require.Equal(t, HCosetLagrange, pk.HForm)
	require.Len(t, pk.H, n)
	require.Equal(t, n, pk.DomainSize())
	require.Len(t, pk.LInput, len(pk.VK.IC))
	require.Equal(t, f.pk.VK, pk.VK, "the verifying key does not depend on the form")
	require.Equal(t, f.pk.A, pk.A)
	require.Equal(t, f.pk.BG2, pk.BG2)
	require.NotEqual(t, f.pk.L, pk.L, "L carries −κ·w/δ in coset-Lagrange form")
	nonZero := 0
	for i := range pk.LInput {
		if !pk.LInput[i].IsInfinity() {
			nonZero++
		}
	}
	require.Positive(t, nonZero, "some input must appear in C, or LInput goes untested")

	ctx := context.Background()
	for _, seed := range []struct{ x, w, q, r, s uint64 }{{3, 0xdeadbeefcafe, 7, 11, 13}, {5, 0x1234567, 9, 1 << 40, 77}} {
		w, pub := chainInstance(t, f.n, seed.x, seed.w, seed.q)
		rnd := fixedRandomness(seed.r, seed.s)
		want, _, err := Prove(ctx, f.key, w, rnd)
		require.NoError(t, err)
		w2, _ := chainInstance(t, f.n, seed.x, seed.w, seed.q)
		got, _, err := Prove(ctx, key, w2, rnd)
		require.NoError(t, err)
		require.Equal(t, *want, *got, "coset-Lagrange proof differs from the monomial one")
		require.NoError(t, gnarkVerify(&pk.VK, got, pub))
	}

	// Without LInput's share the proof no longer verifies.
	broken := *pk
	broken.LInput = slices.Clone(pk.LInput)
	for i := range broken.LInput {
		broken.LInput[i].Neg(&broken.LInput[i])
	}
	bkey, err := NewCPUBackend().Load(ctx, &broken)
	require.NoError(t, err)
	p, _, err := Prove(ctx, bkey, f.w, fixedRandomness(2, 3))
	require.NoError(t, err)
	require.Error(t, Verify(&pk.VK, p, f.public))
}

func TestCosetLagrangeKeyRefusals(t *testing.T) {
	f := getFixture(t)
	pk, key := lagrangeKey(t, f)
	ctx := context.Background()

	// A witness that does not satisfy the constraints: found on the domain.
	w := *f.w
	w.C = slices.Clone(w.C)
	w.C[5].SetUint64(99)
	_, _, err := Prove(ctx, key, &w, fixedRandomness(1, 1))
	require.ErrorIs(t, err, ErrUnsatisfied)
	require.ErrorContains(t, err, "row 5")

	// bellperson's layout cannot hold it.
	err = WriteParams(&bytes.Buffer{}, pk)
	require.ErrorIs(t, err, ErrShape)
	require.ErrorContains(t, err, "coset-lagrange")

	// Shapes: LInput one per input; none in monomial form; H a power of two.
	for name, mut := range map[string]func(k *ProvingKey){
		"short l_input":    func(k *ProvingKey) { k.LInput = k.LInput[1:] },
		"h of n − 1":       func(k *ProvingKey) { k.H = k.H[1:] },
		"monomial l_input": func(k *ProvingKey) { k.HForm = HMonomial; k.H = k.H[1:] },
		"unknown form":     func(k *ProvingKey) { k.HForm = 7 },
		"monomial h of n":  func(k *ProvingKey) { k.HForm = HMonomial; k.LInput = nil },
	} {
		k := *pk
		mut(&k)
		require.ErrorIs(t, CheckProvingKey(&k), ErrShape, name)
	}

	for _, f := range []HForm{HMonomial, HCosetLagrange} {
		back, err := ParseHForm(f.String())
		require.NoError(t, err)
		require.Equal(t, f, back)
	}
	_, err = ParseHForm("lagrange")
	require.ErrorContains(t, err, "unknown H form")
}
