// Package cudatest gives tests a libc2groth16 to load: the one named by
// $C2G_CUDA_LIB (a real GPU build, or an emulator build), else the CPU
// emulator built from the repository's sources with g++ (docs/cuda.md, "The
// CPU emulator"), once per set of sources: the build is kept in the user's
// cache folder under a hash of the sources and the compiler's command, and
// test processes that start together build it once between them; it is
// built by cuda/build.sh's emulator target. pkg/groth16/cuda's own tests and
// every package that runs a prover on the cuda backend (worker/node) use
// it. It does not import pkg/groth16/cuda, so that package's internal tests
// may import it.
package cudatest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
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
)

// LibraryPath returns $C2G_CUDA_LIB when set, else the CPU emulator of the
// sources as they are (built when no test process built it before) and its
// path. Errors:
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

// Cleanup is called from TestMain after m.Run. The emulator's build stays
// in the cache for the next test process (the key names its sources); it
// removes the cache's builds of other sources than these.
func Cleanup() {
	if libPath == "" || os.Getenv(EnvLibrary) != "" {
		return
	}
	keep := filepath.Dir(libPath)
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(keep), "*"))
	for _, d := range old {
		if d != keep && !strings.HasSuffix(d, ".lock") && strings.HasPrefix(filepath.Base(d), "emu-") {
			unlock, err := lockFile(d + ".lock")
			if err != nil {
				continue
			}
			os.RemoveAll(d)
			unlock()
		}
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

// sourceKey hashes what the emulator is built from: every file under src/
// and test/emu/, build.sh (its emulator target holds g++'s flags), the
// compiler and the ntt unit's extra flags.
func sourceKey(cxx, root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", cxx, os.Getenv("C2G_NTT_FLAGS"))
	add := func(p string) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		return nil
	}
	if err := add(filepath.Join(root, "build.sh")); err != nil {
		return "", err
	}
	for _, dir := range []string{"src", filepath.Join("test", "emu")} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return add(p)
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// lockFile takes an exclusive lock on path (created when missing) and
// returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// buildEmulator returns the cached emulator of the sources under cuda/, or
// compiles them with g++ against the CPU emulation of the CUDA runtime
// (cuda/test/emu) into the cache — under a lock, so that test processes
// that ask at once (go test runs packages side by side) build it once.
func buildEmulator() (string, error) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		return "", ErrNoCompiler
	}
	root, err := sourceRoot()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(cxx, root)
	if err != nil {
		return "", fmt.Errorf("cudatest: hash the emulator's sources: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "c2cluster", "c2g-emu", "emu-"+key)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return "", fmt.Errorf("cudatest: lock the emulator's cache: %w", err)
	}
	defer unlock()
	lib := filepath.Join(dir, "libc2groth16_emu.so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := compileEmulator(cxx, root, tmp); err != nil {
		return "", err
	}
	// the finished build appears whole, under its key
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return lib, nil
}

// compileEmulator builds libc2groth16_emu.so in dir with the library's own
// build script (`cuda/build.sh emulator`: every .cu file of src/ one unit,
// compiled side by side) and keeps only the library.
func compileEmulator(cxx, root, dir string) error {
	cmd := exec.Command("bash", filepath.Join(root, "build.sh"), "emulator")
	cmd.Env = append(os.Environ(), "OUT_DIR="+dir, "CXX="+cxx)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cuda/build.sh emulator: %v: %s", err, out)
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "*.o"))
	for _, o := range objs {
		os.Remove(o)
	}
	return nil
}
