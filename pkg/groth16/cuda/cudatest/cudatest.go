// Package cudatest gives tests a libc2groth16 to load: the one named by
// $C2G_CUDA_LIB (a real GPU build, or an emulator build), else the CPU
// emulator built from the repository's sources with g++ (docs/cuda.md, "The
// CPU emulator"), once per test process. pkg/groth16/cuda's own tests and
// every package that runs a prover on the cuda backend (worker/node) use
// it. It does not import pkg/groth16/cuda, so that package's internal tests
// may import it.
package cudatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

const (
	// EnvLibrary names a library to use instead of building the emulator
	// (cuda.EnvLibrary).
	EnvLibrary = "C2G_CUDA_LIB"
	// EnvEmulator set to "off" keeps tests from building the CPU emulator
	// when $C2G_CUDA_LIB is unset (they skip instead).
	EnvEmulator = "C2G_CUDA_EMULATOR"
	// EmulatorName is the device name the CPU emulator reports.
	EmulatorName = "c2g CPU emulator"
)

var (
	// ErrNoCompiler: the machine cannot build the emulator (a skip).
	ErrNoCompiler = errors.New("no g++ on PATH to build the CPU emulator")
	// ErrOff: $C2G_CUDA_EMULATOR=off and no $C2G_CUDA_LIB (a skip).
	ErrOff = errors.New("set " + EnvLibrary + " to a libc2groth16.so built by cuda/build.sh (" + EnvEmulator + "=off)")
)

var (
	once    sync.Once
	libPath string
	libErr  error
	tmpDir  string
)

// LibraryPath returns $C2G_CUDA_LIB when set, else builds the CPU emulator
// (once per process; Cleanup removes it) and returns its path. Errors:
// ErrOff, ErrNoCompiler (skips), or the build's error — a source g++
// cannot compile, a defect that must fail the tests.
func LibraryPath() (string, error) {
	once.Do(func() {
		if p := os.Getenv(EnvLibrary); p != "" {
			libPath = p
			return
		}
		if os.Getenv(EnvEmulator) == "off" {
			libErr = ErrOff
			return
		}
		libPath, libErr = buildEmulator()
	})
	return libPath, libErr
}

// Skippable reports whether err from LibraryPath means "no library here"
// (skip) rather than a broken build (fail).
func Skippable(err error) bool { return errors.Is(err, ErrNoCompiler) || errors.Is(err, ErrOff) }

// Library returns the library's path for a test: it skips the test, saying
// why, when there is none to be had, and fails it when the emulator does
// not build.
func Library(t testing.TB) string {
	t.Helper()
	p, err := LibraryPath()
	switch {
	case err == nil:
		return p
	case Skippable(err):
		t.Skip("cuda test skipped: " + err.Error())
	default:
		t.Fatal("the CPU emulator of the CUDA library does not build: " + err.Error())
	}
	return ""
}

// Cleanup removes the emulator built by LibraryPath (call it from
// TestMain after m.Run).
func Cleanup() {
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
	}
}

// sourceRoot finds the repository's cuda/ folder: beside this source file
// (tests are built from source), else above the working directory.
func sourceRoot() (string, error) {
	isRoot := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "src", "api.cu"))
		return err == nil
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		if d := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "cuda"); isRoot(d) {
			return filepath.Abs(d)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isRoot(filepath.Join(d, "cuda")) {
			return filepath.Join(d, "cuda"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("cudatest: no cuda/src/api.cu above %s", wd)
		}
	}
}

// buildEmulator compiles the library's sources with g++ against the CPU
// emulation of the CUDA runtime (cuda/test/emu) and returns its path.
func buildEmulator() (string, error) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		return "", ErrNoCompiler
	}
	root, err := sourceRoot()
	if err != nil {
		return "", err
	}
	tmpDir, err = os.MkdirTemp("", "c2g-emu-")
	if err != nil {
		return "", err
	}
	// every .cu file of src/ is one unit, as for cuda/build.sh
	sources, err := filepath.Glob(filepath.Join(root, "src", "*.cu"))
	if err != nil || len(sources) == 0 {
		return "", fmt.Errorf("no CUDA sources under %s: %v", filepath.Join(root, "src"), err)
	}
	units := make([]string, len(sources))
	for i, f := range sources {
		units[i] = strings.TrimSuffix(filepath.Base(f), ".cu")
	}
	errs := make([]error, len(units))
	var wg sync.WaitGroup
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(cxx, "-x", "c++", "-std=c++17", "-O1", "-fPIC", "-I", filepath.Join(root, "test", "emu"),
				"-c", filepath.Join(root, "src", u+".cu"), "-o", filepath.Join(tmpDir, u+".o")).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("g++ %s.cu: %v: %s", u, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	lib := filepath.Join(tmpDir, "libc2groth16_emu.so")
	args := []string{"-shared", "-o", lib}
	for _, u := range units {
		args = append(args, filepath.Join(tmpDir, u+".o"))
	}
	if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("link emulator: %v: %s", err, out)
	}
	return lib, nil
}
