package ceremony

import (
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Counts are the numbers of a circuit that fix the section lengths of its
// bellperson parameters.
type Counts struct {
	// Inputs is the number of public variables, the constant one included
	// (bellperson's num_inputs; a 32 GiB PoRep partition has 328).
	Inputs int
	// Aux is the number of private variables.
	Aux int
	// Constraints is the number of the circuit's own constraints (without
	// the Inputs input constraints bellperson adds).
	Constraints int
	// Domain is the evaluation domain: the power of two at least
	// Constraints + Inputs.
	Domain int
	// ADensityAux is the number of aux variables that appear in some A
	// (every input does, through its input constraint).
	ADensityAux int
	// BDensityInput and BDensityAux are the numbers of input and aux
	// variables that appear in some B.
	BDensityInput int
	BDensityAux   int
}

// CircuitCounts returns the counts of a circuit wrapped by pkg/groth16.
func CircuitCounts(c *groth16.Circuit) Counts {
	a, bi, ba := c.Densities()
	return Counts{Inputs: c.NumInputs(), Aux: c.NumAux(), Constraints: c.NumConstraints(), Domain: c.DomainSize(),
		ADensityAux: a.Count(), BDensityInput: bi.Count(), BDensityAux: ba.Count()}
}

// validate checks that the counts describe a circuit.
func (c Counts) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("ceremony: circuit counts: %s", fmt.Sprintf(format, a...))
	}
	switch {
	case c.Inputs < 1:
		return bad("%d inputs: the constant one is an input", c.Inputs)
	case c.Aux < 0 || c.Constraints < 0:
		return bad("negative aux (%d) or constraints (%d)", c.Aux, c.Constraints)
	case c.ADensityAux < 0 || c.ADensityAux > c.Aux:
		return bad("A density %d outside 0..%d aux", c.ADensityAux, c.Aux)
	case c.BDensityAux < 0 || c.BDensityAux > c.Aux:
		return bad("B density %d outside 0..%d aux", c.BDensityAux, c.Aux)
	case c.BDensityInput < 0 || c.BDensityInput > c.Inputs:
		return bad("B input density %d outside 0..%d inputs", c.BDensityInput, c.Inputs)
	case c.Domain < 2 || c.Domain&(c.Domain-1) != 0:
		return bad("domain %d is not a power of two ≥ 2", c.Domain)
	case c.Domain < c.Constraints+c.Inputs:
		return bad("domain %d is smaller than the %d constraints and %d input constraints", c.Domain, c.Constraints, c.Inputs)
	case c.Domain/2 >= c.Constraints+c.Inputs && c.Domain > 2:
		return bad("domain %d is not the smallest power of two ≥ %d constraints + %d inputs", c.Domain, c.Constraints, c.Inputs)
	}
	return nil
}

// CountError is a parameter section whose length does not fit the circuit.
type CountError struct {
	// Section is a groth16.Section* name (ic, h, l, a, b_g1, b_g2).
	Section string
	// Params is the section's length in the file, Circuit the length the
	// circuit needs, Rule how that follows from the circuit's counts.
	Params, Circuit int
	Rule            string
}

func (e *CountError) Error() string {
	return fmt.Sprintf("ceremony: parameters do not fit the circuit: section %s has %d points, the circuit needs %d (%s)",
		e.Section, e.Params, e.Circuit, e.Rule)
}

// CheckCounts compares the section lengths of a parameter file (its
// layout, groth16.ParseParamsLayout or ParamsFile.Layout) with a circuit's
// counts, as bellperson lays parameters out:
//
//	|ic| = inputs
//	|h| + 1 = domain
//	|l| = aux
//	|a| = inputs + A-density(aux)
//	|b_g1| = |b_g2| = B-density(inputs) + B-density(aux)
//
// The first mismatch is a *CountError naming the section and both counts.
func CheckCounts(l groth16.ParamsLayout, c Counts) error {
	if err := c.validate(); err != nil {
		return err
	}
	bDensity := c.BDensityInput + c.BDensityAux
	for _, s := range []struct {
		sec  groth16.Section
		want int
		rule string
	}{
		{l.IC, c.Inputs, fmt.Sprintf("one per input: %d inputs", c.Inputs)},
		{l.H, c.Domain - 1, fmt.Sprintf("domain − 1: domain %d", c.Domain)},
		{l.L, c.Aux, fmt.Sprintf("one per aux variable: %d aux", c.Aux)},
		{l.A, c.Inputs + c.ADensityAux, fmt.Sprintf("inputs + A density of aux: %d + %d", c.Inputs, c.ADensityAux)},
		{l.BG1, bDensity, fmt.Sprintf("B density of inputs + of aux: %d + %d", c.BDensityInput, c.BDensityAux)},
		{l.BG2, bDensity, fmt.Sprintf("B density of inputs + of aux: %d + %d", c.BDensityInput, c.BDensityAux)},
	} {
		if s.sec.Count != s.want {
			return &CountError{Section: s.sec.Name, Params: s.sec.Count, Circuit: s.want, Rule: s.rule}
		}
	}
	return nil
}

// CheckParamsCounts opens the .params file at path (mapping it; no point is
// decoded) and compares its layout with c (CheckCounts).
func CheckParamsCounts(path string, c Counts) error {
	f, err := groth16.OpenParams(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := CheckCounts(f.Layout(), c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
