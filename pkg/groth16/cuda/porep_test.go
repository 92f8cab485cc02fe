package cuda

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
)

// TestPoRepPartitionMatchesCPU proves every partition of a really sealed
// test-micro sector (250,569 constraints, domain 2^18) on the GPU and
// requires, for each, the CPU backend's bytes with the same r, s and a
// proof that the verifying key accepts for the partition's public inputs.
func TestPoRepPartitionMatchesCPU(t *testing.T) {
	lib, dev := gpu(t)
	if testLibEmu {
		t.Skip("PoRep test shape skipped on the CPU emulator (minutes per proof there): runs on a real GPU")
	}
	if testing.Short() {
		t.Skip("PoRep test shape: setup and sealing take a while; skipped with -short")
	}
	const shapeName = "test-micro"
	ctx := context.Background()
	shape, err := porep.ShapeByName(shapeName)
	require.NoError(t, err)
	pk := poreptest.Params(t, t.TempDir(), shapeName, "cuda-porep-partition-test")
	out, err := c1.ParseBytes(poreptest.SealedC1(t, shapeName, 11))
	require.NoError(t, err)
	compiled, err := circuit.ForShape(shape)
	require.NoError(t, err)
	pvk, err := groth16.PrepareVerifyingKey(&pk.VK)
	require.NoError(t, err)

	b, err := New(Config{LibraryPath: lib.Path(), Device: dev, Residency: ResidencyDevice})
	require.NoError(t, err)
	key, err := b.Load(ctx, pk)
	require.NoError(t, err)
	defer func() { require.NoError(t, key.Close()) }()
	cpu, err := groth16.NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	defer func() { require.NoError(t, cpu.Close()) }()

	require.Greater(t, shape.Partitions, 1)
	for k := 0; k < shape.Partitions; k++ {
		syn, err := compiled.Synthesize(ctx, out, k)
		require.NoError(t, err)
		rnd := fixedRnd(uint64(1000+k), uint64(2000+k))
		want, _, err := groth16.Prove(ctx, cpu, syn, rnd)
		require.NoError(t, err)
		task, err := key.Prepare(ctx, syn, rnd)
		require.NoError(t, err)
		require.NoError(t, task.Upload(ctx))
		require.NoError(t, task.Compute(ctx))
		got, err := task.Finish(ctx)
		require.NoError(t, err)
		task.Release()
		require.Equal(t, proofBytes(t, want), proofBytes(t, got), "partition %d", k)
		inputs, err := circuit.PublicInputs(out, k)
		require.NoError(t, err)
		require.NoError(t, pvk.Verify(got, inputs), "partition %d", k)
	}
}
