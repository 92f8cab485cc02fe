package poseidon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/cputime"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	native "github.com/c2cluster/c2cluster/pkg/poseidon"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// BenchmarkWitness: witness generation per hash, through the circuit path
// (linear combinations built and dropped: "generic") and the native path
// ("fast"), both into a Witness reused across iterations; "system" records
// the constraints as well (synthesis).
func BenchmarkWitness(b *testing.B) {
	for _, arity := range []int{2, 8, 11} {
		c, err := native.OptimizedConstants(arity)
		if err != nil {
			b.Fatal(err)
		}
		vals := randomValues(rand.New(rand.NewPCG(9, 9)), arity)
		pre := make([]num.AllocatedNum, arity)
		for i := range pre {
			pre[i] = num.AllocatedNum{V: r1cs.Aux(i), Val: vals[i]}
		}
		inputs := []fr.Element{fr.One()}
		aux := make([]fr.Element, arity+numAllocs(c))
		copy(aux, vals)
		b.Run(fmt.Sprintf("arity=%d/generic", arity), func(b *testing.B) {
			cputime.ReportPerOp(b, func() {
				hashCircuit(r1cs.NewWitnessAt(inputs, aux, 1, arity), c, pre)
			})
		})
		b.Run(fmt.Sprintf("arity=%d/fast", arity), func(b *testing.B) {
			b.ReportAllocs()
			cputime.ReportPerOp(b, func() {
				if _, err := Hash(r1cs.NewWitnessAt(inputs, aux, 1, arity), pre); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("arity=%d/system", arity), func(b *testing.B) {
			cputime.ReportPerOp(b, func() {
				s := r1cs.NewSystem()
				for range arity {
					s.Alloc(r1cs.N("num"), fr.Element{})
				}
				if _, err := Hash(s, pre); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
