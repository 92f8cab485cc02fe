// Command c2-params writes Groth16 parameters (<shape>.params and
// <shape>.vk, the bellperson layouts, and <shape>.circuit, the compiled
// circuit's fingerprint) for shapes that have none in a folder, or whose
// fingerprint file names another circuit, with fresh toxic waste and
// progress lines. It is the one-shot
// "params" service of docker-compose.yml and a convenience for test
// clusters:
//
//	c2-params -dir /params -shapes test-micro,test-mini
//
// Official shapes (2KiB … 64GiB) are refused unless -allow-official:
// Filecoin's proofs verify only against the parameters of its trusted-setup
// ceremony, which operators download (docs/operations.md); parameters made
// here are only good for this cluster's own tests and benchmarks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
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
	fs := flag.NewFlagSet("c2-params", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", envOr("C2_PARAMS_DIR", "params"), "folder of <shape>.params and <shape>.vk ($C2_PARAMS_DIR)")
	shapes := fs.String("shapes", envOr("C2_SHAPES", "test-micro"), "comma-separated shapes ($C2_SHAPES)")
	official := fs.Bool("allow-official", false, "also make parameters for official shapes (NOT Filecoin's: for local benchmarks only)")
	backend := fs.String("backend", envOr("C2_BACKEND", cuda.ModeAuto), "where the fixed-base multiplications run: auto, cpu or cuda ($C2_BACKEND)")
	cudaLib := fs.String("cuda-library", os.Getenv("C2_CUDA_LIBRARY"), "path of libc2groth16.so ($C2_CUDA_LIBRARY; default $C2G_CUDA_LIB, then the loader's path)")
	if err := fs.Parse(args); err != nil {
		return err
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
		if !s.Test && !*official {
			return fmt.Errorf("%s is an official shape: use Filecoin's parameter files (or -allow-official for local benchmarks)", name)
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
			err = c.CheckFingerprint(fp)
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

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
