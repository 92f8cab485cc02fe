package circuit

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/stacked"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// reference synthesizes partition k the slow, independent way: the whole
// StackedCircuit recorded with values in an r1cs.System (every gadget on
// its generic path, linear combinations built and evaluated one by one),
// checked for satisfaction, and groth16's reference synthesis of it.
func reference(t *testing.T, out *c1.Output, k int) *groth16.Synthesized {
	t.Helper()
	inst, err := stacked.FromC1(out, k)
	require.NoError(t, err)
	sys := r1cs.NewSystem(r1cs.WithValues())
	require.NoError(t, inst.Synthesize(sys))
	require.NoError(t, sys.Satisfied())
	w, err := groth16.SynthesizeSystem(sys)
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

// TestSynthesizeMatchesReference: the fast synthesis (witness-only
// generation per challenge, native SHA-256 and Poseidon values, the
// template's evaluation) equals the whole circuit recorded with values and
// evaluated term by term, for shapes of one and several challenges.
func TestSynthesizeMatchesReference(t *testing.T) {
	for i, shape := range []string{proveShape, solveShape} {
		t.Run(shape, func(t *testing.T) {
			c, err := ForShape(mustShape(t, shape))
			require.NoError(t, err)
			out := parseC1(t, sealedC1(t, shape, uint64(40+i)))
			for k := range out.Shape.Partitions {
				got, err := c.Synthesize(context.Background(), out, k)
				require.NoError(t, err)
				requireSameSynthesis(t, reference(t, out, k), got, k)
			}
		})
	}
}

// TestSynthesizeIntoDirtyBuffers: synthesized into a pooled set holding
// garbage, partitions equal fresh syntheses (every element written, the
// domain's capacity kept) and carry the value code of every value; the
// pool hands out the same memory every time; a failed synthesis gives its
// set back; a Get waiting on a full pool honours the context.
func TestSynthesizeIntoDirtyBuffers(t *testing.T) {
	for i, shape := range []string{proveShape, solveShape} {
		t.Run(shape, func(t *testing.T) {
			c, err := Compile(mustShape(t, shape))
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

			// A pool of another circuit (another compilation of the same
			// shape) is refused.
			other, err := Compile(mustShape(t, shape))
			require.NoError(t, err)
			_, err = c.Synthesize(ctx, parseC1(t, sealedC1(t, shape, 1)), 0, WithBuffers(other.NewBufferPool(1)))
			require.ErrorContains(t, err, "another circuit")
		})
	}
}

// TestSynthesizeWaitsForCores: with every core of the process's solve gate
// taken, a synthesis waits for one; when its context ends there it returns
// the context's error and gives its buffer set back; with the cores free
// again, the next synthesis is the reference's.
func TestSynthesizeWaitsForCores(t *testing.T) {
	c, err := Compile(mustShape(t, solveShape))
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
	waitQueued(solves, 1) // the head waits
	require.Equal(t, 1, pool.Stats().InUse)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	require.Equal(t, 0, pool.Stats().InUse, "the set came back")
	for range held {
		solves.release()
	}
	got, err := c.Synthesize(ctx, out, 0, WithBuffers(pool))
	require.NoError(t, err)
	requireSameSynthesis(t, reference(t, out, 0), got, 0)
	got.Release()
}

// TestSynthesizeConcurrently runs several syntheses of one compiled circuit
// at once (a worker with several slots) and compares them with sequential
// ones.
func TestSynthesizeConcurrently(t *testing.T) {
	s := mustShape(t, solveShape)
	c, err := ForShape(s)
	require.NoError(t, err)
	out := parseC1(t, sealedC1(t, solveShape, 8))
	ctx := context.Background()
	want := make([]*groth16.Synthesized, s.Partitions)
	for k := range want {
		want[k], err = c.Synthesize(ctx, out, k)
		require.NoError(t, err)
	}
	got := make([]*groth16.Synthesized, 2*s.Partitions)
	errs := make([]error, len(got))
	done := make(chan struct{})
	for i := range got {
		go func() {
			got[i], errs[i] = c.Synthesize(ctx, out, i%s.Partitions)
			done <- struct{}{}
		}()
	}
	for range got {
		<-done
	}
	for i := range got {
		require.NoError(t, errs[i])
		k := i % s.Partitions
		requireSameSynthesis(t, want[k], got[i], k)
	}
}
