package poseidon

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
	"github.com/stretchr/testify/require"
)

// hashCircuit asserts HashCircuit(In) == Digest.
type hashCircuit struct {
	In     []frontend.Variable
	Digest frontend.Variable `gnark:",public"`
}

func (c *hashCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(HashCircuit(api, c.In), c.Digest)
	return nil
}

func compileHash(t *testing.T, arity int) constraint.ConstraintSystem {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &hashCircuit{In: make([]frontend.Variable, arity)})
	require.NoError(t, err)
	return ccs
}

func hashWitness(t *testing.T, in []fr.Element, digest fr.Element) *hashCircuit {
	t.Helper()
	w := &hashCircuit{In: make([]frontend.Variable, len(in)), Digest: digest.String()}
	for i := range in {
		w.In[i] = in[i].String()
	}
	return w
}

// TestCircuitMatchesNative compiles the gadget to R1CS for the arities PoRep
// uses (and the extremes), checks the constraint count, and solves it with
// random inputs and the native digest; a wrong digest must not solve.
func TestCircuitMatchesNative(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, arity := range []int{1, 2, 4, 8, 11, MaxArity} {
		ccs := compileHash(t, arity)
		want, err := CircuitConstraints(arity)
		require.NoError(t, err)
		// +1: the test circuit's own AssertIsEqual.
		require.Equalf(t, want+1, ccs.GetNbConstraints(), "arity %d", arity)
		require.Zero(t, commitments(ccs), "arity %d uses commitments", arity)
		t.Logf("arity %2d: %d constraints per hash", arity, want)

		for range 2 {
			in := randomElements(rng, arity)
			digest := Hash(in)
			w, err := frontend.NewWitness(hashWitness(t, in, digest), ecc.BLS12_381.ScalarField())
			require.NoError(t, err)
			require.NoErrorf(t, ccs.IsSolved(w), "arity %d", arity)

			var wrong fr.Element
			wrong.SetOne()
			wrong.Add(&wrong, &digest)
			w, err = frontend.NewWitness(hashWitness(t, in, wrong), ecc.BLS12_381.ScalarField())
			require.NoError(t, err)
			require.Errorf(t, ccs.IsSolved(w), "arity %d: wrong digest accepted", arity)
		}
	}
}

// TestCircuitTestEngine runs the gadget in gnark's test engine (a second,
// independent evaluation of the same constraints) against a neptune vector.
func TestCircuitTestEngine(t *testing.T) {
	in := counting(2)
	want := elemFromLimbs(t, [4]uint64{0x2e203c369a02e7ff, 0xa6fba9339d05a69d, 0x739e0fd902efe161, 0x396508d75e76a56b})
	err := test.IsSolved(&hashCircuit{In: make([]frontend.Variable, 2)}, hashWitness(t, in, want), ecc.BLS12_381.ScalarField())
	require.NoError(t, err)
}

// TestCircuitConstantInputs: constant inputs fold to a constant digest with
// no constraints.
func TestCircuitConstantInputs(t *testing.T) {
	want := Hash(counting(4))
	c := &constCircuit{Digest: 0}
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, c)
	require.NoError(t, err)
	require.Equal(t, 1, ccs.GetNbConstraints()) // only the equality with Digest
	w, err := frontend.NewWitness(&constCircuit{Digest: want.String()}, ecc.BLS12_381.ScalarField())
	require.NoError(t, err)
	require.NoError(t, ccs.IsSolved(w))
}

type constCircuit struct {
	Digest frontend.Variable `gnark:",public"`
}

func (c *constCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(HashCircuit(api, []frontend.Variable{0, 1, 2, 3}), c.Digest)
	return nil
}

func TestCircuitBadArity(t *testing.T) {
	_, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &hashCircuit{In: make([]frontend.Variable, MaxArity+1)})
	require.ErrorContains(t, err, "unsupported arity")
}

func commitments(ccs constraint.ConstraintSystem) int {
	if c, ok := ccs.GetCommitments().(constraint.Groth16Commitments); ok {
		return len(c)
	}
	return 0
}
