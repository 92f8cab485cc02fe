package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
)

// runSeal writes a C1 output for a shape: a real seal of random (or given)
// data for the small shapes, or with -sparse a BENCHMARK INPUT for any shape,
// 32 GiB and 64 GiB included (sealer.SparseC1Help).
func runSeal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("seal", stderr)
	shape := fs.String("shape", porep.TestShapeDefault, "shape name ("+fmt.Sprint(porep.ShapeNames())+")")
	seed := fs.Uint64("seed", 1, "deterministic seed for data, prover id, sector id, ticket and interactive seed")
	data := fs.String("data", "", "unsealed sector data file (Nodes × 32 bytes); default: random from -seed (not with -sparse)")
	out := fs.String("out", "", "write the C1 JSON here (default: <shape>.c1.json)")
	sparse := fs.Bool("sparse", false, "write a sparse BENCHMARK INPUT instead of sealing (any shape; see below)")
	var sector sectorFlags
	sector.register(fs, "seal as this miner (f01000, t01000 or the actor id): its prover id enters the replica id (default: from -seed)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: coordinator seal [flags]\n\nSeal a sector of a shape and write its C1 output (commit phase 1) as JSON,\nwith progress on stderr.\n\nWith -sparse:\n%s\n\nFlags:\n", sealer.SparseC1Help)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *sparse && *data != "" {
		return fmt.Errorf("-data and -sparse exclude each other: a sparse sector is all zeros")
	}
	if _, err := porep.ShapeByName(*shape); err != nil {
		return err
	}
	miner, number, err := sector.parse()
	if err != nil {
		return err
	}
	if *sparse && (miner != nil || number != nil) {
		return fmt.Errorf("%w: -miner and -sector are for a sealed sector, not -sparse", exitCode(2))
	}
	path := *out
	if path == "" {
		path = *shape + ".c1.json"
	}
	// Written beside the target and renamed, so a failed or cancelled seal
	// leaves no half-written C1 behind.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".c1-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)

	var res *sealer.Result
	if *sparse {
		res, err = sealer.WriteSparseC1(ctx, sealer.SparseC1Config{Shape: *shape, Seed: *seed, Progress: stderr}, w)
	} else {
		cfg := sealer.RandomC1Config{Shape: *shape, Seed: *seed, Miner: miner, SectorNumber: number, Progress: stderr}
		if *data != "" {
			f, err := os.Open(*data)
			if err != nil {
				return err
			}
			defer f.Close()
			cfg.Data = bufio.NewReaderSize(f, 1<<20)
		}
		res, err = sealer.WriteRandomC1(ctx, cfg, w)
	}
	if err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	kind := "sealed sector"
	if res.BenchmarkInput {
		kind = "BENCHMARK INPUT (sparse, not a sealed replica)"
	}
	fmt.Fprintf(stdout, "%s: %s, shape %s, %d partitions, %d bytes\ncomm_d %x\ncomm_r %x\n",
		path, kind, res.Shape.Name, res.Shape.Partitions, res.Bytes, res.CommD[:], res.CommR[:])
	return nil
}
