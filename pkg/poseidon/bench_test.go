package poseidon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

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
