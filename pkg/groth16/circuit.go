package groth16

import (
	"context"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/constraint/solver"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Circuit is a compiled gnark BLS12-381 R1CS prepared for this engine: the
// variable layout and the A/B density bitmaps are computed once, when the
// Circuit is made, and shared (read-only) by every instance it solves.
//
// gnark orders wires as [public (the constant one first), secret,
// internal]; here the public wires are the Input variables and the rest,
// in the same order, are the Aux variables.
type Circuit struct {
	ccs *cs.R1CS

	nbConstraints int
	nbInputs      int // public wires, including the constant one
	nbAux         int

	aDensityAux   Bitmap
	bDensityInput Bitmap
	bDensityAux   Bitmap
}

// NewCircuit wraps a compiled constraint system. It must be a gnark R1CS over
// BLS12-381 (frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder,
// ...)) without commitments (ErrCommitments), as Filecoin's Groth16 has none.
func NewCircuit(ccs constraint.ConstraintSystem) (*Circuit, error) {
	r, ok := ccs.(*cs.R1CS)
	if !ok {
		return nil, fmt.Errorf("groth16: circuit is %T, want a BLS12-381 R1CS (*cs.R1CS)", ccs)
	}
	if r.CurveID() != ecc.BLS12_381 || r.Type != constraint.SystemR1CS {
		return nil, fmt.Errorf("groth16: circuit is a %v %v system, want a BLS12-381 R1CS", r.CurveID(), r.Type)
	}
	if ci, ok := r.CommitmentInfo.(constraint.Groth16Commitments); ok && len(ci) > 0 {
		return nil, fmt.Errorf("%w (circuit has %d)", ErrCommitments, len(ci))
	}
	c := &Circuit{
		ccs:           r,
		nbConstraints: r.GetNbConstraints(),
		nbInputs:      r.GetNbPublicVariables(),
		nbAux:         r.GetNbSecretVariables() + r.GetNbInternalVariables(),
	}
	if c.nbInputs < 1 {
		return nil, fmt.Errorf("groth16: circuit has no public wire (the constant one is missing)")
	}
	c.aDensityAux = NewBitmap(c.nbAux)
	c.bDensityInput = NewBitmap(c.nbInputs)
	c.bDensityAux = NewBitmap(c.nbAux)
	// One pass over the instructions, in parallel ranges (at 32 GiB, 130 M
	// constraints: seconds on one core); density bits are set atomically,
	// and errors name the constraint by its index.
	nbWires := c.nbInputs + c.nbAux
	var nR1C atomic.Int64
	err := parallelRange(context.Background(), len(r.Instructions), 1<<16, 0, func(start, end int) error {
		var rc constraint.R1C
		n := 0
		for _, inst := range r.Instructions[start:end] {
			bc, ok := r.Blueprints[inst.BlueprintID].(constraint.BlueprintR1C)
			if !ok {
				continue
			}
			bc.DecompressR1C(&rc, inst.Unpack(&r.System))
			n++
			for _, lc := range [3]constraint.LinearExpression{rc.L, rc.R, rc.O} {
				for _, t := range lc {
					if t.IsConstant() || t.WireID() >= nbWires {
						return fmt.Errorf("groth16: constraint %d: term with wire %d outside the %d wires", inst.ConstraintOffset, t.WireID(), nbWires)
					}
				}
			}
			for _, t := range rc.L {
				if w := t.WireID(); t.CoeffID() != constraint.CoeffIdZero && w >= c.nbInputs {
					c.aDensityAux.setAtomic(w - c.nbInputs)
				}
			}
			for _, t := range rc.R {
				if t.CoeffID() == constraint.CoeffIdZero {
					continue
				}
				if w := t.WireID(); w < c.nbInputs {
					c.bDensityInput.setAtomic(w)
				} else {
					c.bDensityAux.setAtomic(w - c.nbInputs)
				}
			}
		}
		nR1C.Add(int64(n))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if j := int(nR1C.Load()); j != c.nbConstraints {
		return nil, fmt.Errorf("groth16: circuit has %d R1C instructions, system says %d constraints", j, c.nbConstraints)
	}
	return c, nil
}

// R1CS returns the wrapped gnark constraint system.
func (c *Circuit) R1CS() *cs.R1CS { return c.ccs }

// NumConstraints is the circuit's own constraint count (without the input
// constraints).
func (c *Circuit) NumConstraints() int { return c.nbConstraints }

// NumInputs is the number of public variables, the constant one included.
func (c *Circuit) NumInputs() int { return c.nbInputs }

// NumAux is the number of private variables (gnark's secret and internal).
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

// Solve runs gnark's solver (which uses all cores) on a full witness (public
// and secret parts) and returns the synthesized instance: Input is the
// public wires, Aux the others, and A, B, C are the solver's constraint
// evaluations followed by (Input[i], 0, 0) for every input constraint. An
// unsatisfiable witness is an error from the solver.
func (c *Circuit) Solve(w witness.Witness, opts ...solver.Option) (*Synthesized, error) {
	if w == nil {
		return nil, fmt.Errorf("groth16: solve: nil witness")
	}
	if _, ok := w.Vector().(fr.Vector); !ok {
		return nil, fmt.Errorf("groth16: solve: witness is %T, want a BLS12-381 witness", w.Vector())
	}
	res, err := c.ccs.Solve(w, opts...)
	if err != nil {
		return nil, fmt.Errorf("groth16: solve: %w", err)
	}
	sol, ok := res.(*cs.R1CSSolution)
	if !ok {
		return nil, fmt.Errorf("groth16: solve: unexpected solution type %T", res)
	}
	return c.Synthesized(sol.W, sol.A, sol.B, sol.C)
}

// Synthesized wraps a solution of the circuit obtained some other way than
// Solve (one wire value per wire, in gnark's order, and the A, B, C
// evaluation of every constraint) as Solve does: Input and Aux alias wires,
// and A, B, C get the input rows appended, in place when their capacity
// allows (DomainSize does; Solve's solver vectors do not, so it copies).
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

// gnarkSystem is a Circuit as an R1CS for SetupR1CS: the public wires are
// the inputs and the others the aux variables, in gnark's order, and the
// terms are those of non-zero coefficient, the ones the circuit's
// densities count.
type gnarkSystem struct{ c *Circuit }

func (g gnarkSystem) NumInputs() int      { return g.c.nbInputs }
func (g gnarkSystem) NumAux() int         { return g.c.nbAux }
func (g gnarkSystem) NumConstraints() int { return g.c.nbConstraints }

func (g gnarkSystem) Terms(m int, f func(row int, v r1cs.Variable, c *fr.Element) error) error {
	if m < MatrixA || m > MatrixC {
		return fmt.Errorf("groth16: matrix %d, want 0 (A), 1 (B) or 2 (C)", m)
	}
	coeffs := g.c.ccs.Coefficients
	nIn := g.c.nbInputs
	it := g.c.ccs.GetR1CIterator()
	for j, rc := 0, it.Next(); rc != nil; j, rc = j+1, it.Next() {
		lc := rc.L
		switch m {
		case MatrixB:
			lc = rc.R
		case MatrixC:
			lc = rc.O
		}
		for _, t := range lc {
			if t.CoeffID() == constraint.CoeffIdZero {
				continue
			}
			var v r1cs.Variable
			if w := t.WireID(); w < nIn {
				v = r1cs.Input(w)
			} else {
				v = r1cs.Aux(w - nIn)
			}
			if err := f(j, v, &coeffs[t.CoeffID()]); err != nil {
				return err
			}
		}
	}
	return nil
}
