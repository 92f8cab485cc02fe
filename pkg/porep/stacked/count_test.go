package stacked

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// counter is a CS that only counts: inputs (ONE included), aux and
// constraints. It says it records constraints, so gadgets build and
// enforce every one.
type counter struct{ in, aux, rows int }

func newCounter() *counter { return &counter{in: 1} }

func (c *counter) Alloc(r1cs.Name, fr.Element) r1cs.Variable {
	c.aux++
	return r1cs.Aux(c.aux - 1)
}

func (c *counter) AllocInput(r1cs.Name, fr.Element) r1cs.Variable {
	c.in++
	return r1cs.Input(c.in - 1)
}

func (c *counter) Enforce(r1cs.Name, *r1cs.LC, *r1cs.LC, *r1cs.LC) { c.rows++ }
func (c *counter) Push(r1cs.Name)                                  {}
func (c *counter) Pop()                                            {}
func (c *counter) Constraints() bool                               { return true }

// TestCountsLargeShapes synthesizes the blank 32 GiB and 64 GiB partition
// circuits (and 2 KiB's) into a counter and checks the reference's
// counts.
func TestCountsLargeShapes(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		inputs, aux, constraints int
	}{
		{"2KiB", 40, 2_685_673, 2_687_921},
		{"32GiB", 328, 130_169_893, 130_278_541},
		{"64GiB", 328, 131_076_643, 131_185_849},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name != "2KiB" {
				t.Skip("short: a large shape takes most of a minute")
			}
			s, err := porep.ShapeByName(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Blank(s)
			if err != nil {
				t.Fatal(err)
			}
			n := newCounter()
			if err := c.Synthesize(n); err != nil {
				t.Fatal(err)
			}
			if n.in != tc.inputs || n.aux != tc.aux || n.rows != tc.constraints {
				t.Fatalf("%d inputs, %d aux, %d constraints; reference %d, %d, %d", n.in, n.aux, n.rows, tc.inputs, tc.aux, tc.constraints)
			}
		})
	}
}
