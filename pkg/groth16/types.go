package groth16

import (
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Synthesized is one solved circuit instance, ready to prove.
//
// Following bellperson, every public input i adds the constraint
// input_i · 0 = 0 after the circuit's own NumConstraints constraints, so
// A, B and C have NumConstraints + len(Input) entries: entry j < NumConstraints
// is <A_j, z> (resp. B, C) for the full assignment z = Input ‖ Aux; entry
// NumConstraints + i is (Input[i], 0, 0).
//
// Input[0] is the constant one. The density bitmaps are circuit structure (the
// same for every instance of a circuit) and say which variables appear in the
// A and B queries; they must match the proving key's query lengths.
//
// A, B and C may have capacity beyond their length (the domain, when the
// input rows were appended in place) and what lies there is unspecified: a
// reused buffer (BufferPool) holds a previous instance's values there.
// Backends read A, B, C up to their length only and pad to the domain with
// zeros themselves.
type Synthesized struct {
	NumConstraints int

	A, B, C []fr.Element

	Input []fr.Element
	Aux   []fr.Element

	// ADensityAux has a bit per aux variable: set if it appears in some A_j.
	// (Every input appears in A through its input constraint.)
	ADensityAux Bitmap
	// BDensityInput and BDensityAux have a bit per input / aux variable: set
	// if it appears in some B_j.
	BDensityInput Bitmap
	BDensityAux   Bitmap

	// Codes, when not nil, are the value codes of A, B, C and Aux
	// (ValueCodes; the circuit's solver writes them into a Buffers set).
	// Whoever changes a value of a Synthesized with codes must change its
	// code too, or drop Codes: a backend may send a code in place of the
	// value it names.
	Codes *ValueCodes

	// buffers are the pooled buffers A, B, C, Input and Aux lie in, when
	// the instance was built in them (Circuit.SynthesizedBuffers); Release
	// gives them back.
	buffers *Buffers
}

// VerifyingKey is the Groth16 verifying key, in the field order of
// bellperson's .vk and .params files.
type VerifyingKey struct {
	AlphaG1 curve.G1Affine
	BetaG1  curve.G1Affine
	BetaG2  curve.G2Affine
	GammaG2 curve.G2Affine
	DeltaG1 curve.G1Affine
	DeltaG2 curve.G2Affine
	// IC has one point per public input, IC[0] for the constant one.
	IC []curve.G1Affine
}

// ProvingKey is the full parameter set of bellperson's .params layout.
type ProvingKey struct {
	VK VerifyingKey

	// H has domain−1 points: tau^i · Z(tau) / delta.
	H []curve.G1Affine
	// L has one point per aux variable.
	L []curve.G1Affine
	// A holds the A query of every input, then of the aux variables whose
	// ADensityAux bit is set.
	A []curve.G1Affine
	// BG1 and BG2 hold the B query of the inputs whose BDensityInput bit is
	// set, then of the aux variables whose BDensityAux bit is set.
	BG1 []curve.G1Affine
	BG2 []curve.G2Affine
}

// Proof is a Groth16 proof. Its wire form is 192 bytes: compressed A (48) ‖
// compressed B (96) ‖ compressed C (48), zcash encoding.
type Proof struct {
	A curve.G1Affine
	B curve.G2Affine
	C curve.G1Affine
}

// ProofSize is the length of an encoded proof.
const ProofSize = 192

// Randomness is the prover's blinding pair (r, s). Production code draws it
// from a CSPRNG (NewRandomness); tests fix it to get reproducible bytes.
type Randomness struct {
	R, S fr.Element
}
