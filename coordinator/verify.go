package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
)

// maxProofFile bounds the proof file read (a 64 GiB proof is 1,920 bytes,
// 3,840 in hex).
const maxProofFile = 1 << 20

// runVerify checks a sector's final C2 proof on this machine, as Filecoin's
// verify_seal does.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", stderr)
	proofFile := fs.String("proof", "", "proof file: raw bytes (as `coordinator prove -out` writes) or hex text ('-' for stdin)")
	proofHex := fs.String("proof-hex", "", "the proof as hex (as `lotus-miner sectors status --proof` prints it), instead of -proof")
	rp := fs.String("registered-proof", "", "proof type: StackedDrg32GiBV1_1 (or its number, 8) or a shape name; required")
	shape := fs.String("shape", "", "shape name (32GiB, test-micro, ...), instead of -registered-proof")
	commR := fs.String("comm-r", "", "comm_r: the CID Lotus prints (CIDcommR, bagboea4b5abc…) or 64 hex digits; required")
	commD := fs.String("comm-d", "", "comm_d: the CID Lotus prints (CIDcommD, baga6ea4seaq…) or 64 hex digits; required")
	miner := fs.String("miner", "", "miner actor: f01000, t01000 or 1000 (its prover id is derived as filecoin-ffi does)")
	proverID := fs.String("prover-id", "", "the 32-byte prover id as hex, instead of -miner")
	sector := fs.Uint64("sector", 0, "sector number; required")
	ticket := fs.String("ticket", "", "sealing ticket, 64 hex digits (Lotus: Ticket); required")
	seed := fs.String("seed", "", "interactive seed, 64 hex digits (Lotus: Seed); required")
	paramsDir := fs.String("params-dir", envOr("C2_PARAMS_DIR", "params"), "folder of the cluster's <shape>.vk verifying keys ($C2_PARAMS_DIR)")
	officialDir := fs.String("official-params-dir", ceremony.Dir(), "Filecoin's parameter folder, with the official .vk files ($"+ceremony.EnvDir+")")
	c1File := fs.String("c1", "", "the C1 output (or lotus-bench's Commit2In envelope) the proof was made from: its proof type, comm_r, comm_d, ticket and seed, and an envelope's sector and miner, stand for the flags not given; flags given must agree with it")
	key := fs.String("key", "auto", "verifying key: official (Filecoin's .vk: official shapes), cluster (<params-dir>/<shape>.vk: test shapes) or auto (the shape's)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: coordinator verify [flags]\n\nCheck a sealed sector's final C2 proof as Filecoin's verify_seal does.\nExit status 0: the proof is valid.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	usage := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", exitCode(2), fmt.Sprintf(format, a...))
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments %q", fs.Args())
	}
	if *rp != "" && *shape != "" {
		return usage("give one of -registered-proof and -shape")
	}
	if (*proofFile == "") == (*proofHex == "") {
		return usage("give one of -proof and -proof-hex")
	}
	if *miner != "" && *proverID != "" {
		return usage("give one of -miner and -prover-id")
	}
	var from *c1Sector
	if *c1File != "" {
		var err error
		if from, err = readC1Sector(*c1File); err != nil {
			return err
		}
		if *miner == "" && *proverID == "" {
			*miner = from.miner
		}
	}
	missing := func(names string) error {
		if from != nil {
			return usage("%s: required (the C1 output does not give it)", names)
		}
		return usage("%s: required", names)
	}
	if *miner == "" && *proverID == "" {
		return missing("-miner or -prover-id")
	}

	var c server.SealCheck
	var err error
	switch name := *rp + *shape; {
	case name != "":
		if c.Sector.Shape, err = seal.ShapeOf(name); err != nil {
			return err
		}
		if from != nil && from.out.Shape.Name != c.Sector.Shape.Name {
			return fmt.Errorf("%s is %s, the C1 output's proof type is %s (%s)", name, c.Sector.Shape.Name, from.out.RegisteredProof, from.out.Shape.Name)
		}
	case from != nil:
		c.Sector.Shape = from.out.Shape
	default:
		return missing("-registered-proof or -shape")
	}
	type value struct {
		flag, field string
		text        string
		parse       func(string) ([32]byte, error)
		fromC1      [32]byte
		dst         *[32]byte
	}
	commitment := func(kind seal.CommitmentKind) func(string) ([32]byte, error) {
		return func(s string) ([32]byte, error) { d, err := seal.ParseCommitment(kind, s); return d, err }
	}
	bytes32 := func(what string) func(string) ([32]byte, error) {
		return func(s string) ([32]byte, error) { return seal.ParseBytes32(what, s) }
	}
	given := c1Sector{out: &c1.Output{}} // zero values without -c1
	if from != nil {
		given = *from
	}
	for _, v := range []value{
		{"-comm-r", "comm_r", *commR, commitment(seal.CommR), given.out.CommR, (*[32]byte)(&c.Sector.CommR)},
		{"-comm-d", "comm_d", *commD, commitment(seal.CommD), given.out.CommD, (*[32]byte)(&c.Sector.CommD)},
		{"-ticket", "ticket", *ticket, bytes32("ticket"), given.out.Ticket, &c.Sector.Ticket},
		{"-seed", "seed", *seed, bytes32("seed"), given.out.Seed, &c.Sector.Seed},
	} {
		switch {
		case v.text != "":
			if *v.dst, err = v.parse(v.text); err != nil {
				return err
			}
			if from != nil && *v.dst != v.fromC1 {
				return fmt.Errorf("%s %s differs from the C1 output's %s %s", v.flag, hex.EncodeToString(v.dst[:]), v.field, hex.EncodeToString(v.fromC1[:]))
			}
		case from != nil:
			*v.dst = v.fromC1
		default:
			return missing(v.flag)
		}
	}
	if *miner != "" {
		id, err := seal.ParseMinerID(*miner)
		if err != nil {
			return err
		}
		c.Sector.ProverID = seal.ProverID(id)
	} else if c.Sector.ProverID, err = seal.ParseBytes32("prover id", *proverID); err != nil {
		return err
	}
	switch {
	case flagSet(fs, "sector"):
		c.Sector.SectorNumber = *sector
		if from != nil && from.sector != nil && *from.sector != *sector {
			return fmt.Errorf("-sector %d differs from the Commit2In envelope's SectorNum %d", *sector, *from.sector)
		}
	case from != nil && from.sector != nil:
		c.Sector.SectorNumber = *from.sector
	default:
		return missing("-sector")
	}
	if from != nil {
		want := porep.ReplicaID(c.Sector.ProverID, c.Sector.SectorNumber, c.Sector.Ticket, c.Sector.CommD, c.Sector.Shape.PoRepID())
		if want != from.out.ReplicaID {
			return fmt.Errorf("the C1 output is not this sector's: its replica_id %s is not the one of prover id %s, sector %d, its ticket and comm_d (%s); check -miner/-prover-id and -sector",
				from.out.ReplicaID, hex.EncodeToString(c.Sector.ProverID[:]), c.Sector.SectorNumber, want)
		}
	}
	if c.Proof, err = readProof(*proofFile, *proofHex); err != nil {
		return err
	}
	switch *key {
	case "auto":
		c.Key = server.KeyAuto
	case "official":
		c.Key = server.KeyOfficial
	case "cluster":
		c.Key = server.KeyCluster
	default:
		return usage("-key %q is not auto, official or cluster", *key)
	}

	ps := &server.PoRep{ParamsDir: *paramsDir, OfficialDir: *officialDir}
	v, err := ps.VerifySeal(ctx, c)
	if err != nil {
		return err
	}
	if !v.Valid {
		return fmt.Errorf("%s (verifying key: %s %s)", v.Reason, v.Key, v.KeyFile)
	}
	fmt.Fprintf(stdout, "valid: %s proof of sector %d (%d partitions), verifying key %s %s\n",
		c.Sector.Shape.Name, c.Sector.SectorNumber, c.Sector.Shape.Partitions, v.Key, v.KeyFile)
	return nil
}

