package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/worker/backend"
)

// ErrParams marks a parameter file that is missing, corrupt or does not fit
// its shape's circuit; New fails with it, naming the file.
var ErrParams = errors.New("node: parameters")

// ShapeParams is one shape's resident state on a worker: the compiled
// partition circuit, the proving key (host copy, loaded onto every device)
// and the prepared verifying key that checks every partition proof. Make it
// with LoadShapeParams (a parameters folder, as a worker does at start) or
// NewShapeParams (parameters made in memory, e.g. by a benchmark).
//
// The host copy of the proving key (44.1 GiB at 32 GiB) is kept only while
// a loaded key may need it: a Prover whose every device holds the shape
// resident in device memory (CUDA, residency device) drops it once it has
// loaded them all (HostKeyReleased), and the memory is collected; the CPU
// backend and pinned residency read the host points for every proof, so
// with those it stays. A ShapeParams whose key was dropped cannot be loaded
// onto another Prover (ErrParams: load the parameters again).
type ShapeParams struct {
	name     string
	compiled *circuit.Compiled
	vk       groth16.VerifyingKey // a copy: it outlives the proving key
	pvk      *groth16.PreparedVerifyingKey
	bytes    int64 // size of the .params file (or of the points, for parameters made in memory)

	mu       sync.Mutex
	pk       *groth16.ProvingKey // nil once released
	released bool
}

// newShapeParams wraps checked parameters.
func newShapeParams(name string, compiled *circuit.Compiled, pk *groth16.ProvingKey, pvk *groth16.PreparedVerifyingKey, bytes int64) *ShapeParams {
	vk := pk.VK
	vk.IC = slices.Clone(pk.VK.IC)
	return &ShapeParams{name: name, compiled: compiled, pk: pk, vk: vk, pvk: pvk, bytes: bytes}
}

// provingKey is the host proving key to load onto a backend.
func (sp *ShapeParams) provingKey() (*groth16.ProvingKey, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.pk == nil {
		return nil, fmt.Errorf("%w: shape %s: the host proving key was released once another prover held it resident on every device; load the parameters again", ErrParams, sp.name)
	}
	return sp.pk, nil
}

// releaseHostKey drops the host proving key (every loaded key holds the
// shape in device memory).
func (sp *ShapeParams) releaseHostKey() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.pk, sp.released = nil, true
}

// HostKeyReleased reports whether the host copy of the proving key was
// dropped because every device of a Prover holds the shape resident.
func (sp *ShapeParams) HostKeyReleased() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.released
}

// Name is the shape's name.
func (sp *ShapeParams) Name() string { return sp.name }

// Compiled is the shape's compiled partition circuit.
func (sp *ShapeParams) Compiled() *circuit.Compiled { return sp.compiled }

// VerifyingKey is the verifying key of the parameters.
// (a copy, kept when the proving key is released).
func (sp *ShapeParams) VerifyingKey() *groth16.VerifyingKey { return &sp.vk }

// Bytes is the size of the parameters: the .params file they were read
// from, or the bellperson layout's size for parameters made in memory.
func (sp *ShapeParams) Bytes() int64 { return sp.bytes }

// NewShapeParams checks pk against the shape's compiled circuit (every
// section's length) and prepares its verifying key: parameters that were
// made in memory (circuit.Compiled.Keys, groth16.SetupR1CS) rather than read from a folder. A key that
// does not fit is an ErrParams error.
func NewShapeParams(name string, compiled *circuit.Compiled, pk *groth16.ProvingKey) (*ShapeParams, error) {
	if compiled == nil || pk == nil {
		return nil, fmt.Errorf("%w: shape %s: NewShapeParams needs a compiled circuit and a proving key", ErrParams, name)
	}
	if err := checkFits(pk, compiled.Circuit()); err != nil {
		return nil, fmt.Errorf("%w: shape %s: the proving key does not fit the shape's circuit: %v", ErrParams, name, err)
	}
	pvk, err := groth16.PrepareVerifyingKey(&pk.VK)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: verifying key: %v", ErrParams, name, err)
	}
	return newShapeParams(name, compiled, pk, pvk, paramsBytes(pk)), nil
}

