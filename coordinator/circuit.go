package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/stacked"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// runCircuit prints a shape's partition circuit without proving anything:
// its counts and bellpepper R1CS hash in the reference's format, its
// densities and the parameter sections they imply, and with -dump the
// whole R1CS in the reference dump format.
func runCircuit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("circuit", stderr)
	shape := fs.String("shape", porep.TestShapeDefault, "shape name ("+fmt.Sprint(porep.ShapeNames())+")")
	noHash := fs.Bool("no-hash", false, "skip the R1CS hash (it replays every constraint: ~2.5 min at 32 GiB)")
	dump := fs.String("dump", "", "also write every constraint, with its namespace path, to this file in the reference dump format (32 GiB: ~40 GB)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: coordinator circuit [flags]

Print a shape's partition circuit without proving: the counts and the
R1CS hash in the format of the bellperson reference (inputs count ONE;
constraints are the circuit's own, Groth16 adds one row per input), the
A/B densities, and the sections of Groth16 parameters made for it. For the
official shapes these are bellperson's, and Filecoin's parameter files
must have these sections.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *dump != "" && *noHash {
		return fmt.Errorf("-dump writes the hash in its header: drop -no-hash")
	}
	s, err := porep.ShapeByName(*shape)
	if err != nil {
		return err
	}
	c, err := circuit.ForShape(s)
	if err != nil {
		return err
	}
	st := c.Stats()
	hash := "(not computed: -no-hash)"
	if !*noHash {
		if hash, err = c.Hash(ctx, groth16.ProgressLines(stderr)); err != nil {
			return err
		}
	}
	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	p("# shape=%s registered_proof=%s partitions=%d challenges_per_partition=%d", s.Name, s.RegisteredProof, s.Partitions, s.ChallengesPerPartition)
	p("# inputs=%d aux=%d constraints=%d hash=%s", st.Inputs, st.Aux, st.Constraints, hash)
	p("# input_rows=%d rows=%d domain=%d", st.Inputs, st.Constraints+st.Inputs, st.Domain)
	p("# density a_aux=%d b_inputs=%d b_aux=%d", st.ADensity, st.BDensityInput, st.BDensityAux)
	p("# params ic=%d h=%d l=%d a=%d b_g1=%d b_g2=%d", st.Inputs, st.Domain-1, st.Aux, st.Inputs+st.ADensity,
		st.BDensityInput+st.BDensityAux, st.BDensityInput+st.BDensityAux)
	if files, err := ceremony.ForShape(s); err == nil {
		p("# filecoin %s digest=%s", files.Params.Name, files.Params.Digest)
		p("# filecoin %s digest=%s", files.VK.Name, files.VK.Digest)
	}
	if *dump != "" {
		return writeDump(*dump, s, st, hash, stderr)
	}
	return nil
}

// writeDump streams the blank circuit's constraints into path, the header
// first, through a temporary file renamed into place.
func writeDump(path string, s *porep.Shape, st circuit.Stats, hash string, stderr io.Writer) (err error) {
	blank, err := stacked.Blank(s)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".dump-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := fmt.Fprintf(f, "# inputs=%d aux=%d constraints=%d hash=%s\n", st.Inputs, st.Aux, st.Constraints, hash); err != nil {
		return err
	}
	d := r1cs.NewDumpWriter(f)
	if err := blank.Synthesize(d); err != nil {
		return err
	}
	if err := d.Flush(); err != nil {
		return err
	}
	if in, aux, rows := d.Counts(); in != st.Inputs || aux != st.Aux || rows != st.Constraints {
		return fmt.Errorf("dump: synthesized %d inputs, %d aux, %d constraints; the circuit has %d, %d, %d", in, aux, rows, st.Inputs, st.Aux, st.Constraints)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", path)
	return nil
}
