package groth16

import (
	"context"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	gnarkgroth16 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

func compileChain(tb testing.TB, n int) *Circuit {
	tb.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &groth16test.Chain{N: n})
	require.NoError(tb, err)
	c, err := NewCircuit(ccs)
	require.NoError(tb, err)
	return c
}

func chainWitness(tb testing.TB, n int, x, w, q uint64) (full, public witness.Witness) {
	tb.Helper()
	full, err := frontend.NewWitness(groth16test.ChainAssignment(n, x, w, q), ecc.BLS12_381.ScalarField())
	require.NoError(tb, err)
	public, err = full.Public()
	require.NoError(tb, err)
	return full, public
}

// fixture is a compiled, set-up test circuit shared by the tests.
type fixture struct {
	n       int
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
		f := &fixture{n: fixtureChain}
		f.circuit = compileChain(t, f.n)
		pk, err := Setup(context.Background(), f.circuit, SetupSeed([]byte("fixture")))
		require.NoError(t, err)
		f.pk = pk
		f.key, err = NewCPUBackend().Load(context.Background(), pk)
		require.NoError(t, err)
		full, pub := chainWitness(t, f.n, 3, 0xdeadbeefcafe, 7)
		f.w, err = f.circuit.Solve(full)
		require.NoError(t, err)
		f.public = pub.Vector().(fr.Vector)
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

// gnarkVerify is the independent oracle: gnark's own Groth16 verifier, with
// our verifying key converted to its type.
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
