package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"connectrpc.com/connect"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// KeySource selects the verifying key of a seal check.
type KeySource int

const (
	// KeyAuto: the key the shape is proved with: Filecoin's official .vk
	// for an official shape, the cluster's <shape>.vk for a test shape.
	KeyAuto KeySource = iota
	// KeyOfficial: Filecoin's official .vk (official shapes only).
	KeyOfficial
	// KeyCluster: the cluster's <shape>.vk (test shapes only).
	KeyCluster
)

func (k KeySource) String() string {
	switch k {
	case KeyOfficial:
		return "official"
	case KeyCluster:
		return "cluster"
	}
	return "auto"
}

// SealCheck is a final proof to check as verify_seal does.
type SealCheck struct {
	Sector seal.Sector
	Proof  []byte
	Key    KeySource
}

// SealVerdict is the outcome of a seal check whose inputs were well formed
// and whose verifying key was found.
type SealVerdict struct {
	Valid bool
	// Reason says why the proof does not verify.
	Reason string
	// Failed are the partitions whose proof fails.
	Failed []int
	// Key is the key used (KeyOfficial or KeyCluster) and KeyFile its file.
	Key     KeySource
	KeyFile string
}

// ErrInvalidSeal marks malformed seal-check inputs (registered proof,
// commitments, lengths, proof bytes); the text names the problem.
var ErrInvalidSeal = errors.New("invalid seal check")

// ErrNoVerifyingKey: the verifying key asked for is not available; the
// text names the file and how to get it.
var ErrNoVerifyingKey = errors.New("no verifying key")

// VerifySeal implements ProofSystem: seal.Verify with the key chosen by
// c.Key among Filecoin's official .vk in OfficialDir (digest-checked
// against parameters.json) and the cluster's <ParamsDir>/<shape>.vk.
func (p *PoRep) VerifySeal(ctx context.Context, c SealCheck) (SealVerdict, error) {
	s := c.Sector.Shape
	if s == nil {
		return SealVerdict{}, fmt.Errorf("%w: no registered proof", ErrInvalidSeal)
	}
	pvk, src, file, err := p.sealKey(ctx, c.Key, s)
	if err != nil {
		return SealVerdict{}, err
	}
	v := SealVerdict{Key: src, KeyFile: file}
	err = seal.Verify(pvk, &c.Sector, c.Proof)
	var inv *seal.InvalidProofError
	switch {
	case err == nil:
		v.Valid = true
		return v, nil
	case errors.As(err, &inv):
		v.Reason, v.Failed = err.Error(), inv.Failed
		return v, nil
	case errors.Is(err, seal.ErrWrongKey):
		return SealVerdict{}, fmt.Errorf("%w: %s: %w", ErrNoVerifyingKey, file, err)
	}
	return SealVerdict{}, fmt.Errorf("%w: %w", ErrInvalidSeal, err)
}

// sealKey returns the verifying key of a shape from the source asked for:
// an official shape's is Filecoin's official .vk (KeyOfficial), a test
// shape's the cluster's <ParamsDir>/<shape>.vk (KeyCluster); asking for
// the other source is ErrNoVerifyingKey naming why.
func (p *PoRep) sealKey(ctx context.Context, src KeySource, s *porep.Shape) (*groth16.PreparedVerifyingKey, KeySource, string, error) {
	if s.Test {
		if src == KeyOfficial {
			return nil, 0, "", fmt.Errorf("%w: shape %s has no official verifying key (it exists only in c2cluster)", ErrNoVerifyingKey, s.Name)
		}
		pvk, err := p.vk(ctx, s.Name)
		if err != nil {
			return nil, 0, "", fmt.Errorf("%w: %w", ErrNoVerifyingKey, err)
		}
		return pvk, KeyCluster, circuit.VKPath(p.ParamsDir, s.Name), nil
	}
	if src == KeyCluster {
		return nil, 0, "", fmt.Errorf("%w: shape %s is proved with Filecoin's parameters only: its key is the official .vk", ErrNoVerifyingKey, s.Name)
	}
	if p.OfficialDir == "" {
		return nil, 0, "", fmt.Errorf("%w: no official parameter directory configured", ErrNoVerifyingKey)
	}
	paths, err := ceremony.PathsIn(p.OfficialDir, s)
	if err != nil {
		return nil, 0, "", fmt.Errorf("%w: %w", ErrNoVerifyingKey, err)
	}
	pvk, err := p.officialVK(ctx, s)
	if err != nil {
		return nil, 0, paths.VK, err
	}
	return pvk, KeyOfficial, paths.VK, nil
}