// paramsBytes is the size of pk in the bellperson .params layout (a
// coset-Lagrange key's points counted alike: H and LInput one point more
// each per domain and input).
func paramsBytes(pk *groth16.ProvingKey) int64 {
	const g1, g2 = 96, 192
	vk := int64(3*g1+3*g2) + 4 + int64(len(pk.VK.IC))*g1
	return vk + 5*4 + int64(len(pk.H)+len(pk.L)+len(pk.A)+len(pk.BG1)+len(pk.LInput))*g1 + int64(len(pk.BG2))*g2
}

// LoadShapeParams records the shape's circuit (circuit.ForShape: once per
// process) and reads, checks and prepares its parameters in dir exactly as
// a worker does at start: for an official shape Filecoin's files by their
// official names (loadOfficial), for a test shape <dir>/<shape>.params: layout, points (subgroup unless trusted), section
// lengths against the circuit, the circuit fingerprint beside it when there
// is one, and the .vk beside it when there is one. Every failure is an
// ErrParams error naming the file (wrapping circuit.ErrStaleParams for a
// fingerprint of another circuit, os.ErrNotExist for a missing file).
//
// checker, when not nil, makes the subgroup checks (a GPU's:
// cuda.SelectSubgroupChecker) instead of the decoder on the CPU.
func LoadShapeParams(ctx context.Context, name, dir string, trusted bool, checker groth16.SubgroupChecker,
	log *slog.Logger) (*ShapeParams, error) {
	return LoadShapeParamsHForm(ctx, name, dir, trusted, checker, log, HFormAuto)
}

// LoadShapeParamsHForm is LoadShapeParams with the H form of Config.HForm
// (auto, monomial or coset-lagrange): monomial reads the .params file's
// own key only, whatever H file lies beside it.
func LoadShapeParamsHForm(ctx context.Context, name, dir string, trusted bool, checker groth16.SubgroupChecker,
	log *slog.Logger, hForm string) (*ShapeParams, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg := Config{ParamsDir: dir, OfficialParamsDir: dir, TrustedParams: trusted, Logger: log, HForm: hForm}
	if err := cfg.validateHForm(); err != nil {
		return nil, err
	}
	return loadShape(ctx, cfg, name, checker)
}

// subgroupChecker is the selected backend's device check of parameter
// points (on its first device), when the backend has one and some
// parameters need checking (a test shape's without trusted_params, or
// Filecoin's files, checked once); nil means the decoder's CPU check.
func subgroupChecker(cfg Config, sel backend.Selection, opts backend.Options) (groth16.SubgroupChecker, error) {
	if sel.Factory.SubgroupChecker == nil || len(sel.Devices) == 0 {
		return nil, nil
	}
	// trusted_params covers the test shapes only: Filecoin's files are
	// checked once whatever it says, so a worker with an official shape
	// keeps the device's checker for that first check.
	official := slices.ContainsFunc(cfg.Shapes, func(name string) bool {
		s, err := porep.ShapeByName(name)
		return err == nil && !s.Test
	})
	if cfg.TrustedParams && !official {
		return nil, nil
	}
	opts.Device = sel.Devices[0]
	c, err := sel.Factory.SubgroupChecker(opts)
	if err != nil {
		return nil, fmt.Errorf("node: subgroup check on %s%d: %w", sel.Factory.Name, opts.Device, err)
	}
	cfg.Logger.Info("worker: parameter points will be subgroup-checked on the device", "device", fmt.Sprintf("%s%d", sel.Factory.Name, opts.Device))
	return c, nil
}

