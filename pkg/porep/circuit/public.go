package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
)

// Statement is what a partition proof is about (seal.Statement, where the
// public inputs are computed).
type Statement = seal.Statement

// StatementOf returns the statement of a C1 output (seal.StatementOf).
// Errors wrap ErrInvalidInput.
func StatementOf(out *c1.Output) (Statement, error) {
	st, err := seal.StatementOf(out)
	if err != nil {
		return Statement{}, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return st, nil
}

// PublicInputs returns the public inputs of partition k of a C1 output,
// computed natively as a verifier does (seal.Statement.PublicInputs):
// without the constant one, in StackedCircuit order. They are what
// groth16.Verify takes. Errors wrap ErrInvalidInput.
func PublicInputs(out *c1.Output, k int) ([]fr.Element, error) {
	st, err := StatementOf(out)
	if err != nil {
		return nil, err
	}
	in, err := st.PublicInputs(k)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return in, nil
}
