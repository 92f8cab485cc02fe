//go:build cgo && !c2nocuda

package node_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda/cudatest"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/worker/interlock"
	"github.com/c2cluster/c2cluster/worker/node"
)

// cloneKey copies pk's points, so that nothing but the test's ShapeParams
// references the copy (params(t) keeps the package's own key alive).
func cloneKey(pk *groth16.ProvingKey) *groth16.ProvingKey {
	return &groth16.ProvingKey{VK: pk.VK, H: slices.Clone(pk.H), L: slices.Clone(pk.L),
		A: slices.Clone(pk.A), BG1: slices.Clone(pk.BG1), BG2: slices.Clone(pk.BG2)}
}

// TestProverCUDAReleasesHostKey runs a Prover on the cuda backend (a real
// GPU through $C2G_CUDA_LIB, else the CPU emulator built from the sources;
// skipped without g++). With the parameters resident in device memory the
// ShapeParams drops its host proving key and the points are collected
// (weak pointer, GC), the verifying key stays, a partition still proves
// and verifies through a slot on a GPU (on the emulator it is cancelled
// as its compute starts), its witness buffers back in the pool once
// uploaded, before the compute (the cuda task's WitnessHolder), and the
// released parameters cannot be loaded onto another prover. With pinned
// residency the device reads the host points, so they stay.
func TestProverCUDAReleasesHostKey(t *testing.T) {
	lib := cudatest.Library(t)
	base := params(t)
	ctx := context.Background()
	compiled := compiledShape(t)
	out, err := c1.ParseBytes(sealedC1(t, 21))
	require.NoError(t, err)

	t.Run("pinned", func(t *testing.T) {
		pk := cloneKey(base)
		points := weak.Make(&pk.L[0])
		sp, err := node.NewShapeParams(testShape, compiled, pk)
		require.NoError(t, err)
		pk = nil
		p, err := node.NewProver(ctx, node.Config{ID: "pinned", Backend: "cuda", CUDALibrary: lib, Residency: "pinned"}, sp)
		require.NoError(t, err)
		defer p.Close()
		require.Equal(t, "pinned", p.Residency(testShape))
		require.False(t, sp.HostKeyReleased())
		runtime.GC()
		runtime.GC()
		require.NotNil(t, points.Value(), "a pinned key reads the host points: they must stay")
	})

	pk := cloneKey(base)
	points := weak.Make(&pk.L[0])
	sp, err := node.NewShapeParams(testShape, compiled, pk)
	require.NoError(t, err)
	pk = nil
	// On the CPU emulator the partition's compute (about two minutes of
	// both CI cores) is cancelled as it starts: the proof itself on the
	// emulator is pkg/groth16/cuda's tests' (TestProveMatchesCPU); here
	// what matters is the slot's path around it.
	emulated := emulator(t, lib)
	proveCtx, cancelProof := context.WithCancel(ctx)
	defer cancelProof()
	var p *node.Prover
	inUseAtCompute := -1
	observe := func(e interlock.Event) {
		if e.Kind == interlock.EventStageStart && e.Stage == interlock.StageCompute {
			inUseAtCompute = p.BufferStats(testShape).InUse
			if emulated {
				cancelProof()
			}
		}
	}
	p, err = node.NewProver(ctx, node.Config{ID: "resident", Backend: "cuda", CUDALibrary: lib, Residency: "device",
		Observer: observe}, sp)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, "cuda", p.Backend())
	require.Equal(t, "device", p.Residency(testShape))
	require.True(t, sp.HostKeyReleased())
	runtime.GC()
	runtime.GC()
	require.Nil(t, points.Value(), "the host proving key is still referenced after every device holds it resident")
	require.Equal(t, base.VK, *sp.VerifyingKey(), "the verifying key outlives the proving key")

	// One partition: proved and verified on a GPU, cancelled at its
	// compute on the emulator.
	const k = 1
	res, err := p.Slots()[0].ProvePartition(proveCtx, testShape, out, k, nil)
	if emulated {
		require.ErrorIs(t, err, context.Canceled)
	} else {
		require.NoError(t, err)
		in, err := circuit.PublicInputs(out, k)
		require.NoError(t, err)
		require.NoError(t, groth16.Verify(&base.VK, res.Proof, in))
		require.Positive(t, res.Interlock.Backend.Upload)
	}
	require.Equal(t, 0, inUseAtCompute, "the witness buffers went back to the pool after the upload, before the compute")
	st := p.BufferStats(testShape)
	require.Equal(t, int64(1), st.Allocated)
	require.Equal(t, 0, st.InUse)
	// pin_buffers (default on) page-locked the set when the pool allocated
	// it, so the upload went straight from it (the direct path itself:
	// pkg/groth16/cuda TestProveRegisteredWitness)
	require.Equal(t, 1, st.Pinned, "the set was registered with the library")
	require.Zero(t, st.PinFailures)

	_, err = node.NewProver(ctx, node.Config{ID: "again", Backend: "cuda", CUDALibrary: lib, Residency: "device"}, sp)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "released")
}

// emulator reports whether the library at path is the CPU emulator.
func emulator(t *testing.T, path string) bool {
	t.Helper()
	lib, err := cuda.Open(path)
	require.NoError(t, err)
	info, err := lib.DeviceInfo(0)
	require.NoError(t, err)
	return info.Name == cudatest.EmulatorName
}