// c1Sector is what a C1 output file says about its sector.
type c1Sector struct {
	out    *c1.Output
	sector *uint64 // a Commit2In envelope's SectorNum
	miner  string  // a Commit2In envelope's Miner ("" when absent)
}

// readC1Sector reads a C1 output file, or a Commit2In envelope around one.
func readC1Sector(name string) (*c1Sector, error) {
	doc, err := readC1File(name)
	if err != nil {
		return nil, err
	}
	var s c1Sector
	if c1.IsCommit2In(doc) {
		env, err := c1.ParseCommit2In(doc)
		if err != nil {
			return nil, fmt.Errorf("-c1 %s: %w", name, err)
		}
		if s.out, err = c1.ParseBytes(env.Phase1Out); err != nil {
			return nil, fmt.Errorf("-c1 %s: Phase1Out: %w", name, err)
		}
		if err := env.CheckSectorSize(s.out); err != nil {
			return nil, fmt.Errorf("-c1 %s: %w", name, err)
		}
		s.sector, s.miner = &env.SectorNum, env.Miner
		return &s, nil
	}
	if s.out, err = c1.ParseBytes(doc); err != nil {
		return nil, fmt.Errorf("-c1 %s: %w", name, err)
	}
	return &s, nil
}

// readProof returns the proof from -proof (raw bytes or hex text) or
// -proof-hex.
func readProof(file, hexText string) ([]byte, error) {
	if hexText != "" {
		b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(hexText), "0x"))
		if err != nil {
			return nil, fmt.Errorf("-proof-hex: %w", err)
		}
		return b, nil
	}
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read proof: %w", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxProofFile+1))
	if err != nil {
		return nil, fmt.Errorf("read proof: %w", err)
	}
	if len(b) > maxProofFile {
		return nil, fmt.Errorf("read proof: %s is larger than %d bytes: not a proof", file, maxProofFile)
	}
	if t := bytes.TrimPrefix(bytes.TrimSpace(b), []byte("0x")); isHex(t) {
		d := make([]byte, len(t)/2)
		if _, err := hex.Decode(d, t); err == nil {
			return d, nil
		}
	}
	return b, nil
}

// isHex reports whether b is a non-empty, even-length run of hex digits: a
// raw proof (curve points) practically never is.
func isHex(b []byte) bool {
	if len(b) == 0 || len(b)%2 != 0 {
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
