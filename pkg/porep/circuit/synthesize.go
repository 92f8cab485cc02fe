package circuit

import (
	"context"
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
)

// Synthesize builds the witness of partition k of a C1 output and solves the
// circuit with it (gnark's solver, on all cores), returning the synthesized
// instance the Groth16 backends prove. out must be of this circuit's shape.
//
// Errors: ErrInvalidInput when the C1 output does not fit the shape,
// ErrUnsatisfied when it fits but some check of the vanilla proof fails
// (both permanent), ctx.Err() when ctx ends first. The solver itself cannot
// be interrupted; ctx is checked before and after it.
func (c *Compiled) Synthesize(ctx context.Context, out *c1.Output, k int, opts ...Option) (*groth16.Synthesized, error) {
	o := collect(opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.progress("circuit: witness", 0, 1)
	wit, err := c.Witness(out, k)
	if err != nil {
		return nil, err
	}
	o.progress("circuit: witness", 1, 1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.progress("circuit: solve", 0, 1)
	s, err := c.circuit.Solve(wit)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s partition %d: %v", ErrUnsatisfied, c.params.Name, k, err)
	}
	o.progress("circuit: solve", 1, 1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
}
