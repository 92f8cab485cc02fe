package groth16

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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
