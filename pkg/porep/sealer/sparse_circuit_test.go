package sealer_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
)

// TestSparseC1SatisfiesCircuit solves every partition circuit of sparse C1
// documents with the compiled circuit of pkg/porep/circuit (the worker's
// synthesis path), on the two cheapest multi-partition shapes; a changed
// parent label makes the circuit unsatisfied. (32 GiB partitions of sparse
// C1s are synthesized, proved and verified by c2-bench on a GPU host:
// docs/perf/README.md, "End to end on the H200".)
func TestSparseC1SatisfiesCircuit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"test-micro", "test-mini"} {
		var buf bytes.Buffer
		_, err := sealer.WriteSparseC1(ctx, sealer.SparseC1Config{Shape: name, Seed: 21}, &buf)
		require.NoError(t, err)
		out, err := c1.ParseBytes(buf.Bytes())
		require.NoError(t, err)
		c, err := circuit.ForShape(out.Shape)
		require.NoError(t, err)
		for k := range out.Shape.Partitions {
			_, err := c.Synthesize(ctx, out, k)
			require.NoError(t, err, "%s partition %d", name, k)
		}
		p := &out.VanillaProofs.Partitions()[0][0].ReplicaColumnProofs.DrgParents[0]
		p.Column.Rows[out.Shape.Layers-1][0] ^= 1
		_, err = c.Synthesize(ctx, out, 0)
		require.ErrorIs(t, err, circuit.ErrUnsatisfied, name)
	}
}
