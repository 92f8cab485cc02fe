package r1cs

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Witness is a CS that keeps only values: the assignment of a circuit whose
// constraints are known from elsewhere (a recorded System). Enforce does
// nothing and Constraints is false.
//
// Values go into the Inputs and Aux slices at the variables' indices. A
// Witness made by NewWitness grows them from empty, with ONE allocated; one
// made by NewWitnessAt writes into caller-owned slices from given indices
// on, so that independent parts of a circuit (whose variables are known to
// start at those indices) are generated concurrently into one assignment.
type Witness struct {
	Inputs, Aux []fr.Element
	nIn, nAux   int
	fixed       bool
}

// NewWitness returns an empty witness with ONE allocated.
func NewWitness() *Witness {
	w := &Witness{}
	w.AllocInput(N("ONE"), fr.One())
	return w
}

// NewWitnessAt returns a witness whose next input is inputs[nextInput]
// and next aux aux[nextAux]; it never grows the slices (allocating past
// their end panics).
func NewWitnessAt(inputs, aux []fr.Element, nextInput, nextAux int) *Witness {
	return &Witness{Inputs: inputs, Aux: aux, nIn: nextInput, nAux: nextAux, fixed: true}
}

// Alloc implements CS.
func (w *Witness) Alloc(_ Name, v fr.Element) Variable {
	w.put(&w.Aux, w.nAux, v)
	w.nAux++
	return Aux(w.nAux - 1)
}

// AllocInput implements CS.
func (w *Witness) AllocInput(_ Name, v fr.Element) Variable {
	w.put(&w.Inputs, w.nIn, v)
	w.nIn++
	return Input(w.nIn - 1)
}

func (w *Witness) put(s *[]fr.Element, i int, v fr.Element) {
	if i < len(*s) {
		(*s)[i] = v
		return
	}
	if w.fixed {
		panic(fmt.Sprintf("r1cs: witness allocates variable %d past its buffer of %d", i, len(*s)))
	}
	*s = append(*s, v)
}

// AllocAux allocates n aux variables at once and returns the first and the
// values' slots, for a gadget to fill (Bulk).
func (w *Witness) AllocAux(n int) (Variable, []fr.Element) {
	first := w.nAux
	if end := first + n; end > len(w.Aux) {
		if w.fixed {
			panic(fmt.Sprintf("r1cs: witness allocates variables up to %d past its buffer of %d", end, len(w.Aux)))
		}
		w.Aux = append(w.Aux, make([]fr.Element, end-len(w.Aux))...)
	}
	w.nAux += n
	return Aux(first), w.Aux[first:w.nAux]
}

// Enforce implements CS: it does nothing.
func (w *Witness) Enforce(Name, *LC, *LC, *LC) {}

// Push implements CS.
func (w *Witness) Push(Name) {}

// Pop implements CS.
func (w *Witness) Pop() {}

// Constraints implements CS: a Witness records none.
func (w *Witness) Constraints() bool { return false }

// NumInputs is the number of inputs allocated (with the indices before a
// NewWitnessAt start).
func (w *Witness) NumInputs() int { return w.nIn }

// NumAux is the number of aux variables allocated (likewise).
func (w *Witness) NumAux() int { return w.nAux }

// Bulk is implemented by a CS that lets a gadget allocate many aux
// variables at once and write their values directly (Witness): gadgets
// with a native witness path use it when Constraints is false.
type Bulk interface {
	AllocAux(n int) (first Variable, values []fr.Element)
}
