package circuit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/consensys/gnark/backend/witness"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
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
					requireSameSynthesis(t, want, got, k)
				}
				if keepB {
					return
				}

				cancelled, cancel := context.WithCancel(ctx)
				cancel()
				_, err = c.solveTemplates(cancelled, mustWitness(t, c, out, 0), 0, nil, nil)
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

// TestSynthesizeIntoDirtyBuffers: partitions synthesized into one reused
// set of buffers (WithBuffers) — filled with garbage first, then holding
// the previous partition — equal fresh syntheses byte for byte (Input, Aux,
// A, B, C, and the same capacity) and carry the value code of every value
// (garbage codes overwritten), for shapes of one and of two challenges
// per partition; the pool hands out the same memory every time; a failed
// synthesis gives its set back; a Get waiting on a full pool honours the
// context.
func TestSynthesizeIntoDirtyBuffers(t *testing.T) {
	for i, shape := range []string{proveShape, solveShape, "test-tiny"} {
		t.Run(shape, func(t *testing.T) {
			c, err := Compile(mustParams(t, shape))
			require.NoError(t, err)
			out := parseC1(t, sealedC1(t, shape, uint64(60+i)))
			ctx := context.Background()
			pool := c.NewBufferPool(1)
			b, err := pool.Get(ctx)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(uint64(i), 2))
			for _, v := range [][]fr.Element{b.Wires, b.A[:cap(b.A)], b.B[:cap(b.B)], b.C[:cap(b.C)]} {
				for j := range v {
					for l := range v[j] {
						v[j][l] = r.Uint64()
					}
				}
			}
			for _, v := range [][]uint8{b.WireCodes, b.ACodes[:cap(b.ACodes)], b.BCodes[:cap(b.BCodes)], b.CCodes[:cap(b.CCodes)]} {
				for j := range v {
					v[j] = uint8(r.Uint32())
				}
			}
			first := &b.Wires[0]
			b.Release()
			n := 0
			for round := range 2 {
				for k := range out.Shape.Partitions {
					want, err := c.Synthesize(ctx, out, k)
					require.NoError(t, err)
					got, err := c.Synthesize(ctx, out, k, WithBuffers(pool))
					require.NoError(t, err)
					n++
					require.Same(t, first, &got.Input[0], "round %d partition %d: the pooled set", round, k)
					requireSameSynthesis(t, want, got, k)
					require.NotNil(t, got.Codes, "a pooled set keeps value codes")
					require.NoError(t, got.CheckCodes(), "round %d partition %d", round, k)

					// The set is in use: another synthesis waits for it.
					cancelled, cancel := context.WithCancel(ctx)
					cancel()
					_, err = c.Synthesize(cancelled, out, k, WithBuffers(pool))
					require.ErrorIs(t, err, context.Canceled)
					got.Release()
				}
			}
			st := pool.Stats()
			require.Equal(t, int64(1), st.Allocated)
			require.Equal(t, int64(n), st.Reused)
			require.Equal(t, 0, st.InUse)

			// A failed synthesis gives its set back.
			last := out.VanillaProofs.Partitions()[0]
			last[len(last)-1].ReplicaColumnProofs.CX.InclusionProof.Data.Single.Path.Path[0].Hashes[0][5] ^= 1
			_, err = c.Synthesize(ctx, out, 0, WithBuffers(pool))
			require.ErrorIs(t, err, ErrUnsatisfied)
			st = pool.Stats()
			require.Equal(t, 0, st.InUse)
			require.Equal(t, int64(n+1), st.Reused)

			// A pool of another circuit (here another compilation of the
			// same shape) is refused.
			if shape == proveShape {
				other, err := Compile(mustParams(t, shape))
				require.NoError(t, err)
				_, err = c.Synthesize(ctx, parseC1(t, sealedC1(t, shape, 1)), 0, WithBuffers(other.NewBufferPool(1)))
				require.ErrorContains(t, err, "another circuit")
			}
		})
	}
}

func mustWitness(t *testing.T, c *Compiled, out *c1.Output, k int) witness.Witness {
	t.Helper()
	w, err := c.Witness(out, k)
	require.NoError(t, err)
	return w
}

// requireSameSynthesis requires got to be want, field for field, with the
// domain's capacity in A (partition k in the messages).
func requireSameSynthesis(t *testing.T, want, got *groth16.Synthesized, k int) {
	t.Helper()
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

// TestSynthesizeWaitsForCores: with every core of the process's solve gate
// taken, a synthesis waits for one; when its context ends there it returns
// the context's error and gives its buffer set back; with the cores free
// again, the next synthesis gives gnark's whole-system solution.
func TestSynthesizeWaitsForCores(t *testing.T) {
	c, err := Compile(mustParams(t, solveShape))
	require.NoError(t, err)
	out := parseC1(t, sealedC1(t, solveShape, 71))
	ctx := context.Background()
	pool := c.NewBufferPool(1)
	defer pool.Close()
	held := solves.limit()
	for range held {
		require.NoError(t, solves.acquire(ctx, 0))
	}
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		s, err := c.Synthesize(cctx, out, 0, WithBuffers(pool))
		if err == nil {
			s.Release()
		}
		errc <- err
	}()
	waitQueued(solves, 1) // the head's solve waits
	require.Equal(t, 1, pool.Stats().InUse)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	require.Equal(t, 0, pool.Stats().InUse, "the set came back")
	for range held {
		solves.release()
	}
	want, err := c.Synthesize(ctx, out, 0, withWholeSolve())
	require.NoError(t, err)
	got, err := c.Synthesize(ctx, out, 0, WithBuffers(pool))
	require.NoError(t, err)
	requireSameSynthesis(t, want, got, 0)
	got.Release()
}
