package groth16

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Circuit is what the engine keeps of a circuit's structure: its counts
// and the density bitmaps every instance carries. It is immutable and
// shared by every instance, buffer pool and key of the circuit. Make one
// from the circuit's constraints (CircuitOf) or from counts and densities
// computed elsewhere (NewCircuit: a circuit replayed from templates).
type Circuit struct {
	nbConstraints int
	nbInputs      int // the constant one included
	nbAux         int

	aDensityAux   Bitmap
	bDensityInput Bitmap
	bDensityAux   Bitmap
}

// NewCircuit describes a circuit of these counts (inputs with ONE) and
// densities (as the prover counts them: SynthesizeSystem, SetupR1CS).
func NewCircuit(constraints, inputs, aux int, d Densities) (*Circuit, error) {
	switch {
	case constraints < 0 || inputs < 1 || aux < 0:
		return nil, fmt.Errorf("groth16: circuit of %d constraints, %d inputs and %d aux variables (ONE is input 0)", constraints, inputs, aux)
	case d.ADensityAux.Len != aux || !d.ADensityAux.Valid():
		return nil, fmt.Errorf("groth16: A density of %d bits for %d aux variables", d.ADensityAux.Len, aux)
	case d.BDensityInput.Len != inputs || !d.BDensityInput.Valid():
		return nil, fmt.Errorf("groth16: B density of %d bits for %d inputs", d.BDensityInput.Len, inputs)
	case d.BDensityAux.Len != aux || !d.BDensityAux.Valid():
		return nil, fmt.Errorf("groth16: B density of %d bits for %d aux variables", d.BDensityAux.Len, aux)
	}
	return &Circuit{nbConstraints: constraints, nbInputs: inputs, nbAux: aux,
		aDensityAux: d.ADensityAux, bDensityInput: d.BDensityInput, bDensityAux: d.BDensityAux}, nil
}

// CircuitOf describes sys: its counts, and its densities by presence (a
// variable with a non-zero coefficient in some A or B combination, as
// bellperson's prover counts it), read from its A and B terms.
func CircuitOf(ctx context.Context, sys R1CS) (*Circuit, error) {
	nIn, nAux := sys.NumInputs(), sys.NumAux()
	if nIn < 1 || nAux < 0 {
		return nil, fmt.Errorf("groth16: circuit of %d inputs and %d aux variables (ONE is input 0)", nIn, nAux)
	}
	d := newDensities(nIn, nAux)
	for _, m := range []int{MatrixA, MatrixB} {
		in, aux := (*Bitmap)(nil), &d.ADensityAux
		if m == MatrixB {
			in, aux = &d.BDensityInput, &d.BDensityAux
		}
		err := sys.Terms(m, func(row int, v r1cs.Variable, c *fr.Element) error {
			if row&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if c.IsZero() {
				return nil
			}
			i := v.Index()
			if v.IsInput() {
				if i >= nIn {
					return fmt.Errorf("constraint %d: term of input %d, the system has %d inputs", row, i, nIn)
				}
				if in != nil {
					in.Set(i)
				}
				return nil
			}
			if i >= nAux {
				return fmt.Errorf("constraint %d: term of aux %d, the system has %d aux variables", row, i, nAux)
			}
			aux.Set(i)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("groth16: circuit: matrix %c: %w", "ABC"[m], err)
		}
	}
	return NewCircuit(sys.NumConstraints(), nIn, nAux, *d)
}

// NumConstraints is the circuit's own constraint count (without the input
// constraints).
func (c *Circuit) NumConstraints() int { return c.nbConstraints }

// NumInputs is the number of public variables, the constant one included.
func (c *Circuit) NumInputs() int { return c.nbInputs }

// NumAux is the number of aux (private) variables.
func (c *Circuit) NumAux() int { return c.nbAux }

// DomainSize is the evaluation domain: the next power of two ≥ constraints +
// inputs.
func (c *Circuit) DomainSize() int { return domainSize(c.nbConstraints + c.nbInputs) }

// Densities returns the circuit's density bitmaps (shared; do not modify).
func (c *Circuit) Densities() (aAux, bInput, bAux Bitmap) {
	return c.aDensityAux, c.bDensityInput, c.bDensityAux
}

func domainSize(m int) int {
	if m <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(m-1))
}

// Synthesized wraps a solution of the circuit (one value per variable,
// inputs then aux, and the A, B, C evaluation of every constraint): Input
// and Aux alias wires, and A, B, C get the input rows appended, in place
// when their capacity allows (DomainSize does), else copied.
func (c *Circuit) Synthesized(wires, a, b, cv []fr.Element) (*Synthesized, error) {
	if len(wires) != c.nbInputs+c.nbAux || len(a) != c.nbConstraints || len(b) != c.nbConstraints || len(cv) != c.nbConstraints {
		return nil, fmt.Errorf("groth16: solution of %d wires and %d/%d/%d constraint evaluations, want %d and %d",
			len(wires), len(a), len(b), len(cv), c.nbInputs+c.nbAux, c.nbConstraints)
	}
	input := wires[:c.nbInputs:c.nbInputs]
	s := &Synthesized{
		NumConstraints: c.nbConstraints,
		A:              withInputRows(a, input, true),
		B:              withInputRows(b, input, false),
		C:              withInputRows(cv, input, false),
		Input:          input,
		Aux:            wires[c.nbInputs:],
		ADensityAux:    c.aDensityAux,
		BDensityInput:  c.bDensityInput,
		BDensityAux:    c.bDensityAux,
	}
	return s, nil
}

// withInputRowCodes appends the codes of withInputRows' rows to a set's
// codes (whose capacity is the domain, so in place).
func withInputRowCodes(codes []uint8, input []fr.Element, a bool) []uint8 {
	codes = codes[:len(codes)+len(input)]
	tail := codes[len(codes)-len(input):]
	for i := range tail {
		tail[i] = CodeZero
		if a {
			tail[i] = CodeOf(&input[i])
		}
	}
	return codes
}

// withInputRows appends one row per input: the input's value (for A) or 0.
func withInputRows(v []fr.Element, input []fr.Element, a bool) []fr.Element {
	n := len(v) + len(input)
	if cap(v) < n {
		nv := make([]fr.Element, len(v), domainSize(n))
		copy(nv, v)
		v = nv
	}
	v = v[:n]
	tail := v[n-len(input):]
	if a {
		copy(tail, input)
	} else {
		clear(tail)
	}
	return v
}
