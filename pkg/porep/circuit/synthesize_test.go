package circuit

import (
	"context"
	"fmt"
	"testing"

	"github.com/consensys/gnark/backend/witness"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
)

// TestSynthesizePerTemplate checks the per-template synthesis against gnark's
// solver on the whole partition system (withWholeSolve), byte for byte:
// Input, Aux, A, B, C and the densities, for every partition of sealed C1s
// of shapes of one and of two challenges per partition, with the B
// balancing (the default) and without. A tampered path element of the last
// challenge is ErrUnsatisfied naming that challenge; a cancelled context
// stops it.
func TestSynthesizePerTemplate(t *testing.T) {
	shapes := []string{proveShape, solveShape, "test-tiny"}
	for i, shape := range shapes {
		for _, keepB := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keepB=%v", shape, keepB), func(t *testing.T) {
				p := mustParams(t, shape)
				var opts []Option
				if keepB {
					opts = append(opts, withKeepB())
				}
				c, err := Compile(p, opts...)
				require.NoError(t, err)
				require.NotNil(t, c.templates)
				if !keepB {
					require.Positive(t, c.turned.count, "balanceB turned some constraints")
				}
				out := parseC1(t, sealedC1(t, shape, uint64(40+i)))
				ctx := context.Background()
				for k := range out.Shape.Partitions {
					got, err := c.Synthesize(ctx, out, k)
					require.NoError(t, err)
					want, err := c.Synthesize(ctx, out, k, withWholeSolve())
					require.NoError(t, err)
					require.Equal(t, want.NumConstraints, got.NumConstraints)
					require.Equal(t, want.Input, got.Input, "partition %d input", k)
					require.Equal(t, want.Aux, got.Aux, "partition %d aux", k)
					require.Equal(t, want.A, got.A, "partition %d A", k)
					require.Equal(t, want.B, got.B, "partition %d B", k)
					require.Equal(t, want.C, got.C, "partition %d C", k)
					require.Equal(t, cap(want.A), cap(got.A), "A has the domain's capacity")
					require.Equal(t, want.ADensityAux, got.ADensityAux)
					require.Equal(t, want.BDensityAux, got.BDensityAux)
					require.Equal(t, want.BDensityInput, got.BDensityInput)
				}
				if keepB {
					return
				}

				cancelled, cancel := context.WithCancel(ctx)
				cancel()
				_, err = c.solveTemplates(cancelled, mustWitness(t, c, out, 0), 0)
				require.ErrorIs(t, err, context.Canceled)

				last := out.VanillaProofs.Partitions()[out.Shape.Partitions-1]
				j := len(last) - 1
				last[j].ReplicaColumnProofs.CX.InclusionProof.Data.Single.Path.Path[0].Hashes[0][5] ^= 1
				_, err = c.Synthesize(ctx, out, out.Shape.Partitions-1)
				require.ErrorIs(t, err, ErrUnsatisfied)
				require.ErrorContains(t, err, fmt.Sprintf("challenge %d", j))
				_, err = c.Synthesize(ctx, out, out.Shape.Partitions-1, withWholeSolve())
				require.ErrorIs(t, err, ErrUnsatisfied, "the oracle agrees")
			})
		}
	}
}

func mustWitness(t *testing.T, c *Compiled, out *c1.Output, k int) witness.Witness {
	t.Helper()
	w, err := c.Witness(out, k)
	require.NoError(t, err)
	return w
}
