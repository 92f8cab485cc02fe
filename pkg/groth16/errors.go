package groth16

import (
	"errors"
	"fmt"
)

// Sentinel errors. Decoding and validation errors wrap one of them, so callers
// can branch with errors.Is; the wrapping error says where the problem is.
var (
	// ErrTruncated: the input ends before a count or a point it announces.
	ErrTruncated = errors.New("truncated input")
	// ErrTrailingData: bytes follow the last section of a file.
	ErrTrailingData = errors.New("trailing data")
	// ErrBadFlags: the three flag bits of a point encoding are not allowed
	// here (compressed where uncompressed is required or the reverse, or an
	// invalid combination).
	ErrBadFlags = errors.New("bad point encoding flags")
	// ErrNonCanonical: a coordinate is not reduced modulo p, or the point at
	// infinity has non-zero bits.
	ErrNonCanonical = errors.New("non-canonical point encoding")
	// ErrNotOnCurve: the point does not satisfy the curve equation (for a
	// compressed point: x has no matching y).
	ErrNotOnCurve = errors.New("point not on curve")
	// ErrNotInSubgroup: the point is on the curve but outside the
	// prime-order subgroup.
	ErrNotInSubgroup = errors.New("point not in the prime-order subgroup")
	// ErrInfinity: the point at infinity where a proof element is expected.
	ErrInfinity = errors.New("point at infinity")
	// ErrInvalidProof: the pairing check failed.
	ErrInvalidProof = errors.New("groth16: invalid proof")
	// ErrShape: the lengths or densities of a witness, key or input vector do
	// not fit together.
	ErrShape = errors.New("groth16: shape mismatch")
	// ErrUnsatisfied: the witness does not satisfy the constraints (found
	// by the prover when h = (a·b − c)/Z is not a polynomial).
	ErrUnsatisfied = errors.New("groth16: witness does not satisfy the constraints")
	// ErrUnconstrainedVariable: setup found an aux variable in no
	// constraint (its L point would be the identity); bellperson's
	// generator refuses such a circuit (SynthesisError::UnconstrainedVariable).
	ErrUnconstrainedVariable = errors.New("groth16: unconstrained variable")
	// ErrDensityMismatch: setup found a variable that appears in the A or
	// B matrix (so the prover's density counts it) whose evaluation there
	// is zero (so bellperson's key leaves its point out), e.g. one whose
	// only coefficient in A cancelled to zero. No proof of such a circuit
	// could verify.
	ErrDensityMismatch = errors.New("groth16: density of the prover and of the key differ")
)

// Section names of the .params layout, as used in FormatError.
const (
	SectionVK  = "vk"
	SectionIC  = "ic"
	SectionH   = "h"
	SectionL   = "l"
	SectionA   = "a"
	SectionBG1 = "b_g1"
	SectionBG2 = "b_g2"
)

// FormatError reports a malformed .params, .vk or proof encoding. Section
// is one of the Section* names ("proof" for proofs), Index the point within
// the section (-1 when the problem is not a point, e.g. a count), Offset the
// byte offset in the input where the bad item starts.
type FormatError struct {
	Section string
	Index   int
	Offset  int64
	Err     error
}

func (e *FormatError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("groth16: section %s: point %d at offset %d: %v", e.Section, e.Index, e.Offset, e.Err)
	}
	return fmt.Sprintf("groth16: section %s at offset %d: %v", e.Section, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }
