// Command c2-params writes Groth16 parameters (<shape>.params and
// <shape>.vk, the bellperson layouts, and <shape>.circuit, the circuit's
// bellpepper R1CS hash) for test shapes that have none in a folder, or
// whose fingerprint file names another circuit, with fresh toxic waste and
// progress lines. It is the one-shot
// "params" service of docker-compose.yml and a convenience for test
// clusters:
//
//	c2-params -dir /params -shapes test-micro,test-mini
//
// With -check it makes nothing: it reads the parameters present exactly as a
// worker does at start and reports each shape ok or the error: for a test
// shape <dir>/<shape>.params (every point on the curve and in its
// subgroup, sections against the circuit, the fingerprint and the .vk
// beside them); for an official shape Filecoin's files in -official-dir
// (digest against parameters.json and every point, once: the checked
// marker it leaves makes every later worker start skip both; then the
// sections against the circuit). The subgroup checks run on a GPU when
// -backend finds one (a 32 GiB file in about a minute on an H200 host), so
// a host can check Filecoin's files once before its workers start:
//
//	c2-params -check -shapes 32GiB
//
// With -convert-h it makes each shape's H file: the parameter file's key
// converted to coset-Lagrange form, which workers prove with by default
// (h_form auto; docs/parameters.md). The file is checked first as -check
// does; an H file present and valid is kept:
//
//	c2-params -convert-h -shapes 32GiB -dir /var/lib/c2/params
//
// Official shapes (2KiB … 64GiB) get no parameters made here: Filecoin's
// proofs verify only against the parameters of its trusted-setup ceremony,
// which operators download (docs/parameters.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/worker/node"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "c2-params: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if buildinfo.Requested(args) {
		fmt.Fprintln(stdout, buildinfo.Line("c2-params"))
		return nil
	}
	fs := flag.NewFlagSet("c2-params", flag.ContinueOnError)
	fs.SetOutput(stderr)
	buildinfo.Register(fs)
	dir := fs.String("dir", envOr("C2_PARAMS_DIR", "params"), "folder of <shape>.params and <shape>.vk ($C2_PARAMS_DIR)")
	shapes := fs.String("shapes", envOr("C2_SHAPES", porep.TestShapeDefault), "comma-separated shapes ($C2_SHAPES)")
	officialDir := fs.String("official-dir", ceremony.Dir(), "Filecoin's parameter folder, for -check of official shapes ($"+ceremony.EnvDir+")")
	backend := fs.String("backend", envOr("C2_BACKEND", cuda.ModeAuto), "where the fixed-base multiplications (and -check's subgroup checks, -convert-h's group DFTs) run: auto, cpu or cuda ($C2_BACKEND)")
	cudaLib := fs.String("cuda-library", os.Getenv("C2_CUDA_LIBRARY"), "path of libc2groth16.so ($C2_CUDA_LIBRARY; default $C2G_CUDA_LIB, then the loader's path)")
	convertH := fs.Bool("convert-h", false, "make each shape's H file: its parameter file's key converted to coset-Lagrange form (checked first as -check does; kept when present and valid), beside the file or in -dir when that folder is read-only")
	check := fs.Bool("check", false, "make nothing: check the parameters present as a worker with trusted_params: false does (every point in its subgroup, sections, fingerprint, .vk) and report each shape")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *check || *convertH {
		checker, why, err := cuda.SelectSubgroupChecker(*backend, cuda.Config{LibraryPath: *cudaLib})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, why)
		if *convertH {
			dft, why, err := cuda.SelectDFT(*backend, cuda.Config{LibraryPath: *cudaLib})
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, why)
			return convertParams(ctx, *dir, *officialDir, *shapes, checker, dft, stdout)
		}
		return checkParams(ctx, *dir, *officialDir, *shapes, checker, stdout)
	}
	var fixedBase groth16.FixedBase
	selected := false
	selectFixedBase := func() error { // once, and only when some shape needs parameters
		if selected {
			return nil
		}
		selected = true
		fb, why, err := cuda.SelectFixedBase(*backend, cuda.Config{LibraryPath: *cudaLib})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, why)
		fixedBase = fb
		return nil
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for _, name := range strings.Split(*shapes, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		s, err := porep.ShapeByName(name)
		if err != nil {
			return err
		}
		if !s.Test {
			return fmt.Errorf("%s is an official shape: workers prove it with Filecoin's parameter files (%s; docs/parameters.md), c2-params makes parameters for test shapes only", name, ceremony.FetchCommand(s))
		}
		pp, vp, fp := circuit.ParamsPath(*dir, name), circuit.VKPath(*dir, name), circuit.FingerprintPath(*dir, name)
		if exists(pp) && exists(vp) {
			if !exists(fp) {
				fmt.Fprintf(stdout, "%s: parameters present in %s (no circuit fingerprint beside them to check)\n", name, *dir)
				continue
			}
			c, err := circuit.ForShape(s)
			if err != nil {
				return err
			}
			err = c.CheckFingerprint(ctx, fp)
			if err == nil {
				fmt.Fprintf(stdout, "%s: parameters present in %s\n", name, *dir)
				continue
			}
			if !errors.Is(err, circuit.ErrStaleParams) {
				return err
			}
			fmt.Fprintf(stdout, "%s: %v\n", name, err)
		}
		if err := selectFixedBase(); err != nil {
			return err
		}
		start := time.Now()
		fmt.Fprintf(stdout, "%s: generating parameters (fresh toxic waste)\n", name)
		if _, err := circuit.Setup(ctx, s, circuit.SetupConfig{ParamsPath: pp, VKPath: vp, FingerprintPath: fp,
			Progress: groth16.ProgressLines(stdout), FixedBase: fixedBase}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: wrote %s and %s in %.1fs\n", name, pp, vp, time.Since(start).Seconds())
	}
	return nil
}

