package groth16

import (
	"context"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	gnarkgroth16 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// circuitOf describes sys (CircuitOf) and requires its densities to be
// the reference synthesis's, when sys has values.
func circuitOf(tb testing.TB, sys *r1cs.System) *Circuit {
	tb.Helper()
	c, err := CircuitOf(context.Background(), sys)
	require.NoError(tb, err)
	if in, _ := sys.Values(); in != nil {
		s, err := SynthesizeSystem(sys)
		require.NoError(tb, err)
		aAux, bIn, bAux := c.Densities()
		require.True(tb, (&Densities{aAux, bIn, bAux}).Equal(&Densities{s.ADensityAux, s.BDensityInput, s.BDensityAux}),
			"CircuitOf's densities differ from SynthesizeSystem's")
	}
	return c
}

// chainInstance synthesizes the chain of n steps for (x, w, q) with
// SynthesizeSystem and returns it with its public inputs (without ONE)
// from the plain-arithmetic oracle, which it requires the instance's
// inputs to equal.
func chainInstance(tb testing.TB, n int, x, w, q uint64) (*Synthesized, []fr.Element) {
	tb.Helper()
	sys := groth16test.ChainSystem(n, x, w, q)
	s, err := SynthesizeSystem(sys)
	require.NoError(tb, err)
	public := groth16test.ChainPublic(n, x, w, q)
	require.Equal(tb, public, s.Input[1:], "the System's inputs differ from the oracle's")
	return s, public
}

// fixture is a set-up test circuit (groth16test's chain) shared by the
// tests.
type fixture struct {
	n       int
	sys     *r1cs.System // the instance's, with values
	circuit *Circuit
	pk      *ProvingKey
	key     Key
	w       *Synthesized
	public  []fr.Element // without the leading one
}

var (
	fixtureOnce sync.Once
	theFixture  *fixture
)

const fixtureChain = 2000

func getFixture(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() {
		ctx := context.Background()
		f := &fixture{n: fixtureChain}
		f.sys = groth16test.ChainSystem(f.n, 3, 0xdeadbeefcafe, 7)
		require.NoError(t, f.sys.Satisfied())
		pk, d, err := SetupR1CS(ctx, f.sys, SetupSeed([]byte("fixture")))
		require.NoError(t, err)
		f.pk = pk
		f.circuit = circuitOf(t, f.sys)
		aAux, bIn, bAux := f.circuit.Densities()
		require.True(t, d.Equal(&Densities{aAux, bIn, bAux}), "CircuitOf's densities differ from the key's")
		f.key, err = NewCPUBackend().Load(ctx, pk)
		require.NoError(t, err)
		f.w, f.public = chainInstance(t, f.n, 3, 0xdeadbeefcafe, 7)
		theFixture = f
	})
	require.NotNil(t, theFixture, "fixture setup failed earlier")
	return theFixture
}

func fixedRandomness(r, s uint64) Randomness {
	var rnd Randomness
	rnd.R.SetUint64(r)
	rnd.S.SetUint64(s)
	return rnd
}

// gnarkVerify is the independent oracle: gnark's own Groth16 verifier
// (gnark/backend/groth16, which takes a verifying key, a proof and the
// public inputs: no circuit), with our verifying key converted to its type.
func gnarkVerify(vk *VerifyingKey, p *Proof, public []fr.Element) error {
	var gvk gnarkgroth16.VerifyingKey
	gvk.G1.Alpha = vk.AlphaG1
	gvk.G1.Beta = vk.BetaG1
	gvk.G1.Delta = vk.DeltaG1
	gvk.G1.K = vk.IC
	gvk.G2.Beta = vk.BetaG2
	gvk.G2.Gamma = vk.GammaG2
	gvk.G2.Delta = vk.DeltaG2
	if err := gvk.Precompute(); err != nil {
		return err
	}
	gp := gnarkgroth16.Proof{Ar: p.A, Bs: p.B, Krs: p.C}
	return gnarkgroth16.Verify(&gp, &gvk, public)
}
