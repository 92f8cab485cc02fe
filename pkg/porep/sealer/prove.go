package sealer

import (
	"context"
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// Source is what vanilla-proof generation reads from a sealed sector. Sector
// implements it from full in-memory trees; a sparse large-sector mode can
// implement it from the challenged nodes only.
type Source interface {
	// Label is the label of node in layer (1-based).
	Label(layer int, node uint64) porep.Domain
	// DataProof opens node in tree D.
	DataProof(node uint64) (*merkle.Proof, error)
	// ColumnProof opens node's column hash in tree C.
	ColumnProof(node uint64) (*merkle.Proof, error)
	// ReplicaProof opens node in tree R_last.
	ReplicaProof(node uint64) (*merkle.Proof, error)
	// Commitments are comm_d, comm_r and the replica id.
	Commitments() (commD, commR, replicaID porep.Domain)
}

// Commit1 derives the challenges of every partition from seed and builds the
// C1 output. progress gets one line per partition.
func Commit1(ctx context.Context, s *porep.Shape, src Source, ticket, seed [32]byte, progress *Progress) (*c1.Output, error) {
	g, err := graph.For(s)
	if err != nil {
		return nil, err
	}
	return commit1(ctx, s, g, src, ticket, seed, progress)
}

// commit1 is Commit1 with the shape's graph given.
func commit1(ctx context.Context, s *porep.Shape, g *graph.Graph, src Source, ticket, seed [32]byte, progress *Progress) (*c1.Output, error) {
	commD, commR, rid := src.Commitments()
	parts := make([][]c1.ChallengeProof, s.Partitions)
	for k := range s.Partitions {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sealer: commit1: %w", err)
		}
		challenges := porep.Challenges(s, rid, seed, k)
		parts[k] = make([]c1.ChallengeProof, len(challenges))
		for i, ch := range challenges {
			p, err := ProveChallenge(s, g, src, ch)
			if err != nil {
				return nil, fmt.Errorf("sealer: partition %d challenge %d (node %d): %w", k, i, ch, err)
			}
			parts[k][i] = *p
		}
		progress.printf("vanilla proofs: partition %d/%d (%d challenges)", k+1, s.Partitions, len(challenges))
	}
	out := &c1.Output{
		RegisteredProof: s.RegisteredProof,
		CommR:           commR,
		CommD:           commD,
		ReplicaID:       rid,
		Seed:            seed,
		Ticket:          ticket,
		Shape:           s,
	}
	if err := out.VanillaProofs.Set(s.VanillaProofTag, parts); err != nil {
		return nil, err
	}
	return out, nil
}

// ProveChallenge builds the vanilla proof of one challenged node, as
// storage-proofs-porep's prove_layers does.
func ProveChallenge(s *porep.Shape, g *graph.Graph, src Source, challenge uint64) (*c1.ChallengeProof, error) {
	if challenge >= s.Nodes {
		return nil, fmt.Errorf("challenge %d out of range", challenge)
	}
	var p c1.ChallengeProof
	dp, err := src.DataProof(challenge)
	if err != nil {
		return nil, fmt.Errorf("tree D proof: %w", err)
	}
	p.CommDProofs = c1.FromProof(dp)
	rp, err := src.ReplicaProof(challenge)
	if err != nil {
		return nil, fmt.Errorf("tree R_last proof: %w", err)
	}
	p.CommRLastProof = c1.FromProof(rp)

	column := func(node uint64) (c1.ColumnProof, error) {
		cp, err := src.ColumnProof(node)
		if err != nil {
			return c1.ColumnProof{}, fmt.Errorf("tree C proof of node %d: %w", node, err)
		}
		rows := make([]porep.Domain, s.Layers)
		for l := range rows {
			rows[l] = src.Label(l+1, node)
		}
		return c1.ColumnProof{Column: c1.Column{Index: uint32(node), Rows: rows}, InclusionProof: c1.FromProof(cp)}, nil
	}
	parents := make([]uint32, g.Degree())
	g.Parents(challenge, parents)
	rc := &p.ReplicaColumnProofs
	if rc.CX, err = column(challenge); err != nil {
		return nil, err
	}
	rc.DrgParents = make([]c1.ColumnProof, s.BaseDegree)
	for j := range rc.DrgParents {
		if rc.DrgParents[j], err = column(uint64(parents[j])); err != nil {
			return nil, err
		}
	}
	rc.ExpParents = make([]c1.ColumnProof, s.ExpDegree)
	for j := range rc.ExpParents {
		if rc.ExpParents[j], err = column(uint64(parents[s.BaseDegree+j])); err != nil {
			return nil, err
		}
	}

	p.LabelingProofs = make([]c1.LabelingProof, s.Layers)
	own := make([]porep.Domain, s.Degree())
	for l := 1; l <= s.Layers; l++ {
		full := make([]porep.Domain, s.LabelParents)
		labelParents(s, src, l, parents, own, full)
		p.LabelingProofs[l-1] = c1.LabelingProof{Parents: full, LayerIndex: uint32(l), Node: challenge}
	}
	last := p.LabelingProofs[s.Layers-1]
	p.EncodingProof = c1.EncodingProof{Parents: last.Parents, LayerIndex: last.LayerIndex, Node: challenge}
	return &p, nil
}

// labelParents fills full (len = Shape.LabelParents) with the parent labels
// the labeling hash of a node absorbs in layer (1-based), given the node's
// graph parents: its DRG parents in the same layer, then on layers > 1 its
// expander parents in the previous layer, repeated cyclically. own (len ≥
// Shape.Degree) is scratch.
func labelParents(s *porep.Shape, src Source, layer int, parents []uint32, own, full []porep.Domain) {
	n := s.BaseDegree
	if layer > 1 {
		n = s.Degree()
	}
	for j := range n {
		if j < s.BaseDegree {
			own[j] = src.Label(layer, uint64(parents[j]))
		} else {
			own[j] = src.Label(layer-1, uint64(parents[j]))
		}
	}
	porep.RepeatParents(full, own[:n])
}
