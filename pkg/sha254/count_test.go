package sha254

import (
	"testing"

	"github.com/consensys/gnark/frontend"
	"github.com/stretchr/testify/require"
)

// compressCircuit runs one compression function: on the constant initial
// state (bellman's test_full_block) or on a variable chaining state, over a
// variable or an all-constant (padding-only) block.
type compressCircuit struct {
	State []frontend.Variable // 256 bits, or nil for the constant IV
	Block []frontend.Variable // 512 bits, or nil for a constant block
}

func (c *compressCircuit) Define(api frontend.API) error {
	g := &gadget{api: api}
	var state [8]*word
	for i := range state {
		state[i] = constWord(initialState[i])
		if c.State != nil {
			state[i] = g.inputWord(c.State[32*i : 32*i+32])
		}
	}
	var block [16]*word
	for j := range block {
		block[j] = constWord(uint32(j) * 0x01010101)
		if c.Block != nil {
			block[j] = g.inputWord(c.Block[32*j : 32*j+32])
		}
	}
	out := g.compress(state, block)
	g.eq.flush(api)
	for _, w := range out {
		for _, b := range w.b {
			api.AssertIsBoolean(b.v) // already boolean: no constraint
		}
	}
	return nil
}

func (g *gadget) inputWord(bits []frontend.Variable) *word {
	w := &word{}
	for i := range 32 {
		w.b[i] = g.inputBit(i, bits[31-i])
	}
	return w
}

// TestCompressionConstraintCounts measures constraints per 512-bit block,
// net of the booleanity of the input bits, and bounds them against bellman's
// sha256 gadget: its test_full_block asserts 25,840 constraints for one block
// on the constant IV, of which 26 are MultiEq equalities. Packing here is
// limited by gnark's 300-term compression threshold, so about 90 equalities
// per block remain; the other counts follow bellman's formulas.
func TestCompressionConstraintCounts(t *testing.T) {
	cases := []struct {
		name         string
		c            *compressCircuit
		inputs, most int
	}{
		{"constant IV, variable block", &compressCircuit{Block: make([]frontend.Variable, 512)}, 512, 25840 + 60},
		{"variable state, variable block", &compressCircuit{State: make([]frontend.Variable, 256), Block: make([]frontend.Variable, 512)}, 768, 26300},
		{"variable state, constant block", &compressCircuit{State: make([]frontend.Variable, 256)}, 256, 19200},
	}
	for _, c := range cases {
		ccs := compile(t, c.c)
		n := ccs.GetNbConstraints() - c.inputs
		t.Logf("%-32s %6d constraints per block", c.name, n)
		require.LessOrEqual(t, n, c.most, c.name)
	}
}
