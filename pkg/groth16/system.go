package groth16

import (
	"fmt"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// R1CS is what SetupR1CS needs of a constraint system: its counts and, per
// matrix, a stream of its terms. Nothing is asked to be held: a circuit
// replayed from templates streams its terms as it replays them, and
// setup keeps only per-variable accumulators.
//
// The variables are r1cs.Variable values: inputs 0 … NumInputs−1 (input 0
// is the constant ONE) and aux 0 … NumAux−1. *r1cs.System implements R1CS.
type R1CS interface {
	// NumInputs is the number of inputs, ONE included.
	NumInputs() int
	// NumAux is the number of aux variables.
	NumAux() int
	// NumConstraints is the number of the circuit's own constraints;
	// setup adds the input rows input_i · 0 = 0 after them.
	NumConstraints() int
	// Terms calls f for every term of matrix m (MatrixA, MatrixB or
	// MatrixC), with the index of its constraint (0 ≤ row <
	// NumConstraints), its variable and its coefficient (read during the
	// call only), constraint by constraint in order, and stops at and
	// returns the first error f returns (setup returns one when its
	// context is done or a term is out of range). Setup calls Terms once
	// per matrix, the three calls concurrently; f is called from one
	// goroutine per call.
	//
	// A term counts as present for the densities when its coefficient is
	// not zero (bellpepper's LinearCombination keeps a term whose
	// coefficient sums to zero; bellperson's prover skips it); a row's
	// terms need not be merged (a variable given twice adds up).
	Terms(m int, f func(row int, v r1cs.Variable, c *fr.Element) error) error
}

var _ R1CS = (*r1cs.System)(nil)

// The matrices of an R1CS, R1CS.Terms's m.
const (
	MatrixA = 0
	MatrixB = 1
	MatrixC = 2
)

// Densities are a circuit's density bitmaps, what the prover needs of its
// structure beside the proving key: the Synthesized fields of the same
// names (every Synthesized of the circuit carries them).
type Densities struct {
	// ADensityAux has a bit per aux variable: set if it is in A.
	ADensityAux Bitmap
	// BDensityInput and BDensityAux have a bit per input / aux variable:
	// set if it is in B.
	BDensityInput Bitmap
	BDensityAux   Bitmap
}

func newDensities(nIn, nAux int) *Densities {
	return &Densities{ADensityAux: NewBitmap(nAux), BDensityInput: NewBitmap(nIn), BDensityAux: NewBitmap(nAux)}
}

// Equal reports whether d and o have the same bits.
func (d *Densities) Equal(o *Densities) bool {
	eq := func(a, b Bitmap) bool { return a.Len == b.Len && slices.Equal(a.Words, b.Words) }
	return eq(d.ADensityAux, o.ADensityAux) && eq(d.BDensityInput, o.BDensityInput) && eq(d.BDensityAux, o.BDensityAux)
}

// SynthesizeSystem is the reference synthesis of a System made
// r1cs.WithValues, as bellperson's prover (ProvingAssignment) makes it:
// A, B and C hold <A_j, z>, <B_j, z>, <C_j, z> for every constraint j of
// the full assignment z = inputs ‖ aux, then (input_i, 0, 0) for each
// input row; Input and Aux are copies of the System's values; a variable
// is in a density when it is a term of some A (aux only: every input is
// in A through its input row) or B combination with a non-zero
// coefficient, as bellperson's eval_with_trackers counts it.
// For a circuit that SetupR1CS accepts, the densities are the ones it
// returns.
//
// It walks the whole System on one goroutine: for tests and small
// circuits. It does not check that the values satisfy the constraints
// (System.Satisfied does; the prover finds out, ErrUnsatisfied).
func SynthesizeSystem(sys *r1cs.System) (*Synthesized, error) {
	if sys == nil {
		return nil, fmt.Errorf("groth16: synthesize: nil system")
	}
	inputs, aux := sys.Values()
	nIn, nAux, m := sys.NumInputs(), sys.NumAux(), sys.NumConstraints()
	if len(inputs) != nIn || len(aux) != nAux {
		return nil, fmt.Errorf("groth16: synthesize: the system has no values (%d/%d of %d inputs and %d aux): make it with r1cs.WithValues",
			len(inputs), len(aux), nIn, nAux)
	}
	d := newDensities(nIn, nAux)
	n := domainSize(m + nIn)
	a, b, c := make([]fr.Element, m, n), make([]fr.Element, m, n), make([]fr.Element, m, n)
	coeffs := sys.Coeffs()
	eval := func(ts []r1cs.STerm, in, ax *Bitmap) fr.Element {
		var acc, t fr.Element
		for _, x := range ts {
			i := x.V.Index()
			present := !coeffs[x.K].IsZero()
			var val *fr.Element
			if x.V.IsInput() {
				val = &inputs[i]
				if in != nil && present {
					in.Set(i)
				}
			} else {
				val = &aux[i]
				if ax != nil && present {
					ax.Set(i)
				}
			}
			t.Mul(&coeffs[x.K], val)
			acc.Add(&acc, &t)
		}
		return acc
	}
	for j := range m {
		ra, rb, rc := sys.Row(j)
		a[j] = eval(ra, nil, &d.ADensityAux)
		b[j] = eval(rb, &d.BDensityInput, &d.BDensityAux)
		c[j] = eval(rc, nil, nil)
	}
	in := slices.Clone(inputs)
	return &Synthesized{
		NumConstraints: m,
		A:              withInputRows(a, in, true),
		B:              withInputRows(b, in, false),
		C:              withInputRows(c, in, false),
		Input:          in,
		Aux:            slices.Clone(aux),
		ADensityAux:    d.ADensityAux,
		BDensityInput:  d.BDensityInput,
		BDensityAux:    d.BDensityAux,
	}, nil
}
