package poseidon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/c2cluster/c2cluster/pkg/cputime"
)

var benchArities = []int{1, 2, 4, 8, 11, 16}

// BenchmarkHash: the native optimised hash, ns per hash for each arity.
func BenchmarkHash(b *testing.B) {
	for _, arity := range benchArities {
		b.Run(fmt.Sprintf("arity=%d", arity), func(b *testing.B) {
			h, err := NewHasher(arity)
			if err != nil {
				b.Fatal(err)
			}
			in := randomElements(rand.New(rand.NewPCG(1, 1)), arity)
			var out fr.Element
			b.ReportAllocs()
			cputime.ReportPerOp(b, func() {
				h.HashTo(&out, in)
				in[0] = out
			})
		})
	}
}

// BenchmarkHashTextbook: the round-by-round form, for the speed-up ratio.
func BenchmarkHashTextbook(b *testing.B) {
	for _, arity := range benchArities {
		b.Run(fmt.Sprintf("arity=%d", arity), func(b *testing.B) {
			p, err := paramsFor(arity)
			if err != nil {
				b.Fatal(err)
			}
			in := randomElements(rand.New(rand.NewPCG(1, 1)), arity)
			cputime.ReportPerOp(b, func() { in[0] = hashTextbook(p, in) })
		})
	}
}

// BenchmarkSolve: solving the compiled gadget (witness generation), per hash.
func BenchmarkSolve(b *testing.B) {
	for _, arity := range []int{2, 8, 11} {
		b.Run(fmt.Sprintf("arity=%d", arity), func(b *testing.B) {
			ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &hashCircuit{In: make([]frontend.Variable, arity)})
			if err != nil {
				b.Fatal(err)
			}
			in := randomElements(rand.New(rand.NewPCG(2, 2)), arity)
			digest := Hash(in)
			w := &hashCircuit{In: make([]frontend.Variable, arity), Digest: digest.String()}
			for i := range in {
				w.In[i] = in[i].String()
			}
			wit, err := frontend.NewWitness(w, ecc.BLS12_381.ScalarField())
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := ccs.Solve(wit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
