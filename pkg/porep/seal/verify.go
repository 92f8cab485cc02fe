package seal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Sector is what verify_seal checks a proof against: the registered proof
// and what the chain records of the sector.
type Sector struct {
	// Shape is the registered proof's shape (ShapeOf).
	Shape *porep.Shape
	// CommR and CommD are the sector's commitments, as stored (little-endian
	// field elements).
	CommR, CommD porep.Domain
	// ProverID is the miner's prover id (ProverID of its actor id).
	ProverID [32]byte
	// SectorNumber is the sector's number (rust-fil-proofs' SectorId).
	SectorNumber uint64
	// Ticket is the sealing randomness (the replica id depends on it); Seed
	// the interactive randomness the challenges derive from.
	Ticket, Seed [32]byte
}

// ShapeOf resolves a registered proof: a RegisteredSealProof name
// ("StackedDrg32GiBV1_1"), its number (8), or a c2cluster shape name
// ("32GiB", "test-micro").
func ShapeOf(registeredProof string) (*porep.Shape, error) {
	if s, err := porep.ShapeByRegisteredProof(registeredProof); err == nil {
		return s, nil
	}
	if s, err := porep.ShapeByName(registeredProof); err == nil {
		return s, nil
	}
	if n, err := strconv.ParseUint(registeredProof, 10, 64); err == nil {
		for _, s := range porep.Shapes() {
			if !s.Test && s.ProofID == n {
				return &s, nil
			}
		}
	}
	var known []string
	for _, s := range porep.Shapes() {
		if !s.Test {
			known = append(known, fmt.Sprintf("%s (%d)", s.RegisteredProof, s.ProofID))
		}
	}
	return nil, fmt.Errorf("%w: registered proof %q is not a v1.1 seal proof or a shape name (known: %s; shapes: %s)",
		porep.ErrUnknownShape, registeredProof, strings.Join(known, ", "), strings.Join(porep.ShapeNames(), ", "))
}

// Statement checks the sector's values as verify_seal does before anything
// else (comm_d and comm_r not all zero, each a canonical field element) and
// returns the statement its proof is about, with the replica id
// (porep.ReplicaID of prover id, sector number, ticket, comm_d, porep id).
func (sec *Sector) Statement() (Statement, error) {
	if sec == nil || sec.Shape == nil {
		return Statement{}, fmt.Errorf("%w: no registered proof", ErrInvalidInput)
	}
	if err := sec.Shape.Validate(); err != nil {
		return Statement{}, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	for _, c := range []struct {
		name string
		v    porep.Domain
	}{{"comm_d", sec.CommD}, {"comm_r", sec.CommR}} {
		if c.v == (porep.Domain{}) {
			return Statement{}, fmt.Errorf("%w: invalid all-zero commitment (%s)", ErrInvalidInput, c.name)
		}
		if _, err := c.v.Element(); err != nil {
			return Statement{}, fmt.Errorf("%w: invalid commitment (%s): %s is not a BLS12-381 scalar (little-endian, below the modulus)", ErrInvalidInput, c.name, c.v)
		}
	}
	return Statement{
		Shape:     sec.Shape,
		ReplicaID: porep.ReplicaID(sec.ProverID, sec.SectorNumber, sec.Ticket, sec.CommD, sec.Shape.PoRepID()),
		CommD:     sec.CommD,
		CommR:     sec.CommR,
		Seed:      sec.Seed,
	}, nil
}

// ErrMalformedProof: the proof bytes are not Partitions × 192 bytes of
// valid points.
var ErrMalformedProof = errors.New("seal: malformed proof")

// ErrWrongKey: the verifying key does not take the shape's public inputs
// (a key of another shape or circuit).
var ErrWrongKey = errors.New("seal: verifying key does not fit the shape")

// InvalidProofError is a well-formed proof that does not verify for the
// sector: the pairing check of the listed partitions fails.
type InvalidProofError struct {
	Shape      string
	Partitions int
	// Failed are the partitions whose proof fails on its own.
	Failed []int
}

func (e *InvalidProofError) Error() string {
	return fmt.Sprintf("seal: the %s proof does not verify: partition(s) %v of %d fail: the proof was not made for this comm_r, comm_d, prover id, sector number, ticket and seed, or not with this verifying key",
		e.Shape, e.Failed, e.Partitions)
}

// Unwrap makes errors.Is(err, groth16.ErrInvalidProof) true.
func (e *InvalidProofError) Unwrap() error { return groth16.ErrInvalidProof }

// Verify checks a C2 proof of a sector as verify_seal does: the sector's
// values (Sector.Statement), the proof's length (exactly Partitions × 192
// bytes, partition proofs in order) and points (groth16.SplitProofs), then
// all partitions at once against vk (batch verification) with the public
// inputs of Statement.PublicInputs. It returns nil for a valid proof;
// otherwise an error wrapping ErrInvalidInput, ErrMalformedProof, ErrWrongKey
// or an *InvalidProofError (groth16.ErrInvalidProof) naming the failing
// partitions.
func Verify(vk *groth16.PreparedVerifyingKey, sec *Sector, proof []byte) error {
	if vk == nil {
		return fmt.Errorf("%w: no verifying key", ErrWrongKey)
	}
	st, err := sec.Statement()
	if err != nil {
		return err
	}
	s := st.Shape
	if len(proof) == 0 {
		return fmt.Errorf("%w: empty proof", ErrMalformedProof)
	}
	if want := s.Partitions * groth16.ProofSize; len(proof) != want {
		return fmt.Errorf("%w: %d bytes, a %s proof has %d partitions × %d bytes = %d", ErrMalformedProof, len(proof), s.Name, s.Partitions, groth16.ProofSize, want)
	}
	if n := len(vk.VerifyingKey().IC) - 1; n != NumPublicInputs(s) {
		return fmt.Errorf("%w: the key takes %d public inputs, a %s partition has %d", ErrWrongKey, n, s.Name, NumPublicInputs(s))
	}
	proofs, err := groth16.SplitProofs(proof)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedProof, err)
	}
	inputs, err := st.AllPublicInputs()
	if err != nil {
		return err
	}
	err = vk.VerifyBatch(proofs, inputs)
	var bad *groth16.InvalidProofsError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return &InvalidProofError{Shape: s.Name, Partitions: s.Partitions, Failed: bad.Indexes}
	case errors.Is(err, groth16.ErrInvalidProof):
		return &InvalidProofError{Shape: s.Name, Partitions: s.Partitions}
	}
	return fmt.Errorf("seal: verify: %w", err)
}
