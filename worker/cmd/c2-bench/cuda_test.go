//go:build cgo && !c2nocuda

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda/cudatest"
)

// The whole command on the CUDA backend, on a GPU host: set $C2G_CUDA_LIB
// to a libc2groth16.so built by cuda/build.sh. Without one (CI), or on the
// CPU emulator, it skips and says why.
func TestBenchCUDA(t *testing.T) {
	path := os.Getenv(cuda.EnvLibrary)
	if path == "" {
		t.Skip("cuda backend test skipped: set " + cuda.EnvLibrary + " to a libc2groth16.so built by cuda/build.sh on a GPU host")
	}
	lib, err := cuda.Open(path)
	if err != nil {
		t.Skip("cuda backend test skipped: " + err.Error())
	}
	if n, err := lib.DeviceCount(); err != nil || n == 0 {
		t.Skipf("cuda backend test skipped: no CUDA device (%v)", err)
	}
	info, err := lib.DeviceInfo(0)
	require.NoError(t, err)
	if info.Name == cudatest.EmulatorName {
		t.Skip("cuda backend test skipped: " + path + " is the CPU emulator (minutes per proof); it runs on a real GPU")
	}

	r, _, err := benchRun(t, "-shape", testShape, "-backend", "cuda", "-cuda-library", path, "-devices", "0",
		"-partitions", "2", "-gpu-workers", "2", "-setup-seed", "c2-bench cuda test")
	require.NoError(t, err)
	require.Equal(t, "cuda", r.Backend.Name)
	require.Equal(t, []string{"cuda0"}, r.Backend.Devices)
	require.Contains(t, r.Params.FixedBase, "device 0")
	require.Equal(t, "coset-lagrange", r.Params.HForm, "in-memory parameters: the prover's four-NTT H path")
	require.Equal(t, r.Backend.Residency == "device", r.Backend.HostKeyReleased,
		"the host copy of the parameters is dropped exactly when they are resident in device memory")
	require.True(t, r.Verified)
	require.Equal(t, 2, r.Proofs)
	require.Len(t, r.Runs, 1)
	run := r.Runs[0]
	require.Equal(t, 2, run.Verified)
	for _, p := range run.PartitionsDetail {
		require.True(t, p.Verified, p.Error)
		require.Positive(t, p.Upload)
		require.Positive(t, p.Compute)
		require.Positive(t, p.DeviceBytes)
	}
	require.Positive(t, run.VRAMTaskPeak)
	require.Positive(t, run.Peaks.VRAMUsed[0], "VRAM in use sampled from the library")
	require.Positive(t, r.Backend.VRAMParams[0])
}
