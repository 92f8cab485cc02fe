//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

var (
	testLibOnce   sync.Once
	testLib       *Library
	testLibEmu    bool
	testLibErr    string
	testLibBroken bool // the emulator failed to build from the sources (not a missing compiler)
	emuDir        string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if emuDir != "" {
		os.RemoveAll(emuDir)
	}
	os.Exit(code)
}

// EnvEmulator set to "off" keeps the tests from building the CPU emulator
// when $C2G_CUDA_LIB is unset.
const envEmulator = "C2G_CUDA_EMULATOR"

// errNoCompiler: the machine cannot build the emulator (a skip). Any other
// emulator build error is a defect in the sources and fails the tests.
var errNoCompiler = errors.New("no g++ on PATH to build the CPU emulator")

// buildEmulator compiles the library's sources with g++ against the CPU
// emulation of the CUDA runtime (cuda/test/emu) and returns its path.
func buildEmulator() (string, error) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		return "", errNoCompiler
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "..", "cuda"))
	if err != nil {
		return "", err
	}
	emuDir, err = os.MkdirTemp("", "c2g-emu-")
	if err != nil {
		return "", err
	}
	units := []string{"api", "prover", "staging", "ntt", "msm_common", "msm_g1", "msm_g2", "random", "fixedbase", "selftest"}
	errs := make([]error, len(units))
	var wg sync.WaitGroup
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(cxx, "-x", "c++", "-std=c++17", "-O1", "-fPIC", "-I", filepath.Join(root, "test", "emu"),
				"-c", filepath.Join(root, "src", u+".cu"), "-o", filepath.Join(emuDir, u+".o")).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("g++ %s.cu: %v: %s", u, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	lib := filepath.Join(emuDir, "libc2groth16_emu.so")
	args := []string{"-shared", "-o", lib}
	for _, u := range units {
		args = append(args, filepath.Join(emuDir, u+".o"))
	}
	if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("link emulator: %v: %s", err, out)
	}
	return lib, nil
}

// gpu returns the library and device 0 for the device tests: the library
// named by $C2G_CUDA_LIB (a real GPU build, or the emulator), else the CPU
// emulator built from source with g++ (so CI runs the kernels' code), else
// it skips the test with the reason.
func gpu(t testing.TB) (*Library, int) {
	t.Helper()
	testLibOnce.Do(func() {
		path := os.Getenv(EnvLibrary)
		if path == "" {
			if os.Getenv(envEmulator) == "off" {
				testLibErr = "device test skipped: set " + EnvLibrary + " to a libc2groth16.so built by cuda/build.sh"
				return
			}
			var err error
			if path, err = buildEmulator(); err != nil {
				testLibErr = "device test skipped: no " + EnvLibrary + " and no emulator: " + err.Error()
				testLibBroken = !errors.Is(err, errNoCompiler)
				return
			}
		}
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
		testLibEmu = info.Name == emulatorName
	})
	if testLibBroken {
		t.Fatal("the CPU emulator of the CUDA library does not build: " + testLibErr)
	}
	if testLib == nil {
		t.Skip(testLibErr)
	}
	return testLib, 0
}

// emulatorName is the device name the CPU emulator reports.
const emulatorName = "c2g CPU emulator"

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
