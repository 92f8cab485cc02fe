package groth16

import (
	"fmt"

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

// HForm names what a proving key's H query holds.
type HForm uint8

const (
	// HMonomial is bellperson's H query: domain − 1 points τ^i·Z(τ)/δ, the
	// powers of τ that h's coefficients weigh. The prover gets h with six
	// NTTs of the domain's size.
	HMonomial HForm = iota
	// HCosetLagrange holds domain points H_i = ℓ_i(τ)·κ/δ, with ℓ_i the
	// Lagrange basis of the coset g·<ω> (g = 7, gnark-crypto's
	// FrMultiplicativeGen, as the provers' coset transforms use) and κ =
	// Z(τ)/(gⁿ − 1), the constant Z takes on that coset divided into Z(τ).
	// The prover weighs them with A(g·ω^i)·B(g·ω^i), the product of a's
	// and b's coset evaluations, four NTTs: on the coset that product is
	// (gⁿ − 1)·h + C (h of degree ≤ n − 2, C the interpolant of c), so the
	// sum is h(τ)·Z(τ)/δ + κ·C(τ)/δ. The second term is taken back out
	// by the L query: L_k = (β·u_k + α·v_k + (1 − κ)·w_k)/δ for aux k, and
	// LInput_k = −κ·w_k/δ for input k, weighed by the public inputs (C(τ)
	// = Σ z_k·w_k(τ) over every variable). The proofs are the same group
	// elements as with HMonomial, under the same verifying key. Only
	// Setup makes this form (from τ); bellperson's .params layout has no
	// place for it (WriteParams refuses it).
	HCosetLagrange
)

func (f HForm) String() string {
	switch f {
	case HMonomial:
		return "monomial"
	case HCosetLagrange:
		return "coset-lagrange"
	}
	return fmt.Sprintf("HForm(%d)", uint8(f))
}

// ParseHForm reads a form's name (HForm.String).
func ParseHForm(s string) (HForm, error) {
	for _, f := range []HForm{HMonomial, HCosetLagrange} {
		if s == f.String() {
			return f, nil
		}
	}
	return 0, fmt.Errorf("groth16: unknown H form %q (want monomial or coset-lagrange)", s)
}

// ProvingKey is the full parameter set of bellperson's .params layout, or
// of its coset-Lagrange variant (HForm).
type ProvingKey struct {
	VK VerifyingKey

	// HForm says what H and L hold; the zero value is bellperson's.
	HForm HForm
	// H has domain−1 points τ^i·Z(τ)/δ (HMonomial), or domain points
	// ℓ_i(τ)·κ/δ (HCosetLagrange).
	H []curve.G1Affine
	// L has one point per aux variable (HCosetLagrange: with −κ·w_k/δ
	// added).
	L []curve.G1Affine
	// LInput is empty for HMonomial; for HCosetLagrange it has one point
	// per public input, −κ·w_k(τ)/δ, weighed by the inputs into the L sum
	// (InputL).
	LInput []curve.G1Affine
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