// loadShape compiles the shape's circuit and reads, checks and prepares its
// parameters; checker, when not nil, makes the subgroup check (unless the
// parameters are trusted) instead of the decoder's per-point CPU check.
//
// The circuit compiles while the parameters are read: the two are
// independent until their sizes are compared, and at the 32 GiB shape each
// takes on the order of a minute.
func loadShape(ctx context.Context, cfg Config, name string, checker groth16.SubgroupChecker) (*ShapeParams, error) {
	log := cfg.Logger
	s, err := porep.ShapeByName(name)
	if err != nil {
		return nil, err
	}
	if !s.Test {
		return loadOfficial(ctx, cfg, s, checker)
	}
	path := circuit.ParamsPath(cfg.ParamsDir, name)
	fi, err := os.Stat(path) // a missing file fails before any work
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: shape %s: %s: %w (make them with: %s — it writes beside them the .vk the coordinator needs; or point params_dir at the folder that has them)",
				ErrParams, name, path, err, circuit.MakeParamsCommand(cfg.ParamsDir, name))
		}
		return nil, fmt.Errorf("%w: shape %s: %s: %w", ErrParams, name, path, err)
	}
	hf, err := hFileWanted(cfg, name, path, "")
	if err != nil {
		return nil, err
	}
	compiling := compileAsync(s)
	start := time.Now()
	pk, pf, check, readErr := readParams(ctx, cfg, path, checker, hf)
	if pf != nil {
		defer pf.Close()
	}
	readTook := time.Since(start)
	cr := <-compiling // also on a read error: nothing is left running
	if cr.err != nil {
		return nil, fmt.Errorf("node: shape %s: record circuit: %w", name, cr.err)
	}
	compiled := cr.c
	log.Info("worker: circuit recorded", "shape", name, "constraints", compiled.Circuit().NumConstraints(),
		"took", cr.took.Round(time.Millisecond))
	if readErr != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, name, readErr)
	}
	if hf {
		// c2cluster's own file: its digest, computed here (test shapes are small).
		digest := func() (string, error) { return ceremony.FileDigest(ctx, path, nil) }
		if pk, err = withHFile(ctx, cfg, name, path, "", pf, pk, compiled.Circuit(), digest); err != nil {
			return nil, err
		}
	}
	if err := checkFits(pk, compiled.Circuit()); err != nil {
		return nil, fmt.Errorf("%w: shape %s: %s does not fit the shape's circuit: %v (parameters of another shape or circuit version?)", ErrParams, name, path, err)
	}
	// Sizes can fit and the matrices still differ (a circuit change that
	// keeps the counts): the setup's fingerprint of the circuit, when it
	// left one beside the parameters, must be this circuit's.
	if err := compiled.CheckFingerprint(ctx, circuit.FingerprintPath(cfg.ParamsDir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: shape %s: %s: %w", ErrParams, name, path, err)
	}
	vkPath := circuit.VKPath(cfg.ParamsDir, name)
	if _, err := os.Stat(vkPath); err == nil {
		vk, err := groth16.ReadVerifyingKeyFile(vkPath)
		if err != nil {
			return nil, fmt.Errorf("%w: shape %s: %v", ErrParams, name, err)
		}
		if err := sameVerifyingKey(vk, &pk.VK); err != nil {
			return nil, fmt.Errorf("%w: shape %s: %s and %s disagree: %v (the coordinator would reject every proof)", ErrParams, name, vkPath, path, err)
		}
	}
	pvk, err := groth16.PrepareVerifyingKey(&pk.VK)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: verifying key of %s: %v", ErrParams, name, path, err)
	}
	log.Info("worker: parameters loaded", "shape", name, "path", path, "bytes", fi.Size(), "took", readTook.Round(time.Millisecond),
		"subgroup_check", check, "h_form", pk.HForm.String(), "with_compile_took", time.Since(start).Round(time.Millisecond))
	return newShapeParams(name, compiled, pk, pvk, fi.Size()), nil
}

// compileAsync records a shape's circuit in the background (ForShape: once
// per process); the result arrives on the channel.
func compileAsync(s *porep.Shape) <-chan compileResult {
	ch := make(chan compileResult, 1)
	go func() {
		start := time.Now()
		c, err := circuit.ForShape(s)
		ch <- compileResult{c: c, err: err, took: time.Since(start)}
	}()
	return ch
}

