package circuit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// ParamsPath is where a shape's proving parameters live in a parameters
// folder: <dir>/<shape>.params (bellperson layout). Workers read it; the
// coordinator reads the verifying key beside it (VKPath).
func ParamsPath(dir, shape string) string { return filepath.Join(dir, shape+".params") }

// VKPath is the verifying key beside a shape's parameters: <dir>/<shape>.vk.
func VKPath(dir, shape string) string { return filepath.Join(dir, shape+".vk") }

// MakeParamsCommand is the command line that makes a test shape's
// parameters in dir: "c2-params -dir DIR -shapes SHAPE", with dir made
// absolute (it names the folder of the process that reports it) and quoted
// for a POSIX shell when it needs to be. Errors about missing test-shape
// parameters end with it.
func MakeParamsCommand(dir, shape string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return "c2-params -dir " + shellQuote(dir) + " -shapes " + shellQuote(shape)
}

// shellQuote quotes s for a POSIX shell unless it consists of characters
// that need no quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SetupConfig says where and how to write a shape's Groth16 parameters.
type SetupConfig struct {
	// ParamsPath and VKPath are the output files (bellperson .params and .vk
	// layouts). Both are required; they are written through temporary files
	// in the same directory and renamed into place, so a crash leaves no
	// half-written parameters behind.
	ParamsPath string
	VKPath     string
	// Seed, when set, makes the toxic waste a deterministic function of it.
	// Only for tests and fixtures: whoever knows the seed can forge proofs.
	// Empty (the default) draws it from crypto/rand.
	Seed []byte
	// Progress receives the stages: compile, the engine's setup stages,
	// write.
	Progress groth16.Progress
	// FixedBase, when set, runs the fixed-base scalar multiplications (on a
	// GPU: cuda.SelectFixedBase); nil uses the CPU.
	FixedBase groth16.FixedBase
	// FingerprintPath, when set, receives the compiled circuit's
	// Fingerprint (FingerprintPath(dir, shape) beside the parameters),
	// so that a cache can tell parameters made for another circuit layout
	// (Compiled.CheckFingerprint). Setup removes an old one before it
	// writes anything and writes the new one last: until then a crash
	// leaves no fingerprint, and the parameters are made again.
	FingerprintPath string
}

func (c *SetupConfig) validate() error {
	switch {
	case c.ParamsPath == "":
		return fmt.Errorf("circuit: setup: SetupConfig.ParamsPath is empty")
	case c.VKPath == "":
		return fmt.Errorf("circuit: setup: SetupConfig.VKPath is empty")
	case filepath.Clean(c.ParamsPath) == filepath.Clean(c.VKPath):
		return fmt.Errorf("circuit: setup: SetupConfig.ParamsPath and VKPath are the same file %q", c.ParamsPath)
	case c.FingerprintPath != "" && (filepath.Clean(c.FingerprintPath) == filepath.Clean(c.ParamsPath) || filepath.Clean(c.FingerprintPath) == filepath.Clean(c.VKPath)):
		return fmt.Errorf("circuit: setup: SetupConfig.FingerprintPath %q is also the parameters or verifying key file", c.FingerprintPath)
	}
	return nil
}

// Setup compiles the partition circuit of shape s, runs the Groth16 setup on
// it (Keys) and writes the proving parameters and the verifying key. It returns the
// proving key it wrote. The output files are opened (as temporary files next
// to their destinations) before the long work starts, so an unwritable
// destination fails at once.
func Setup(ctx context.Context, s *porep.Shape, cfg SetupConfig) (pk *groth16.ProvingKey, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, int64, int64) {}
	}
	pf, err := createTemp(cfg.ParamsPath)
	if err != nil {
		return nil, fmt.Errorf("circuit: setup: %w", err)
	}
	defer discard(pf, &err)
	vf, err := createTemp(cfg.VKPath)
	if err != nil {
		return nil, fmt.Errorf("circuit: setup: %w", err)
	}
	defer discard(vf, &err)
	if err := removeFingerprint(cfg.FingerprintPath); err != nil {
		return nil, fmt.Errorf("circuit: setup: %w", err)
	}

	c, err := ForShape(s, WithProgress(progress))
	if err != nil {
		return nil, err
	}
	opts := []groth16.SetupOption{groth16.SetupProgress(progress)}
	if len(cfg.Seed) > 0 {
		opts = append(opts, groth16.SetupSeed(cfg.Seed))
	}
	if cfg.FixedBase != nil {
		opts = append(opts, groth16.SetupFixedBase(cfg.FixedBase))
	}
	pk, err = c.Keys(ctx, opts...)
	if err != nil {
		return nil, err
	}
	const stage = "circuit: write parameters"
	progress(stage, 0, 2)
	if err = finish(pf, cfg.ParamsPath, func() error { return groth16.WriteParams(pf, pk) }); err != nil {
		return nil, fmt.Errorf("circuit: setup %q: write %s: %w", s.Name, cfg.ParamsPath, err)
	}
	progress(stage, 1, 2)
	if err = finish(vf, cfg.VKPath, func() error { return groth16.WriteVerifyingKey(vf, &pk.VK) }); err != nil {
		return nil, fmt.Errorf("circuit: setup %q: write %s: %w", s.Name, cfg.VKPath, err)
	}
	if cfg.FingerprintPath != "" {
		if err = c.WriteFingerprint(ctx, cfg.FingerprintPath); err != nil {
			return nil, fmt.Errorf("circuit: setup %q: write %s: %w", s.Name, cfg.FingerprintPath, err)
		}
	}
	progress(stage, 2, 2)
	return pk, nil
}

// WriteParams writes parameters made for c (in memory, e.g. by a
// benchmark) where Setup would: the .params and .vk files (each atomically)
// and, last, c's fingerprint, after removing any old one first.
func (c *Compiled) WriteParams(pk *groth16.ProvingKey, paramsPath, vkPath, fingerprintPath string) error {
	if err := removeFingerprint(fingerprintPath); err != nil {
		return err
	}
	if err := groth16.WriteParamsFile(paramsPath, pk); err != nil {
		return err
	}
	if err := groth16.WriteVerifyingKeyFile(vkPath, &pk.VK); err != nil {
		return err
	}
	return c.WriteFingerprint(context.Background(), fingerprintPath)
}

// Keys runs the Groth16 setup on the circuit (groth16.SetupR1CS on the
// replayed template: bellperson's generator rules and layout) and returns
// the proving key, after checking that the key's densities are the
// circuit's (the prover's).
func (c *Compiled) Keys(ctx context.Context, opts ...groth16.SetupOption) (*groth16.ProvingKey, error) {
	pk, d, err := groth16.SetupR1CS(ctx, c.tmpl, opts...)
	if err != nil {
		return nil, fmt.Errorf("circuit: setup %q: %w", c.shape.Name, err)
	}
	a, bi, b := c.circuit.Densities()
	if !d.Equal(&groth16.Densities{ADensityAux: a, BDensityInput: bi, BDensityAux: b}) {
		return nil, fmt.Errorf("circuit: setup %q: the key's densities differ from the circuit's", c.shape.Name)
	}
	return pk, nil
}

// removeFingerprint removes the fingerprint file at path ("" : none).
func removeFingerprint(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// createTemp opens a temporary file next to path.
func createTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
}

// finish writes f, syncs and closes it and renames it to path.
func finish(f *os.File, path string, write func() error) error {
	if err := write(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// discard removes f's temporary file when the setup failed (after a
// successful rename there is nothing left to remove).
func discard(f *os.File, err *error) {
	if *err != nil {
		f.Close()
		os.Remove(f.Name())
	}
}
