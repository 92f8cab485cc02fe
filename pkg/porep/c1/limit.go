package c1

import (
	"encoding/json"
	"math"
	"sync"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// MaxBytes is the size limit of a C1 document of shape s: the largest
// compact encoding a document of the shape can have, plus a margin.
//
// The compact bound is computed, not measured: the shape fixes every count
// in the document (partitions × challenges, the Merkle path lengths of trees
// D, C and R_last from the tree arities and the node count, the columns'
// layers, the labeling parents), so the document with every byte of every
// 32-byte value at 255 (three digits) and every integer at its type's
// largest value is the longest one Validate accepts in compact form. Real
// documents are ~10% smaller (random bytes average 2.6 digits).
//
// The margin, an eighth of the bound plus 64 KiB, leaves room for a
// serializer that adds some whitespace or writes "null" for absent enum
// variants; it does not admit an indented (pretty-printed) document, which
// is several times the compact size: rust-fil-proofs (serde_json::to_vec),
// Lotus and Curio all write C1 outputs compact, and `jq -c` compacts one.
// With the margin, the limit stays within a few MB of the real size, so a
// small shape's document cannot carry padding that every worker proving it
// downloads.
func MaxBytes(s *porep.Shape) int64 {
	limitsMu.Lock()
	defer limitsMu.Unlock()
	if n, ok := limits[s.Name]; ok {
		return n
	}
	n := compactBound(s)
	n += n/8 + 64<<10
	limits[s.Name] = n
	return n
}

// MaxBytesAll is the largest MaxBytes of the registered shapes.
func MaxBytesAll() int64 {
	var max int64
	for _, s := range porep.Shapes() {
		if n := MaxBytes(&s); n > max {
			max = n
		}
	}
	return max
}

var (
	limitsMu sync.Mutex
	limits   = map[string]int64{}
)

// compactBound is the compact encoding size of the largest document of s:
// one maximal challenge proof is encoded, the rest is counted.
func compactBound(s *porep.Shape) int64 {
	cp := maxChallenge(s)
	one := &Output{RegisteredProof: s.RegisteredProof, CommR: maxDomain, CommD: maxDomain,
		ReplicaID: maxDomain, Seed: maxDomain, Ticket: maxDomain}
	if err := one.VanillaProofs.Set(s.VanillaProofTag, [][]ChallengeProof{{cp}}); err != nil {
		panic(err) // a registered shape's tag is always known
	}
	doc, err := json.Marshal(one)
	if err != nil {
		panic(err)
	}
	item, err := json.Marshal(&cp)
	if err != nil {
		panic(err)
	}
	// [[cp]] becomes [[cp,…,cp],…,[cp,…,cp]]: P×C proofs, P×(C−1) commas
	// between proofs, P−1 commas and 2(P−1) brackets between partitions.
	p, c, l := int64(s.Partitions), int64(s.ChallengesPerPartition), int64(len(item))
	return int64(len(doc)) - l + p*c*l + p*(c-1) + 3*(p-1)
}

var maxDomain = func() porep.Domain {
	var d porep.Domain
	for i := range d {
		d[i] = 255
	}
	return d
}()

func maxDomains(n int) []porep.Domain {
	out := make([]porep.Domain, n)
	for i := range out {
		out[i] = maxDomain
	}
	return out
}

func maxPath(arity, height int) []merkle.PathElement {
	out := make([]merkle.PathElement, height)
	for i := range out {
		out[i] = merkle.PathElement{Hashes: maxDomains(arity - 1), Index: uint64(arity - 1)} // Validate: index < arity
	}
	return out
}

// maxMerkle is the largest proof in a tree of shape t over leaves.
func maxMerkle(t porep.TreeShape, leaves uint64) MerkleProof {
	base := maxPath(t.Base, t.BaseHeight(leaves))
	switch {
	case t.Top > 0:
		return MerkleProof{Data: ProofData{Top: &TopProof{BaseProof: InclusionPath{base}, SubProof: InclusionPath{maxPath(t.Sub, 1)},
			TopProof: InclusionPath{maxPath(t.Top, 1)}, Root: maxDomain, Leaf: maxDomain}}}
	case t.Sub > 0:
		return MerkleProof{Data: ProofData{Sub: &SubProof{BaseProof: InclusionPath{base}, SubProof: InclusionPath{maxPath(t.Sub, 1)},
			Root: maxDomain, Leaf: maxDomain}}}
	}
	return MerkleProof{Data: ProofData{Single: &SingleProof{Root: maxDomain, Leaf: maxDomain, Path: InclusionPath{base}}}}
}

func maxChallenge(s *porep.Shape) ChallengeProof {
	col := func() ColumnProof {
		return ColumnProof{Column: Column{Index: math.MaxUint32, Rows: maxDomains(s.Layers)}, InclusionProof: maxMerkle(s.Tree, s.Nodes)}
	}
	cols := func(n int) []ColumnProof {
		out := make([]ColumnProof, n)
		for i := range out {
			out[i] = col()
		}
		return out
	}
	labels := make([]LabelingProof, s.Layers)
	for i := range labels {
		labels[i] = LabelingProof{Parents: maxDomains(s.LabelParents), LayerIndex: math.MaxUint32, Node: math.MaxUint64}
	}
	return ChallengeProof{
		CommDProofs:         maxMerkle(porep.TreeShape{Base: 2}, s.Nodes),
		CommRLastProof:      maxMerkle(s.Tree, s.Nodes),
		ReplicaColumnProofs: ReplicaColumnProofs{CX: col(), DrgParents: cols(s.BaseDegree), ExpParents: cols(s.ExpDegree)},
		LabelingProofs:      labels,
		EncodingProof:       EncodingProof{Parents: maxDomains(s.LabelParents), LayerIndex: math.MaxUint32, Node: math.MaxUint64},
	}
}
