package circuit

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// BenchmarkWitnessProfile reports what share of a 2 KiB partition's
// witness vectors (a, b, c: the constraints' evaluations; aux: the
// variables) is 0, 1, r − 1 or anything else — the classes the GPU MSM and
// any upload encoding can treat apart (docs/perf/cuda.md, tenth session).
// One synthesis per iteration; the shares are metrics, in percent.
//
//	go test -run '^$' -bench BenchmarkWitnessProfile -benchtime 1x ./pkg/porep/circuit/
func BenchmarkWitnessProfile(b *testing.B) {
	out := parseC1(b, sealedC1(b, "2KiB", 1))
	c, err := ForShape(out.Shape)
	require.NoError(b, err)
	var one, minusOne fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	for i := 0; i < b.N; i++ {
		s, err := c.Synthesize(context.Background(), out, i%out.Shape.Partitions)
		require.NoError(b, err)
		for _, v := range []struct {
			name string
			v    []fr.Element
		}{{"a", s.A}, {"b", s.B}, {"c", s.C}, {"aux", s.Aux}} {
			var zero, ones, minus int
			for j := range v.v {
				switch {
				case v.v[j].IsZero():
					zero++
				case v.v[j].Equal(&one):
					ones++
				case v.v[j].Equal(&minusOne):
					minus++
				}
			}
			n := float64(len(v.v)) / 100
			b.ReportMetric(float64(zero)/n, v.name+"-0-%")
			b.ReportMetric(float64(ones)/n, v.name+"-1-%")
			b.ReportMetric(float64(minus)/n, v.name+"-(r-1)-%")
			b.ReportMetric(float64(len(v.v)-zero-ones-minus)/n, v.name+"-other-%")
		}
		s.Release()
	}
}
