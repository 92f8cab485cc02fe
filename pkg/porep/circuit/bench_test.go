package circuit

import (
	"context"
	"testing"
	"time"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/c1/c1test"
)

// BenchmarkSynthesize: one partition synthesized into a pooled buffer set
// (as a worker does), reporting the CPU time of the synthesis's own
// threads per partition (core-s/op) and per million constraints.
//
//	go test -run '^$' -bench BenchmarkSynthesize -benchtime 10x ./pkg/porep/circuit/
func BenchmarkSynthesize(b *testing.B) {
	inputs := []struct {
		name string
		out  func(b *testing.B) *c1.Output
	}{
		{solveShape, func(b *testing.B) *c1.Output { return parseC1(b, sealedC1(b, solveShape, 90)) }},
		{"2KiB (Lotus)", func(b *testing.B) *c1.Output { return c1test.Lotus(b, "2KiB.json") }},
		{"8MiB (Lotus)", func(b *testing.B) *c1.Output { return c1test.Lotus(b, "8MiB.json") }},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			out := in.out(b)
			c, err := ForShape(out.Shape)
			if err != nil {
				b.Fatal(err)
			}
			pool := c.NewBufferPool(1)
			defer pool.Close()
			ctx := context.Background()
			var cpu time.Duration
			for b.Loop() {
				var d time.Duration
				w, err := c.Synthesize(ctx, out, 0, WithBuffers(pool), WithCPUTime(&d))
				if err != nil {
					b.Fatal(err)
				}
				w.Release()
				cpu += d
			}
			per := cpu.Seconds() / float64(b.N)
			b.ReportMetric(per, "core-s/op")
			b.ReportMetric(per/float64(c.Stats().Constraints)*1e6, "core-s/Mconstraint")
		})
	}
}