type compileResult struct {
	c    *circuit.Compiled
	err  error
	took time.Duration
}

// loadOfficial loads an official shape's parameters: Filecoin's ceremony
// files from cfg.OfficialParamsDir, by their official names. Each file's
// digest is checked against parameters.json and every point of it decoded
// and subgroup-checked (by checker when not nil) once, then remembered in
// a marker beside it (or in ParamsDir when that folder is read-only), so
// later starts only stat it (ceremony.Check); the .params sections are
// checked against the circuit's counts before anything is decoded for
// proving, and the .vk must be the .params' verifying key.
func loadOfficial(ctx context.Context, cfg Config, s *porep.Shape, checker groth16.SubgroupChecker) (*ShapeParams, error) {
	log := cfg.Logger
	dir := cfg.OfficialParamsDir
	if dir == "" {
		dir = ceremony.Dir()
	}
	if _, err := ceremony.Locate(dir, s); err != nil { // a missing file fails before any work
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, s.Name, err)
	}
	compiling := compileAsync(s)
	start := time.Now()
	sc, checkErr := ceremony.CheckShape(ctx, dir, s, ceremony.CheckOptions{
		StateDir: cfg.ParamsDir,
		Progress: progressLog(log, "worker: checking Filecoin's "+s.Name+" parameters"),
		Subgroup: checker,
	})
	cr := <-compiling
	if cr.err != nil {
		return nil, fmt.Errorf("node: shape %s: record circuit: %w", s.Name, cr.err)
	}
	if checkErr != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, s.Name, checkErr)
	}
	log.Info("worker: Filecoin's parameter files checked", "shape", s.Name, "params", sc.Paths.Params,
		"reused_marker", sc.Params.Reused, "marker", sc.Params.MarkerPath, "took", time.Since(start).Round(time.Millisecond))
	if sc.Params.MarkerErr != nil {
		log.Warn("worker: no checked marker could be written; the next start checks the files again", "err", sc.Params.MarkerErr)
	}
	compiled := cr.c
	if err := ceremony.CheckParamsCounts(sc.Paths.Params, ceremony.CircuitCounts(compiled.Circuit())); err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, s.Name, err)
	}
	// Checked above (or at an earlier start, per the marker): decoded
	// without the subgroup check.
	pf, err := groth16.OpenParams(sc.Paths.Params, groth16.SkipSubgroupCheck(),
		groth16.ParamsProgress(progressLog(log, "worker: reading "+sc.Paths.Params)))
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, s.Name, err)
	}
	defer pf.Close()
	hf, err := hFileWanted(cfg, s.Name, sc.Paths.Params, cfg.ParamsDir)
	if err != nil {
		return nil, err
	}
	pk, err := decodeKey(ctx, pf, hf)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, s.Name, err)
	}
	if hf {
		// The file passed Check: its digest is parameters.json's.
		digest := func() (string, error) { return sc.Params.Marker.Digest, nil }
		if pk, err = withHFile(ctx, cfg, s.Name, sc.Paths.Params, cfg.ParamsDir, pf, pk, compiled.Circuit(), digest); err != nil {
			return nil, err
		}
	}
	if err := checkFits(pk, compiled.Circuit()); err != nil {
		return nil, fmt.Errorf("%w: shape %s: %s does not fit the shape's circuit: %v", ErrParams, s.Name, sc.Paths.Params, err)
	}
	vk, err := groth16.ReadVerifyingKeyFile(sc.Paths.VK)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: %v", ErrParams, s.Name, err)
	}
	if err := sameVerifyingKey(vk, &pk.VK); err != nil {
		return nil, fmt.Errorf("%w: shape %s: %s and %s disagree: %v", ErrParams, s.Name, sc.Paths.VK, sc.Paths.Params, err)
	}
	pvk, err := groth16.PrepareVerifyingKey(&pk.VK)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: verifying key of %s: %v", ErrParams, s.Name, sc.Paths.Params, err)
	}
	fi, err := os.Stat(sc.Paths.Params)
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, s.Name, err)
	}
	log.Info("worker: parameters loaded", "shape", s.Name, "path", sc.Paths.Params, "bytes", fi.Size(),
		"h_form", pk.HForm.String(), "took", time.Since(start).Round(time.Millisecond))
	return newShapeParams(s.Name, compiled, pk, pvk, fi.Size()), nil
}