// officialVK loads and caches a shape's official verifying key. A missing
// file is not cached: once fetched, it is used without a restart.
func (p *PoRep) officialVK(ctx context.Context, s *porep.Shape) (*groth16.PreparedVerifyingKey, error) {
	key := "official/" + s.Name
	p.mu.Lock()
	v, ok := p.vks[key]
	p.mu.Unlock()
	if ok {
		return v, nil
	}
	vk, _, err := ceremony.LoadVerifyingKey(ctx, p.OfficialDir, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoVerifyingKey, err)
	}
	pvk, err := groth16.PrepareVerifyingKey(vk)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoVerifyingKey, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.vks == nil {
		p.vks = map[string]*groth16.PreparedVerifyingKey{}
	}
	p.vks[key] = pvk
	return pvk, nil
}

var keySourceProto = map[KeySource]c2clusterv1.VerifyingKeySource{
	KeyAuto:     c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_AUTO,
	KeyOfficial: c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_OFFICIAL,
	KeyCluster:  c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_CLUSTER,
}

// SealCheckOf converts a Verify request: the registered proof, the
// commitments (CID or hex), the prover id (given, or derived from the miner
// id), the 32-byte ticket and seed. Malformed values are ErrInvalidSeal.
func SealCheckOf(req *c2clusterv1.VerifyRequest) (SealCheck, error) {
	bad := func(err error) (SealCheck, error) { return SealCheck{}, fmt.Errorf("%w: %w", ErrInvalidSeal, err) }
	var c SealCheck
	s, err := seal.ShapeOf(req.RegisteredProof)
	if err != nil {
		return bad(err)
	}
	c.Sector.Shape = s
	if c.Sector.CommR, err = seal.ParseCommitment(seal.CommR, req.CommR); err != nil {
		return bad(err)
	}
	if c.Sector.CommD, err = seal.ParseCommitment(seal.CommD, req.CommD); err != nil {
		return bad(err)
	}
	for _, f := range []struct {
		name string
		in   []byte
		dst  *[32]byte
		opt  bool
	}{{"prover_id", req.ProverId, &c.Sector.ProverID, true}, {"ticket", req.Ticket, &c.Sector.Ticket, false}, {"seed", req.Seed, &c.Sector.Seed, false}} {
		if f.opt && len(f.in) == 0 {
			continue
		}
		if len(f.in) != 32 {
			return bad(fmt.Errorf("%s has %d bytes, want 32", f.name, len(f.in)))
		}
		copy(f.dst[:], f.in)
	}
	if len(req.ProverId) == 0 {
		c.Sector.ProverID = seal.ProverID(req.MinerId)
	}
	c.Sector.SectorNumber = req.SectorNumber
	c.Proof = req.Proof
	switch req.Key {
	case c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_AUTO:
		c.Key = KeyAuto
	case c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_OFFICIAL:
		c.Key = KeyOfficial
	case c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_CLUSTER:
		c.Key = KeyCluster
	default:
		return bad(fmt.Errorf("unknown key source %d", req.Key))
	}
	return c, nil
}

