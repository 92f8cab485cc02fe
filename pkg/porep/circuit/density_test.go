package circuit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// TestBalanceB compares the circuit with and without the B-side rewrite:
// same constraints and variables, far fewer variables in B, and the same
// witness solves both with identical wire values (the end-to-end test proves
// and verifies with the rewritten one).
func TestBalanceB(t *testing.T) {
	s, err := porep.ShapeByName(solveShape)
	require.NoError(t, err)
	p, err := ParamsOf(s)
	require.NoError(t, err)
	balanced, err := ForShape(s)
	require.NoError(t, err)
	plain, err := Compile(p, func(o *options) { o.keepB = true })
	require.NoError(t, err)

	sb, sp := balanced.Stats(), plain.Stats()
	require.Equal(t, sp.Constraints, sb.Constraints)
	require.Equal(t, sp.Aux, sb.Aux)
	t.Logf("B density %.1f %% -> %.1f %%, A density %.1f %% -> %.1f %%", 100*sp.BDensityAux, 100*sb.BDensityAux, 100*sp.ADensityAux, 100*sb.ADensityAux)
	require.Greater(t, sp.BDensityAux, 0.5)
	require.Less(t, sb.BDensityAux, 0.3)

	out := parseC1(t, sealedC1(t, solveShape, 5))
	wb, err := balanced.Synthesize(context.Background(), out, 1)
	require.NoError(t, err)
	wp, err := plain.Synthesize(context.Background(), out, 1)
	require.NoError(t, err)
	require.Equal(t, wp.Input, wb.Input)
	require.Equal(t, wp.Aux, wb.Aux)
	require.Equal(t, wp.C, wb.C)
	turned := 0
	for j := range wp.A {
		if wp.A[j] != wb.A[j] {
			// A turned constraint swaps its A and B evaluations.
			require.Equal(t, wp.A[j], wb.B[j], "constraint %d", j)
			require.Equal(t, wp.B[j], wb.A[j], "constraint %d", j)
			turned++
		}
	}
	require.Positive(t, turned)
}
