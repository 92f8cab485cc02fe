package circuit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// TestBreakdownMatchesCompiled checks that the per-gadget breakdown adds up
// to the compiled circuit's constraint count, on the CI test shape and on a
// small circuit with sub and top tree levels, three layers and two
// challenges. That is what makes the 32 GiB extrapolation exact.
func TestBreakdownMatchesCompiled(t *testing.T) {
	s, err := porep.ShapeByName(solveShape)
	require.NoError(t, err)
	mini, err := ParamsOf(s)
	require.NoError(t, err)
	custom := Params{Name: "breakdown-check", Nodes: 8, Layers: 3, DRGDegree: 2, ExpDegree: 1, LabelParents: 3, Challenges: 2,
		Tree: TreeArity{Base: 2, Sub: 2, Top: 2}}
	for _, p := range []Params{mini, custom} {
		b, err := CountBreakdown(p)
		require.NoError(t, err)
		var c *Compiled
		if p == mini {
			c, err = ForShape(s)
		} else {
			c, err = Compile(p)
		}
		require.NoError(t, err)
		st := c.Stats()
		require.Equal(t, st.Constraints, b.Total(), "%s: breakdown vs compiled", p.Name)
		require.Zero(t, st.Commitments, "%s: plain R1CS, no commitments", p.Name)
		require.Equal(t, p.NumPublic()+1, st.Inputs, p.Name)
		grouped := 0
		for _, r := range b.Grouped() {
			grouped += r.Total()
		}
		require.Equal(t, b.Total(), grouped)
		requireParts(t, b)
	}
}

// TestBellpersonModel checks the bellperson per-gadget model against the
// totals rust-fil-proofs publishes: storage-proofs-porep
// tests/stacked_circuit.rs (8·base-tree-count nodes, 2 layers, 1 challenge)
// and the 32 GiB partition (130,278,869 with its 328 input constraints).
func TestBellpersonModel(t *testing.T) {
	t.Parallel()
	stacked := func(nodes uint64, tree TreeArity) Params {
		return Params{Name: "stacked_circuit.rs " + tree.String(), Nodes: nodes, Layers: 2, DRGDegree: 6, ExpDegree: 8,
			LabelParents: 37, Challenges: 1, Tree: tree}
	}
	cases := []struct {
		p           Params
		constraints int
		inputs      int // bellperson's num_inputs, the one included
	}{
		{stacked(8, TreeArity{Base: 2}), 1_206_212, 22},
		{stacked(8, TreeArity{Base: 8}), 1_199_620, 22},
		{stacked(32, TreeArity{Base: 8, Sub: 4}), 1_296_576, 22},
		{stacked(64, TreeArity{Base: 8, Sub: 4, Top: 2}), 1_346_982, 22},
		{Official32GiB(), 130_278_869 - 328, 328},
	}
	for _, tc := range cases {
		b, err := BellpersonBreakdown(tc.p)
		require.NoError(t, err)
		require.Equal(t, tc.constraints, b.Total(), tc.p.Name)
		require.Equal(t, tc.inputs, tc.p.NumPublic()+1, tc.p.Name)
		requireParts(t, b)
	}
	_, err := BellpersonBreakdown(Params{Name: "x", Nodes: 64, Layers: 3, DRGDegree: 6, ExpDegree: 8, LabelParents: 37, Challenges: 1, Tree: TreeArity{Base: 8}})
	require.Error(t, err, "no Poseidon-3 count")
}

// requireParts checks every row has a known part and the parts add up.
func requireParts(t *testing.T, b Breakdown) {
	t.Helper()
	for _, r := range b.Rows {
		require.Contains(t, Parts, r.Part, r.Name)
	}
	sum := 0
	for _, v := range b.PartTotals() {
		sum += v
	}
	require.Equal(t, b.Total(), sum)
}
