package sha254

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark/frontend"

	"github.com/c2cluster/c2cluster/pkg/cputime"
)

// BenchmarkSum: native SHA-254; SetBytes makes `go test` print MB/s, and
// ns/op at 64 bytes is the cost of one two-block tree-D node hash.
func BenchmarkSum(b *testing.B) {
	for _, n := range []int{64, 1248} {
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			msg := randomBytes(rand.New(rand.NewPCG(1, 1)), n)
			b.SetBytes(int64(n))
			cputime.ReportPerOp(b, func() {
				d := Sum(msg)
				msg[0] = d[0]
			})
		})
	}
}

// BenchmarkCryptoSHA256 is the same work without truncation, for reference.
func BenchmarkCryptoSHA256(b *testing.B) {
	msg := randomBytes(rand.New(rand.NewPCG(1, 1)), 64)
	b.SetBytes(64)
	cputime.ReportPerOp(b, func() {
		d := sha256.Sum256(msg)
		msg[0] = d[0]
	})
}

// BenchmarkCircuitLabel compiles and solves the gadget on a 1,248-byte
// message (one SDR label preimage, 20 blocks); reports constraints.
func BenchmarkCircuitLabel(b *testing.B) {
	const n = 1248
	c := &shaCircuit{Msg: make([]frontend.Variable, 8*n), Digest: make([]frontend.Variable, 256)}
	b.Run("compile", func(b *testing.B) {
		for b.Loop() {
			ccs := compile(b, c)
			b.ReportMetric(float64(ccs.GetNbConstraints()), "constraints")
		}
	})
	b.Run("solve", func(b *testing.B) {
		ccs := compile(b, c)
		msg := randomBytes(rand.New(rand.NewPCG(2, 2)), n)
		w, err := frontend.NewWitness(shaAssignment(msg, sha256.Sum256(msg)), fieldOf())
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ccs.Solve(w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