// Verify implements ProofService.Verify.
func (s *Server) Verify(ctx context.Context, req *connect.Request[c2clusterv1.VerifyRequest]) (*connect.Response[c2clusterv1.VerifyResponse], error) {
	c, err := SealCheckOf(req.Msg)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	v, err := s.ps.VerifySeal(ctx, c)
	switch {
	case errors.Is(err, ErrInvalidSeal):
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, ErrNoVerifyingKey):
		return nil, connect.NewError(connect.CodeFailedPrecondition, err)
	case err != nil:
		if ctx.Err() != nil {
			return nil, connect.NewError(connect.CodeDeadlineExceeded, err)
		}
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	s.log.InfoContext(ctx, "coordinator: verify", slog.String("shape", c.Sector.Shape.Name), slog.Uint64("sector", c.Sector.SectorNumber),
		slog.Bool("valid", v.Valid), slog.String("key", v.Key.String()), slog.String("key_file", v.KeyFile))
	res := &c2clusterv1.VerifyResponse{Valid: v.Valid, Reason: v.Reason, Shape: c.Sector.Shape.Name,
		Key: keySourceProto[v.Key], KeyFile: v.KeyFile}
	for _, k := range v.Failed {
		res.FailedPartitions = append(res.FailedPartitions, uint32(k))
	}
	return connect.NewResponse(res), nil
}

// PartitionsError is an ErrProofInvalid naming the partitions whose proofs
// fail verification on their own, each with why.
type PartitionsError struct {
	Failed  []int
	Reasons map[int]string
}

func (e *PartitionsError) Error() string {
	parts := make([]string, 0, len(e.Failed))
	for _, k := range e.Failed {
		parts = append(parts, fmt.Sprintf("partition %d: %s", k, e.Reasons[k]))
	}
	return fmt.Sprintf("%s: %s", ErrProofInvalid, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrProofInvalid) true.
func (e *PartitionsError) Is(target error) bool { return target == ErrProofInvalid }

// verifyPartitions checks partition proofs (wire bytes) against their
// public inputs: one batch verification, and when it fails (or a proof does
// not decode) each proof on its own, so the error names the bad ones.
func verifyPartitions(pvk *groth16.PreparedVerifyingKey, proofs [][]byte, inputs [][]fr.Element) error {
	bad := &PartitionsError{Reasons: map[int]string{}}
	ps := make([]*groth16.Proof, len(proofs))
	for k, b := range proofs {
		ps[k] = new(groth16.Proof)
		if err := ps[k].UnmarshalBinary(b); err != nil {
			bad.Failed = append(bad.Failed, k)
			bad.Reasons[k] = fmt.Sprintf("%d bytes do not decode to a proof: %v", len(b), err)
		}
	}
	if len(bad.Failed) == 0 {
		if pvk.VerifyBatch(ps, inputs) == nil {
			return nil
		}
	}
	for k := range ps {
		if _, done := bad.Reasons[k]; done {
			continue
		}
		if err := pvk.Verify(ps[k], inputs[k]); err != nil {
			bad.Failed = append(bad.Failed, k)
			bad.Reasons[k] = fmt.Sprintf("does not verify with the coordinator's verifying key: %v", err)
		}
	}
	if len(bad.Failed) == 0 {
		// The batch failed but every proof passes alone: cannot happen for
		// a sound batch check; fail the job rather than loop.
		return fmt.Errorf("%w: the batch check failed though every partition proof verifies alone", ErrProofInvalid)
	}
	slices.Sort(bad.Failed)
	return bad
}

// KeyFingerprint implements KeyFingerprinter: the fingerprint of the key
// VerifyJob checks the shape's proofs with, and its file.
func (p *PoRep) KeyFingerprint(ctx context.Context, shape string) (string, string, error) {
	s, err := porep.ShapeByName(shape)
	if err != nil {
		return "", "", err
	}
	pvk, err := p.vk(ctx, shape)
	if err != nil {
		return "", "", err
	}
	file := circuit.VKPath(p.ParamsDir, shape)
	if !s.Test {
		paths, err := ceremony.PathsIn(p.OfficialDir, s)
		if err != nil {
			return "", "", err
		}
		file = paths.VK
	}
	vk := pvk.VerifyingKey()
	return vk.Fingerprint(), file, nil
}
