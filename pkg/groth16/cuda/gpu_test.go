//go:build cgo

package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda/cudatest"
)

var (
	testLibOnce sync.Once
	testLib     *Library
	testLibEmu  bool
	testLibErr  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	cudatest.Cleanup()
	os.Exit(code)
}

// gpu returns the library and device 0 for the device tests: the library
// named by $C2G_CUDA_LIB (a real GPU build, or the emulator), else the CPU
// emulator built from source with g++ (cudatest: so CI runs the kernels'
// code), else it skips the test with the reason; an emulator that does not
// build from the sources fails it.
func gpu(t testing.TB) (*Library, int) {
	t.Helper()
	path := cudatest.Library(t)
	testLibOnce.Do(func() {
		lib, err := Open(path)
		if err != nil {
			testLibErr = "device test skipped: " + err.Error()
			return
		}
		n, err := lib.DeviceCount()
		if err != nil || n == 0 {
			testLibErr = "device test skipped: no CUDA device"
			return
		}
		info, err := lib.DeviceInfo(0)
		if err != nil {
			testLibErr = "device test skipped: " + err.Error()
			return
		}
		testLib = lib
		testLibEmu = info.Name == cudatest.EmulatorName
	})
	if testLib == nil {
		t.Skip(testLibErr)
	}
	return testLib, 0
}

// sized returns small when the device is the (slow) CPU emulator.
func sized[T any](full, small T) T {
	if testLibEmu {
		return small
	}
	return full
}

func TestOpenMissingLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libc2groth16.so")
	_, err := Open(path)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrLibrary), "%v", err)
	require.Contains(t, err.Error(), path)

	// a file that is not a shared object
	require.NoError(t, os.WriteFile(path, []byte("not an ELF file"), 0o644))
	_, err = Open(path)
	require.ErrorIs(t, err, ErrLibrary)
}

func TestSelectFallsBackToCPU(t *testing.T) {
	cfg := Config{LibraryPath: filepath.Join(t.TempDir(), "absent.so")}
	b, why, err := Select(ModeAuto, cfg)
	require.NoError(t, err)
	require.Equal(t, "cpu", b.Name())
	require.True(t, strings.HasPrefix(why, "backend cpu: auto mode"), why)
	require.Contains(t, why, "absent.so")

	_, _, err = Select(ModeCUDA, cfg)
	require.ErrorIs(t, err, ErrLibrary)

	b, why, err = Select(ModeCPU, cfg)
	require.NoError(t, err)
	require.Equal(t, "cpu", b.Name())
	require.Contains(t, why, "configuration")

	_, _, err = Select("tpu", cfg)
	require.ErrorContains(t, err, "tpu")

	_, err = New(Config{Residency: "somewhere"})
	require.ErrorContains(t, err, "residency")
}

func TestDeviceErrorMapping(t *testing.T) {
	for code, want := range map[int]error{codeOOM: ErrDeviceOOM, codeNoDevice: ErrNoDevice, codeInvalid: ErrInvalid,
		codeCUDA: ErrCUDA, codeUnsatisfied: groth16.ErrUnsatisfied, codeInternal: ErrInternal} {
		err := newDeviceError("compute", 1, code, 2, "boom")
		require.ErrorIs(t, err, want)
		require.Contains(t, err.Error(), "device 1")
		require.Contains(t, err.Error(), "boom")
	}
}

func TestDeviceArithmetic(t *testing.T) {
	lib, dev := gpu(t)
	checkArithmetic(t, func(op int, in0, in1, out []byte, n int) error {
		return lib.selftest(dev, op, in0, in1, out, n)
	})
}

func TestDeviceInfoAndBadDevice(t *testing.T) {
	lib, dev := gpu(t)
	info, err := lib.DeviceInfo(dev)
	require.NoError(t, err)
	require.NotEmpty(t, info.Name)
	require.Positive(t, info.TotalBytes)
	require.Positive(t, info.SMs)
	n, err := lib.DeviceCount()
	require.NoError(t, err)
	_, err = lib.DeviceInfo(n)
	require.ErrorIs(t, err, ErrNoDevice)
	_, err = New(Config{LibraryPath: lib.Path(), Device: n})
	require.ErrorIs(t, err, ErrNoDevice)
}

func TestBufferBounds(t *testing.T) {
	lib, dev := gpu(t)
	buf, err := lib.Alloc(dev, 64)
	require.NoError(t, err)
	defer buf.Free()
	var b [128]byte
	err = buf.write(0, unsafe.Pointer(&b[0]), 128)
	require.ErrorIs(t, err, ErrInvalid)
	err = buf.read(60, unsafe.Pointer(&b[0]), 8)
	require.ErrorIs(t, err, ErrInvalid)
	require.NoError(t, buf.write(32, unsafe.Pointer(&b[0]), 32))
}
