package backend

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

func TestNamesAndLookup(t *testing.T) {
	require.Contains(t, Names(), NameAuto)
	require.Contains(t, Names(), NameCPU)
	require.Contains(t, Names(), NameCUDA)
	_, ok := Lookup("fpga")
	require.False(t, ok)
}

func TestSelectCPU(t *testing.T) {
	s, err := Select(NameCPU, Options{}, nil)
	require.NoError(t, err)
	require.Equal(t, NameCPU, s.Factory.Name)
	require.Equal(t, []int{0}, s.Devices)
	require.Contains(t, s.Why, "configured")
	b, err := s.Factory.New(Options{Device: 0, CPUThreads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", b.Name())
	// A real backend: it refuses a nil proving key with an error, not a panic.
	_, err = b.Load(context.Background(), &groth16.ProvingKey{})
	require.Error(t, err)

	_, err = Select(NameCPU, Options{}, []int{1})
	require.ErrorContains(t, err, "device 1 is configured but not present")
	_, err = Select(NameCPU, Options{}, []int{0, 0})
	require.ErrorContains(t, err, "configured twice")
	_, err = s.Factory.New(Options{Device: 2})
	require.ErrorContains(t, err, "one device")
}

// On a host without the CUDA library (CI), auto falls back to the CPU and
// says why; asking for cuda explicitly is an error naming the problem.
func TestSelectAutoFallsBackWithoutGPU(t *testing.T) {
	f, _ := Lookup(NameCUDA)
	if devs, err := f.Probe(Options{}); err == nil && len(devs) > 0 {
		t.Skipf("this host has a usable GPU (devices %v): the fallback cannot be observed", devs)
	}
	s, err := Select(NameAuto, Options{CUDALibrary: "/nonexistent/libc2groth16.so"}, nil)
	require.NoError(t, err)
	require.Equal(t, NameCPU, s.Factory.Name)
	require.Contains(t, s.Why, "auto")
	require.Contains(t, s.Why, "no usable GPU")

	_, err = Select(NameCUDA, Options{CUDALibrary: "/nonexistent/libc2groth16.so"}, nil)
	require.ErrorIs(t, err, ErrUnavailable)
	// The error names what is missing: the library path, or cgo itself.
	require.Regexp(t, "nonexistent|without cgo", err.Error())
}

func TestSelectUnknownAndRegister(t *testing.T) {
	_, err := Select("fpga", Options{}, nil)
	require.ErrorContains(t, err, `"fpga" is not one of auto, cpu, cuda`)
	require.ErrorContains(t, Register(Factory{Name: NameCPU, Probe: func(Options) ([]int, error) { return nil, nil },
		New: func(Options) (groth16.Backend, error) { return nil, nil }}), "already registered")
	require.ErrorContains(t, Register(Factory{Name: NameAuto}), "invalid name")
	require.ErrorContains(t, Register(Factory{Name: "x"}), "Probe and New are required")
}
