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
	switch {
	case (*rp == "") == (*shape == ""):
		return usage("give one of -registered-proof and -shape")
	case (*proofFile == "") == (*proofHex == ""):
		return usage("give one of -proof and -proof-hex")
	case (*miner == "") == (*proverID == ""):
		return usage("give one of -miner and -prover-id")
	case *commR == "" || *commD == "" || *ticket == "" || *seed == "":
		return usage("-comm-r, -comm-d, -ticket and -seed are required")
	}
	if !flagSet(fs, "sector") {
		return usage("-sector is required")
	}

	var c server.SealCheck
	var err error
	name := *rp + *shape
	if c.Sector.Shape, err = seal.ShapeOf(name); err != nil {
		return err
	}
	if c.Sector.CommR, err = seal.ParseCommitment(seal.CommR, *commR); err != nil {
		return err
	}
	if c.Sector.CommD, err = seal.ParseCommitment(seal.CommD, *commD); err != nil {
		return err
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
	c.Sector.SectorNumber = *sector
	if c.Sector.Ticket, err = seal.ParseBytes32("ticket", *ticket); err != nil {
		return err
	}
	if c.Sector.Seed, err = seal.ParseBytes32("seed", *seed); err != nil {
		return err
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
