package sha256

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// nullCS records nothing but asks for constraints: the gadgets' own cost
// of building them.
type nullCS struct{ n int }

func (c *nullCS) Alloc(r1cs.Name, fr.Element) r1cs.Variable       { c.n++; return r1cs.Aux(c.n - 1) }
func (c *nullCS) AllocInput(r1cs.Name, fr.Element) r1cs.Variable  { return r1cs.One }
func (c *nullCS) Enforce(r1cs.Name, *r1cs.LC, *r1cs.LC, *r1cs.LC) {}
func (c *nullCS) Push(r1cs.Name)                                  {}
func (c *nullCS) Pop()                                            {}
func (c *nullCS) Constraints() bool                               { return true }

// BenchmarkCompressRecordGadgetSide is the compression's cost of building
// its constraints, without a System's storage.
func BenchmarkCompressRecordGadgetSide(b *testing.B) {
	s := &nullCS{}
	rng := rand.New(rand.NewPCG(1, 1))
	input := makeBits(s, rng, 512, allAllocated)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Compress(s, input, IV())
	}
}
