package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

// ErrInvalidC1 marks a C1 output rejected at submit (malformed, wrong
// shape, tampered, too large); the text names the problem.
var ErrInvalidC1 = errors.New("invalid C1 output")

// ErrUnsupportedShape: the coordinator cannot verify proofs of this shape
// (no verifying key).
var ErrUnsupportedShape = errors.New("unsupported proof shape")

// ErrProofInvalid marks an assembled proof that does not verify. When
// particular partitions' proofs fail, the error is a *PartitionsError
// naming them (the assembler re-queues them); otherwise the job fails.
var ErrProofInvalid = errors.New("assembled proof does not verify")

// Inspection is what Inspect learns from a C1 output.
type Inspection struct {
	Shape      string
	Partitions int
	// SectorSize is the shape's sector size in bytes.
	SectorSize uint64
	// ReplicaID, CommD and Ticket are the C1 output's, and PoRepID its
	// proof type's: what a sector's replica id is derived from.
	ReplicaID, CommD, Ticket porep.Domain
	PoRepID                  [32]byte
}

// ProofSystem is what the coordinator needs of the proof system.
type ProofSystem interface {
	// Inspect parses and structurally validates a C1 output; with vanilla
	// it also runs the native vanilla-proof verifier. Bad input is
	// ErrInvalidC1, a shape without a verifying key ErrUnsupportedShape.
	Inspect(ctx context.Context, c1JSON []byte, vanilla bool) (Inspection, error)
	// VerifyJob checks a job's partition proofs (in partition order)
	// against the public inputs of its C1 output; ErrProofInvalid when they
	// do not verify, as a *PartitionsError when particular partitions'
	// proofs fail.
	VerifyJob(ctx context.Context, shape string, c1JSON []byte, proofs [][]byte) error
	// VerifySeal checks a sector's final proof as Filecoin's verify_seal
	// does (the Verify RPC). Malformed inputs are ErrInvalidSeal, a missing
	// key ErrNoVerifyingKey; a proof that does not verify is a verdict, not
	// an error.
	VerifySeal(ctx context.Context, c SealCheck) (SealVerdict, error)
}

// PoRep is the real ProofSystem: C1 parsing and checks from pkg/porep, the
// batch verifier of pkg/groth16. Verifying keys are read on first use and
// kept: Filecoin's official .vk from OfficialDir for the official shapes
// (pkg/porep/ceremony: digest-checked), <ParamsDir>/<shape>.vk for the
// test shapes.
type PoRep struct {
	ParamsDir string
	// OfficialDir is Filecoin's parameter directory (ceremony.Dir()); empty:
	// no official verifying keys.
	OfficialDir string
	// MaxC1Bytes bounds the C1 document; 0 means c1.DefaultMaxBytes.
	MaxC1Bytes int64

	mu  sync.Mutex
	vks map[string]*groth16.PreparedVerifyingKey
}

func (p *PoRep) parse(data []byte) (*c1.Output, error) {
	limit := p.MaxC1Bytes
	if limit <= 0 {
		limit = c1.DefaultMaxBytes
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %d bytes exceeds the limit of %d", ErrInvalidC1, len(data), limit)
	}
	out, err := c1.ParseBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidC1, err)
	}
	return out, nil
}

// Inspect implements ProofSystem.
func (p *PoRep) Inspect(ctx context.Context, data []byte, vanilla bool) (Inspection, error) {
	out, err := p.parse(data)
	if err != nil {
		return Inspection{}, err
	}
	if err := verifier.CheckStructure(out, verifier.Options{}); err != nil {
		return Inspection{}, fmt.Errorf("%w: %w", ErrInvalidC1, err)
	}
	if _, err := p.vk(ctx, out.Shape.Name); err != nil {
		return Inspection{}, err
	}
	if vanilla {
		if err := verifier.Verify(ctx, out, verifier.Options{}); err != nil {
			if ctx.Err() != nil {
				return Inspection{}, ctx.Err()
			}
			return Inspection{}, fmt.Errorf("%w: vanilla proof check: %w", ErrInvalidC1, err)
		}
	}
	return Inspection{Shape: out.Shape.Name, Partitions: out.Shape.Partitions, SectorSize: out.Shape.SectorSize(),
		ReplicaID: out.ReplicaID, CommD: out.CommD, Ticket: out.Ticket, PoRepID: out.Shape.PoRepID()}, nil
}

// VerifyJob implements ProofSystem with one batch verification.
func (p *PoRep) VerifyJob(ctx context.Context, shape string, data []byte, proofs [][]byte) error {
	out, err := p.parse(data)
	if err != nil {
		return err
	}
	if out.Shape.Name != shape {
		return fmt.Errorf("%w: C1 output is of shape %s, job of %s", ErrProofInvalid, out.Shape.Name, shape)
	}
	if len(proofs) != out.Shape.Partitions {
		return fmt.Errorf("%w: %d partition proofs for %d partitions", ErrProofInvalid, len(proofs), out.Shape.Partitions)
	}
	pvk, err := p.vk(ctx, shape)
	if err != nil {
		return err
	}
	inputs := make([][]fr.Element, len(proofs))
	for k := range proofs {
		if inputs[k], err = circuit.PublicInputs(out, k); err != nil {
			return fmt.Errorf("%w: public inputs of partition %d: %w", ErrProofInvalid, k, err)
		}
	}
	return verifyPartitions(pvk, proofs, inputs)
}

// vk is the verifying key jobs of shape are checked with: Filecoin's
// official .vk for an official shape (its parameters are the only ones
// workers prove with), <ParamsDir>/<shape>.vk for a test shape.
func (p *PoRep) vk(ctx context.Context, shape string) (*groth16.PreparedVerifyingKey, error) {
	s, err := porep.ShapeByName(shape)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupportedShape, err)
	}
	if !s.Test {
		if p.OfficialDir == "" {
			return nil, fmt.Errorf("%w: %s: no official parameter directory configured", ErrUnsupportedShape, shape)
		}
		pvk, err := p.officialVK(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrUnsupportedShape, shape, err)
		}
		return pvk, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.vks[shape]; ok {
		return v, nil
	}
	path := circuit.VKPath(p.ParamsDir, shape)
	// The same strict reader as the workers': trailing bytes are an error too.
	vk, err := groth16.ReadVerifyingKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: no verifying key: %w (make the test shape's parameters with: %s — the workers must prove with the %s.params made beside this .vk)",
			ErrUnsupportedShape, shape, err, circuit.MakeParamsCommand(p.ParamsDir, shape), shape)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: verifying key %s: %w", ErrUnsupportedShape, shape, path, err)
	}
	pvk, err := groth16.PrepareVerifyingKey(vk)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: verifying key %s: %w", ErrUnsupportedShape, shape, path, err)
	}
	if p.vks == nil {
		p.vks = map[string]*groth16.PreparedVerifyingKey{}
	}
	p.vks[shape] = pvk
	return pvk, nil
}
