package sha254

import (
	"bytes"
	"crypto/sha256"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/require"
)

func bytesToBits(msg []byte) []frontend.Variable {
	out := make([]frontend.Variable, 0, 8*len(msg))
	for _, b := range msg {
		for i := 7; i >= 0; i-- {
			out = append(out, int(b>>i)&1)
		}
	}
	return out
}

func fieldOf() *big.Int { return ecc.BLS12_381.ScalarField() }

func compile(t testing.TB, c frontend.Circuit) constraint.ConstraintSystem {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, c)
	require.NoError(t, err)
	return ccs
}

func solve(t testing.TB, ccs constraint.ConstraintSystem, assignment frontend.Circuit) error {
	t.Helper()
	w, err := frontend.NewWitness(assignment, ecc.BLS12_381.ScalarField())
	require.NoError(t, err)
	return ccs.IsSolved(w)
}

// shaCircuit asserts Circuit(Msg) == Digest bit by bit and
// DigestToField(Circuit(Msg)) == Elem.
type shaCircuit struct {
	Msg    []frontend.Variable
	Digest []frontend.Variable `gnark:",public"`
	Elem   frontend.Variable   `gnark:",public"`
}

func (c *shaCircuit) Define(api frontend.API) error {
	out := Circuit(api, c.Msg)
	for i := range out {
		api.AssertIsEqual(out[i], c.Digest[i])
	}
	api.AssertIsEqual(DigestToField(api, out), c.Elem)
	return nil
}

func shaAssignment(msg []byte, digest [32]byte) *shaCircuit {
	e := ToElement(digest)
	return &shaCircuit{Msg: bytesToBits(msg), Digest: bytesToBits(digest[:]), Elem: e.String()}
}

// TestCircuitMatchesNative compiles the gadget for each message length the
// PoRep circuit and the padding edge cases need (1 byte; 55 and 56 bytes,
// the one-block limit; 64; 119; 1248, a label preimage of 64 + 37·32 bytes),
// solves it with random messages against crypto/sha256, and checks a wrong
// digest bit, a wrong field element and a flipped message bit fail.
func TestCircuitMatchesNative(t *testing.T) {
	lengths := []int{1, 55, 56, 64, 119, 1248}
	if testing.Short() {
		lengths = []int{1, 55, 56, 64}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range lengths {
		ccs := compile(t, &shaCircuit{Msg: make([]frontend.Variable, 8*n), Digest: make([]frontend.Variable, 256)})
		require.Zero(t, commitments(ccs))
		t.Logf("%4d bytes: %d constraints", n, ccs.GetNbConstraints())

		msg := randomBytes(rng, n)
		d := sha256Sum(msg)
		require.NoErrorf(t, solve(t, ccs, shaAssignment(msg, d)), "%d bytes", n)

		k := rng.IntN(256)
		bad := shaAssignment(msg, d)
		bad.Digest[k] = 1 - bad.Digest[k].(int)
		require.Errorf(t, solve(t, ccs, bad), "%d bytes: flipped digest bit %d accepted", n, k)

		bad = shaAssignment(msg, d)
		e := ToElement(d)
		bad.Elem = new(big.Int).Add(e.BigInt(new(big.Int)), big.NewInt(1))
		require.Errorf(t, solve(t, ccs, bad), "%d bytes: wrong element accepted", n)

		bad = shaAssignment(msg, d)
		j := rng.IntN(8 * n)
		bad.Msg[j] = 1 - bad.Msg[j].(int)
		require.Errorf(t, solve(t, ccs, bad), "%d bytes: flipped message bit %d accepted", n, j)
	}
}

func sha256Sum(msg []byte) [32]byte { return sha256.Sum256(msg) }

func commitments(ccs constraint.ConstraintSystem) int {
	if c, ok := ccs.GetCommitments().(constraint.Groth16Commitments); ok {
		return len(c)
	}
	return 0
}

// TestCompileIsDeterministic: the proving key is made for one constraint
// system, so compiling the same circuit twice must give identical bytes.
func TestCompileIsDeterministic(t *testing.T) {
	c := &hash2Circuit{}
	var first []byte
	for range 2 {
		ccs := compile(t, c)
		var buf bytes.Buffer
		_, err := ccs.WriteTo(&buf)
		require.NoError(t, err)
		if first == nil {
			first = buf.Bytes()
			continue
		}
		require.True(t, bytes.Equal(first, buf.Bytes()), "two compilations differ")
	}
}
