package circuit

import (
	"context"
	"testing"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
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

// BenchmarkWitnessProfile reports how a real partition's values split by
// value code (0 or 1, r − 1, other), per vector: what a backend sending
// codes instead of values, and c2g-bench's synthetic partition
// (-partition-profile porep), rely on.
//
//	go test -run '^$' -bench BenchmarkWitnessProfile -benchtime 1x ./pkg/porep/circuit/
func BenchmarkWitnessProfile(b *testing.B) {
	out := c1test.Lotus(b, "8MiB.json")
	c, err := ForShape(out.Shape)
	if err != nil {
		b.Fatal(err)
	}
	pool := c.NewBufferPool(1)
	defer pool.Close()
	for b.Loop() {
		w, err := c.Synthesize(context.Background(), out, 0, WithBuffers(pool))
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range []struct {
			name  string
			codes []uint8
		}{{"aux", w.Codes.Aux}, {"a", w.Codes.A}, {"b", w.Codes.B}, {"c", w.Codes.C}} {
			var n [4]int
			for _, x := range v.codes {
				n[x]++
			}
			tot := float64(len(v.codes))
			b.ReportMetric(100*float64(n[groth16.CodeZero]+n[groth16.CodeOne])/tot, v.name+"-%01")
			b.ReportMetric(100*float64(n[groth16.CodeMinusOne])/tot, v.name+"-%r-1")
			b.ReportMetric(100*float64(n[groth16.CodeOther])/tot, v.name+"-%other")
		}
		w.Release()
	}
}