// readParams reads and checks the proving key at path (points canonical,
// on the curve and, unless the parameters are trusted, in their subgroup: by
// checker when not nil, else by the decoder) and says where the subgroup
// check ran. Without H and L when hFile (they come from the H file); the
// file stays open for them (the caller closes it).
func readParams(ctx context.Context, cfg Config, path string, checker groth16.SubgroupChecker, hFile bool) (*groth16.ProvingKey, *groth16.ParamsFile, string, error) {
	opts := []groth16.ParamsOption{groth16.ParamsProgress(progressLog(cfg.Logger, "worker: reading "+path))}
	check := "cpu"
	switch {
	case cfg.TrustedParams:
		opts = append(opts, groth16.SkipSubgroupCheck())
		check = "none (trusted_params)"
	case checker != nil:
		opts = append(opts, groth16.SubgroupCheckWith(checker))
		check = "device"
	}
	pf, err := groth16.OpenParams(path, opts...)
	if err != nil {
		return nil, nil, check, err
	}
	pk, err := decodeKey(ctx, pf, hFile)
	return pk, pf, check, err
}

// HFormAuto is Config.HForm's default: a parameter file's H file when one
// is present and valid, its monomial key otherwise.
const HFormAuto = "auto"

// hFileWanted says whether the key of the .params file at path takes its
// H and L from an H file: the form is not monomial and one is present
// (ceremony.HFilePaths). Config.HForm coset-lagrange without one is an
// ErrParams error naming where it looked and the command that makes it.
func hFileWanted(cfg Config, shape, path, stateDir string) (bool, error) {
	if cfg.HForm == groth16.HMonomial.String() {
		return false, nil
	}
	paths := ceremony.HFilePaths(path, stateDir)
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true, nil
		}
	}
	if cfg.HForm == groth16.HCosetLagrange.String() {
		return false, fmt.Errorf("%w: shape %s: h_form coset-lagrange and no H file of %s (looked for %s): make it with `%s`, or set h_form auto",
			ErrParams, shape, path, strings.Join(paths, ", "), convertCommand(cfg, shape))
	}
	cfg.Logger.Info("worker: no H file: the monomial key proves (c2-params -convert-h makes one; docs/parameters.md)", "shape", shape, "params", path)
	return false, nil
}

// convertCommand is the c2-params command that makes a shape's H file.
func convertCommand(cfg Config, shape string) string {
	cmd := "c2-params -convert-h -shapes " + shape + " -dir " + cfg.ParamsDir
	if s, err := porep.ShapeByName(shape); err == nil && !s.Test && cfg.OfficialParamsDir != "" {
		cmd += " -official-dir " + cfg.OfficialParamsDir
	}
	return cmd
}

// decodeKey decodes pf's key, without H and L when hFile.
func decodeKey(ctx context.Context, pf *groth16.ParamsFile, hFile bool) (*groth16.ProvingKey, error) {
	if hFile {
		return pf.ProvingKeyWithout(ctx, groth16.SectionH, groth16.SectionL)
	}
	return pf.ProvingKey(ctx)
}

