package sealer

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
)

// RandomC1Config configures WriteRandomC1.
type RandomC1Config struct {
	// Shape is a registry name (porep.ShapeNames).
	Shape string
	// Seed makes the run deterministic: sector data (unless Data is set),
	// prover id, sector id, ticket and the interactive seed derive from it.
	Seed uint64
	// Miner and SectorNumber, when set, fix the prover id (the miner actor's:
	// porep.ProverID) and the sector number instead of drawing them.
	Miner, SectorNumber *uint64
	// Data, if not nil, supplies the unsealed sector: Nodes × 32 bytes, each
	// 32-byte node fr32-valid (its top two bits are cleared if not).
	Data io.Reader
	// Progress receives human-readable progress lines (nil: none).
	Progress io.Writer
}

// Result summarizes what WriteRandomC1 produced.
type Result struct {
	Shape     *porep.Shape
	Identity  Identity
	CommD     porep.Domain
	CommR     porep.Domain
	ReplicaID porep.Domain
	Bytes     int64
	Output    *c1.Output
	// BenchmarkInput is true for a sparse C1 (WriteSparseC1): it passes the
	// verifier but its comm_r commits to no sealed replica.
	BenchmarkInput bool
}

// WriteRandomC1 seals a sector of the named shape (random data from Seed, or
// Data) and writes its C1 JSON to w: the library side of "seal random data
// for a shape and write C1".
func WriteRandomC1(ctx context.Context, cfg RandomC1Config, w io.Writer) (*Result, error) {
	s, err := porep.ShapeByName(cfg.Shape)
	if err != nil {
		return nil, err
	}
	prog := &Progress{W: cfg.Progress}
	rng := newRNG(cfg.Seed, 0)

	data := make([]porep.Domain, s.Nodes)
	if cfg.Data != nil {
		buf := make([]byte, porep.NodeSize)
		for i := range data {
			if _, err := io.ReadFull(cfg.Data, buf); err != nil {
				return nil, fmt.Errorf("sealer: read data node %d of %d: %w", i, s.Nodes, err)
			}
			copy(data[i][:], buf)
			data[i].TruncateTo254()
		}
	} else {
		for i := range data {
			rng.Read(data[i][:])
			data[i].TruncateTo254()
		}
	}
	id, seed := drawIdentity(rng)
	if cfg.Miner != nil {
		id.ProverID = porep.ProverID(*cfg.Miner)
	}
	if cfg.SectorNumber != nil {
		id.SectorID = *cfg.SectorNumber
	}

	sec, err := Seal(ctx, s, data, id, prog)
	if err != nil {
		return nil, err
	}
	out, err := Commit1(ctx, s, sec, id.Ticket, seed, prog)
	if err != nil {
		return nil, err
	}
	n, err := out.WriteTo(w)
	if err != nil {
		return nil, fmt.Errorf("sealer: write C1: %w", err)
	}
	prog.printf("wrote C1: %d bytes", n)
	return &Result{Shape: s, Identity: id, CommD: sec.CommD, CommR: sec.CommR, ReplicaID: sec.ReplicaID, Bytes: n, Output: out}, nil
}

// newRNG is the ChaCha8 stream of a run's Seed; stream, the last key byte,
// keeps the streams of the two modes apart for the same Seed.
func newRNG(seed uint64, stream byte) *rand.ChaCha8 {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	key[31] = stream
	return rand.NewChaCha8(key)
}

// drawIdentity draws a run's prover id, sector id, ticket and interactive
// seed, in that order.
func drawIdentity(rng *rand.ChaCha8) (Identity, porep.Domain) {
	var id Identity
	rng.Read(id.ProverID[:])
	id.SectorID = rng.Uint64() >> 1
	rng.Read(id.Ticket[:])
	var seed porep.Domain
	rng.Read(seed[:])
	return id, seed
}