// checkParams loads every shape's parameters through the worker's own
// loader with the subgroup checks on (by checker when not nil: a GPU's);
// the first failure is the error.
func checkParams(ctx context.Context, dir, officialDir, shapes string, checker groth16.SubgroupChecker, stdout io.Writer) error {
	log := slog.New(slog.NewTextHandler(stdout, nil))
	for _, name := range strings.Split(shapes, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		s, err := porep.ShapeByName(name)
		if err != nil {
			return err
		}
		from, what := dir, circuit.ParamsPath(dir, name)
		if !s.Test {
			from = officialDir
			if p, err := ceremony.PathsIn(officialDir, s); err == nil {
				what = p.Params
			}
		}
		start := time.Now()
		sp, err := node.LoadShapeParamsHForm(ctx, name, from, false, checker, log, groth16.HMonomial.String())
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(stdout, "%s: %s checked in %.1fs: every point on the curve and in its subgroup, sections fit the circuit (%d bytes)\n",
			name, what, time.Since(start).Seconds(), sp.Bytes())
	}
	return nil
}

// convertParams makes each shape's H file (ceremony.ConvertH) with dft:
// an official shape's .params file is checked first (ceremony.CheckShape,
// once per file thanks to its marker) and its parameters.json digest
// binds the H file; a test shape's <dir>/<shape>.params is bound by its
// digest, computed here. The sections must fit the circuit. A valid H
// file present is kept; a stale or damaged one is replaced.
func convertParams(ctx context.Context, dir, officialDir, shapes string, checker groth16.SubgroupChecker, dft groth16.G1DFT, stdout io.Writer) error {
	progress := groth16.ProgressLines(stdout)
	for _, name := range strings.Split(shapes, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		s, err := porep.ShapeByName(name)
		if err != nil {
			return err
		}
		start := time.Now()
		var path, digest, stateDir string
		if s.Test {
			path = circuit.ParamsPath(dir, name)
			if digest, err = ceremony.FileDigest(ctx, path, nil); err != nil {
				return fmt.Errorf("%s: %w (make the parameters first: c2-params -dir %s -shapes %s)", name, err, dir, name)
			}
		} else {
			sc, err := ceremony.CheckShape(ctx, officialDir, s, ceremony.CheckOptions{StateDir: dir, Progress: progress, Subgroup: checker})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			path, digest, stateDir = sc.Paths.Params, sc.Params.Marker.Digest, dir
		}
		c, err := circuit.ForShape(s)
		if err != nil {
			return err
		}
		if s.Test {
			if err := c.CheckFingerprint(ctx, circuit.FingerprintPath(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: %s: %w", name, path, err)
			}
		}
		counts := ceremony.CircuitCounts(c.Circuit())
		if err := ceremony.CheckParamsCounts(path, counts); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		hf, at, err := ceremony.LoadHFile(ctx, path, digest, counts, stateDir)
		if err == nil {
			fmt.Fprintf(stdout, "%s: H file %s present and valid (digest %s)\n", name, at, hf.Digest)
			continue
		}
		if !errors.Is(err, ceremony.ErrNoHFile) {
			fmt.Fprintf(stdout, "%s: %v: making it again\n", name, err)
		}
		at, d, err := ceremony.ConvertH(ctx, path, digest, c.Template(), ceremony.ConvertOptions{StateDir: stateDir, DFT: dft, Progress: progress})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		st, err := os.Stat(at)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: wrote H file %s (%d bytes, digest %s) in %.1fs\n", name, at, st.Size(), d, time.Since(start).Seconds())
	}
	return nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