// withHFile completes pk (pf's key decoded without H and L) with the H
// file of path (ceremony.LoadHFile: bound to the source's size and
// digest, of the circuit's counts, its own digest checked). An H file
// that cannot be used is an ErrParams error with h_form coset-lagrange;
// with auto it is logged and pf's monomial H and L are decoded instead.
func withHFile(ctx context.Context, cfg Config, shape, path, stateDir string, pf *groth16.ParamsFile, pk *groth16.ProvingKey,
	c *groth16.Circuit, digest func() (string, error)) (*groth16.ProvingKey, error) {
	start := time.Now()
	d, err := digest()
	if err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, shape, err)
	}
	hf, hPath, err := ceremony.LoadHFile(ctx, path, d, ceremony.CircuitCounts(c), stateDir,
		groth16.ParamsProgress(progressLog(cfg.Logger, "worker: reading the H file of "+path)))
	if err == nil {
		var out *groth16.ProvingKey
		if out, err = groth16.WithHFile(pk, hf); err == nil {
			cfg.Logger.Info("worker: H file loaded: the coset-Lagrange key proves", "shape", shape, "h_file", hPath,
				"digest", hf.Digest, "took", time.Since(start).Round(time.Millisecond))
			return out, nil
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if cfg.HForm == groth16.HCosetLagrange.String() {
		return nil, fmt.Errorf("%w: shape %s: h_form coset-lagrange: %w (make it again with `%s`)", ErrParams, shape, err, convertCommand(cfg, shape))
	}
	cfg.Logger.Warn("worker: H file not used: the monomial key proves", "shape", shape, "err", err, "make_it_with", convertCommand(cfg, shape))
	if pk.H, err = pf.G1Section(ctx, groth16.SectionH); err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, shape, err)
	}
	if pk.L, err = pf.G1Section(ctx, groth16.SectionL); err != nil {
		return nil, fmt.Errorf("%w: shape %s: %w", ErrParams, shape, err)
	}
	return pk, nil
}

// checkFits compares the key's section lengths with the circuit.
func checkFits(pk *groth16.ProvingKey, c *groth16.Circuit) error {
	aAux, bIn, bAux := c.Densities()
	hWant, hWhat, lInWant := c.DomainSize()-1, "h (domain - 1)", 0
	if pk.HForm == groth16.HCosetLagrange {
		hWant, hWhat, lInWant = c.DomainSize(), "h (domain, coset-Lagrange form)", c.NumInputs()
	}
	for _, x := range []struct {
		what      string
		got, want int
	}{
		{"ic (public inputs + 1)", len(pk.VK.IC), c.NumInputs()},
		{hWhat, len(pk.H), hWant},
		{"l_input (inputs, coset-Lagrange form)", len(pk.LInput), lInWant},
		{"l (aux variables)", len(pk.L), c.NumAux()},
		{"a (inputs + dense aux)", len(pk.A), c.NumInputs() + aAux.Count()},
		{"b_g1 (dense inputs + aux)", len(pk.BG1), bIn.Count() + bAux.Count()},
		{"b_g2 (dense inputs + aux)", len(pk.BG2), bIn.Count() + bAux.Count()},
	} {
		if x.got != x.want {
			return fmt.Errorf("section %s has %d points, the circuit needs %d", x.what, x.got, x.want)
		}
	}
	return nil
}

func sameVerifyingKey(a, b *groth16.VerifyingKey) error {
	switch {
	case !a.AlphaG1.Equal(&b.AlphaG1):
		return errors.New("alpha_g1 differs")
	case !a.BetaG1.Equal(&b.BetaG1):
		return errors.New("beta_g1 differs")
	case !a.BetaG2.Equal(&b.BetaG2):
		return errors.New("beta_g2 differs")
	case !a.GammaG2.Equal(&b.GammaG2):
		return errors.New("gamma_g2 differs")
	case !a.DeltaG1.Equal(&b.DeltaG1):
		return errors.New("delta_g1 differs")
	case !a.DeltaG2.Equal(&b.DeltaG2):
		return errors.New("delta_g2 differs")
	case len(a.IC) != len(b.IC):
		return fmt.Errorf("ic has %d points in one, %d in the other", len(a.IC), len(b.IC))
	}
	for i := range a.IC {
		if !a.IC[i].Equal(&b.IC[i]) {
			return fmt.Errorf("ic[%d] differs", i)
		}
	}
	return nil
}
