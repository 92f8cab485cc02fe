//go:build cgo

package cuda

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/c1/c1test"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
)

// TestPoRepPartitionMatchesCPU proves every partition of PoRep circuits
// (bellperson's R1CS, pkg/porep/circuit) on the GPU with parameters of
// bellperson's structure from our generator, and requires, for each, the
// CPU backend's bytes with the same r, s and a proof that the verifying key
// accepts for the partition's public inputs: really sealed sectors of
// every test shape, and the C1 outputs Lotus made for real 2 KiB and 8 MiB
// sectors (when ../shared/fixtures is present).
func TestPoRepPartitionMatchesCPU(t *testing.T) {
	lib, dev := gpu(t)
	if testLibEmu {
		t.Skip("PoRep shapes skipped on the CPU emulator (minutes per proof there): runs on a real GPU")
	}
	if testing.Short() {
		t.Skip("PoRep shapes: setup and sealing take a while; skipped with -short")
	}
	for _, tc := range []struct {
		name string
		c1   func(t *testing.T) []byte
	}{
		{"test-micro", func(t *testing.T) []byte { return poreptest.SealedC1(t, "test-micro", 11) }},
		{"test-mini", func(t *testing.T) []byte { return poreptest.SealedC1(t, "test-mini", 12) }},
		{"test-tiny", func(t *testing.T) []byte { return poreptest.SealedC1(t, "test-tiny", 13) }},
		{"test-sub", func(t *testing.T) []byte { return poreptest.SealedC1(t, "test-sub", 14) }},
		{"test-top", func(t *testing.T) []byte { return poreptest.SealedC1(t, "test-top", 15) }},
		{"test-11layers", func(t *testing.T) []byte { return poreptest.SealedC1(t, "test-11layers", 16) }},
		{"2KiB", func(t *testing.T) []byte { return c1test.LotusDoc(t, "2KiB.json") }},
		{"8MiB", func(t *testing.T) []byte { return c1test.LotusDoc(t, "8MiB.json") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			out, err := c1.ParseBytes(tc.c1(t))
			require.NoError(t, err)
			compiled, err := circuit.ForShape(out.Shape)
			require.NoError(t, err)
			fb, _, err := SelectFixedBase(ModeAuto, Config{LibraryPath: lib.Path(), Device: dev})
			require.NoError(t, err)
			pk, err := compiled.Keys(ctx, groth16.SetupSeed([]byte("cuda-porep-partition-test "+tc.name)), groth16.SetupFixedBase(fb))
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

			for k := 0; k < out.Shape.Partitions; k++ {
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
		})
	}
}
