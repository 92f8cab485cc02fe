package circuit

import (
	"context"
	"slices"
	"testing"

	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
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

// TestBalanceBMatchesReference checks balanceB, which reads the constraint
// sides from the calldata, against the implementation it replaced (kept
// below), which held every side in its own slices: the same constraints
// turned, hence the same matrices (parameters made before stay valid).
func TestBalanceBMatchesReference(t *testing.T) {
	shapes := []string{proveShape}
	if !testing.Short() {
		shapes = append(shapes, solveShape)
	}
	for _, name := range shapes {
		p := mustParams(t, name)
		a, err := Compile(p, withKeepB())
		require.NoError(t, err)
		b, err := Compile(p, withKeepB())
		require.NoError(t, err)
		ra, rb := a.Circuit().R1CS(), b.Circuit().R1CS()
		require.Equal(t, ra.CallData, rb.CallData)
		n := balanceB(ra)
		require.Positive(t, n)
		require.Equal(t, balanceBReference(rb), n, name)
		require.True(t, slices.Equal(rb.CallData, ra.CallData), name)
	}
}

// balanceBReference is balanceB as it was first written (every considered
// constraint's private sides copied into slices): TestBalanceBMatchesReference's
// oracle.
func balanceBReference(r *cs.R1CS) int {
	nIn := uint32(r.GetNbPublicVariables())
	nW := int(nIn) + r.GetNbSecretVariables() + r.GetNbInternalVariables()

	// The R1Cs to consider, with their private wires on each side (wires on
	// both sides left out: they are in B either way).
	type side struct{ l, r []uint32 }
	var idx []uint32 // instruction index of each considered R1C
	var sides []side
	for i, pi := range r.Instructions {
		if _, ok := r.Blueprints[pi.BlueprintID].(*constraint.BlueprintGenericR1C); !ok {
			continue
		}
		cd := r.CallData[pi.StartCallData:]
		nl, nr := int(cd[1]), int(cd[2])
		var s side
		for k := 0; k < nl; k++ {
			if w := cd[5+2*k]; w >= nIn {
				s.l = append(s.l, w)
			}
		}
		for k := 0; k < nr; k++ {
			if w := cd[5+2*nl+2*k]; w >= nIn {
				s.r = append(s.r, w)
			}
		}
		s.l, s.r = withoutCommonReference(s.l, s.r)
		if len(s.l) == 0 && len(s.r) == 0 {
			continue
		}
		idx = append(idx, uint32(i))
		sides = append(sides, s)
	}

	// cnt[w] is the number of considered constraints whose B side holds w.
	turned := make([]bool, len(sides))
	bSide := func(i int) []uint32 {
		if turned[i] {
			return sides[i].l
		}
		return sides[i].r
	}
	aSide := func(i int) []uint32 {
		if turned[i] {
			return sides[i].r
		}
		return sides[i].l
	}
	cnt := make([]int32, nW)
	for i := range sides {
		for _, w := range bSide(i) {
			cnt[w]++
		}
	}
	const maxRounds = 8 // converges in 2–3 rounds on every shape measured
	for range maxRounds {
		changed := 0
		for i := range sides {
			add, remove := 0, 0
			for _, w := range aSide(i) {
				if cnt[w] == 0 {
					add++
				}
			}
			for _, w := range bSide(i) {
				if cnt[w] == 1 {
					remove++
				}
			}
			if add >= remove {
				continue
			}
			for _, w := range bSide(i) {
				cnt[w]--
			}
			turned[i] = !turned[i]
			for _, w := range bSide(i) {
				cnt[w]++
			}
			changed++
		}
		if changed == 0 {
			break
		}
	}

	return swapSides(r, idx, turned).count
}

// withoutCommon removes from both lists the wires that appear in both.
func withoutCommonReference(a, b []uint32) ([]uint32, []uint32) {
	if !slices.ContainsFunc(a, func(w uint32) bool { return slices.Contains(b, w) }) {
		return a, b
	}
	keep := func(s, other []uint32) []uint32 {
		out := make([]uint32, 0, len(s))
		for _, w := range s {
			if !slices.Contains(other, w) {
				out = append(out, w)
			}
		}
		return out
	}
	return keep(a, b), keep(b, a)
}
