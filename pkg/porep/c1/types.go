package c1

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// Output is SealCommitPhase1Output (filecoin-proofs-api seal.rs).
type Output struct {
	RegisteredProof string        `json:"registered_proof"`
	VanillaProofs   VanillaProofs `json:"vanilla_proofs"`
	CommR           porep.Domain  `json:"comm_r"`
	CommD           porep.Domain  `json:"comm_d"`
	ReplicaID       porep.Domain  `json:"replica_id"`
	Seed            porep.Domain  `json:"seed"`
	Ticket          porep.Domain  `json:"ticket"`

	// Shape is resolved from RegisteredProof by Parse (not serialized).
	Shape *porep.Shape `json:"-"`
}

// VanillaProofs is the VanillaSealProof enum: exactly one variant is set,
// indexed [partition][challenge]. Official v1.1 proofs use the V1 variant
// names (filecoin-proofs-api maps StackedDrg2KiBV1_1 to StackedDrg2KiBV1).
type VanillaProofs struct {
	StackedDrg2KiBV1   [][]ChallengeProof `json:"StackedDrg2KiBV1,omitempty"`
	StackedDrg8MiBV1   [][]ChallengeProof `json:"StackedDrg8MiBV1,omitempty"`
	StackedDrg512MiBV1 [][]ChallengeProof `json:"StackedDrg512MiBV1,omitempty"`
	StackedDrg32GiBV1  [][]ChallengeProof `json:"StackedDrg32GiBV1,omitempty"`
	StackedDrg64GiBV1  [][]ChallengeProof `json:"StackedDrg64GiBV1,omitempty"`
	C2ClusterTest      [][]ChallengeProof `json:"C2ClusterTest,omitempty"`
}

func (v *VanillaProofs) variants() []struct {
	tag string
	p   *[][]ChallengeProof
} {
	return []struct {
		tag string
		p   *[][]ChallengeProof
	}{
		{"StackedDrg2KiBV1", &v.StackedDrg2KiBV1},
		{"StackedDrg8MiBV1", &v.StackedDrg8MiBV1},
		{"StackedDrg512MiBV1", &v.StackedDrg512MiBV1},
		{"StackedDrg32GiBV1", &v.StackedDrg32GiBV1},
		{"StackedDrg64GiBV1", &v.StackedDrg64GiBV1},
		{porep.TestVanillaProofTag, &v.C2ClusterTest},
	}
}

// Tag returns the tag of the single variant present, or an error when none
// or several are.
func (v *VanillaProofs) Tag() (string, error) {
	tag := ""
	for _, x := range v.variants() {
		if *x.p != nil {
			if tag != "" {
				return "", fmt.Errorf("more than one variant (%s and %s)", tag, x.tag)
			}
			tag = x.tag
		}
	}
	if tag == "" {
		return "", fmt.Errorf("no variant")
	}
	return tag, nil
}

// Partitions returns the proofs of the variant present (nil if none).
func (v *VanillaProofs) Partitions() [][]ChallengeProof {
	for _, x := range v.variants() {
		if *x.p != nil {
			return *x.p
		}
	}
	return nil
}

// Set stores proofs under tag, clearing the other variants.
func (v *VanillaProofs) Set(tag string, proofs [][]ChallengeProof) error {
	*v = VanillaProofs{}
	for _, x := range v.variants() {
		if x.tag == tag {
			*x.p = proofs
			return nil
		}
	}
	return fmt.Errorf("c1: unknown vanilla proof tag %q", tag)
}

// ChallengeProof is storage-proofs-porep stacked vanilla Proof: everything
// about one challenged node.
type ChallengeProof struct {
	CommDProofs         MerkleProof         `json:"comm_d_proofs"`
	CommRLastProof      MerkleProof         `json:"comm_r_last_proof"`
	ReplicaColumnProofs ReplicaColumnProofs `json:"replica_column_proofs"`
	// LabelingProofs has one entry per layer, layer 1 first.
	LabelingProofs []LabelingProof `json:"labeling_proofs"`
	EncodingProof  EncodingProof   `json:"encoding_proof"`
}

// ReplicaColumnProofs opens the columns of the challenge and its parents in
// tree C.
type ReplicaColumnProofs struct {
	CX         ColumnProof   `json:"c_x"`
	DrgParents []ColumnProof `json:"drg_parents"`
	ExpParents []ColumnProof `json:"exp_parents"`
}

// ColumnProof is a column and its inclusion proof in tree C.
type ColumnProof struct {
	Column         Column      `json:"column"`
	InclusionProof MerkleProof `json:"inclusion_proof"`
}

// Column is the labels of one node in every layer (rows[l] = layer l+1).
type Column struct {
	Index uint32         `json:"index"`
	Rows  []porep.Domain `json:"rows"`
	H     Phantom        `json:"_h"`
}

// LabelingProof is the input of one label: parent labels already repeated
// to Shape.LabelParents entries.
type LabelingProof struct {
	Parents    []porep.Domain `json:"parents"`
	LayerIndex uint32         `json:"layer_index"`
	Node       uint64         `json:"node"`
}

// EncodingProof is the input of the encoding key (the last layer's label).
type EncodingProof struct {
	Parents    []porep.Domain `json:"parents"`
	LayerIndex uint32         `json:"layer_index"`
	Node       uint64         `json:"node"`
}

// MerkleProof is storage-proofs-core MerkleProof: {"data": ProofData}.
type MerkleProof struct {
	Data ProofData `json:"data"`
}

// ProofData is the externally tagged ProofData enum: one of the three set.
type ProofData struct {
	Single *SingleProof `json:"Single,omitempty"`
	Sub    *SubProof    `json:"Sub,omitempty"`
	Top    *TopProof    `json:"Top,omitempty"`
}

// SingleProof is a proof in one tree.
type SingleProof struct {
	Root porep.Domain  `json:"root"`
	Leaf porep.Domain  `json:"leaf"`
	Path InclusionPath `json:"path"`
}

// SubProof is a proof in a tree with a sub layer.
type SubProof struct {
	BaseProof InclusionPath `json:"base_proof"`
	SubProof  InclusionPath `json:"sub_proof"`
	Root      porep.Domain  `json:"root"`
	Leaf      porep.Domain  `json:"leaf"`
}

// TopProof is a proof in a tree with sub and top layers.
type TopProof struct {
	BaseProof InclusionPath `json:"base_proof"`
	SubProof  InclusionPath `json:"sub_proof"`
	TopProof  InclusionPath `json:"top_proof"`
	Root      porep.Domain  `json:"root"`
	Leaf      porep.Domain  `json:"leaf"`
}

// InclusionPath is {"path": [PathElement…]}.
type InclusionPath struct {
	Path []merkle.PathElement `json:"path"`
}

// Phantom is serde's PhantomData: written as null, and only null is accepted.
type Phantom struct{}

// MarshalJSON writes null.
func (Phantom) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// UnmarshalJSON accepts only null.
func (*Phantom) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		return &json.UnmarshalTypeError{Value: "non-null value (PhantomData must be null)", Type: reflect.TypeFor[Phantom]()}
	}
	return nil
}

// FromProof converts a merkle proof to its C1 form (sharing the paths).
func FromProof(p *merkle.Proof) MerkleProof {
	switch p.Kind {
	case merkle.Sub:
		return MerkleProof{Data: ProofData{Sub: &SubProof{BaseProof: InclusionPath{p.Base}, SubProof: InclusionPath{p.Sub}, Root: p.Root, Leaf: p.Leaf}}}
	case merkle.Top:
		return MerkleProof{Data: ProofData{Top: &TopProof{BaseProof: InclusionPath{p.Base}, SubProof: InclusionPath{p.Sub}, TopProof: InclusionPath{p.Top}, Root: p.Root, Leaf: p.Leaf}}}
	}
	return MerkleProof{Data: ProofData{Single: &SingleProof{Root: p.Root, Leaf: p.Leaf, Path: InclusionPath{p.Base}}}}
}

// Proof converts to a merkle proof (sharing the paths). It fails unless
// exactly one variant is set.
func (m *MerkleProof) Proof() (*merkle.Proof, error) {
	n := 0
	var p merkle.Proof
	if s := m.Data.Single; s != nil {
		n++
		p = merkle.Proof{Kind: merkle.Single, Root: s.Root, Leaf: s.Leaf, Base: s.Path.Path}
	}
	if s := m.Data.Sub; s != nil {
		n++
		p = merkle.Proof{Kind: merkle.Sub, Root: s.Root, Leaf: s.Leaf, Base: s.BaseProof.Path, Sub: s.SubProof.Path}
	}
	if s := m.Data.Top; s != nil {
		n++
		p = merkle.Proof{Kind: merkle.Top, Root: s.Root, Leaf: s.Leaf, Base: s.BaseProof.Path, Sub: s.SubProof.Path, Top: s.TopProof.Path}
	}
	if n != 1 {
		return nil, fmt.Errorf("data has %d variants, want exactly one of Single, Sub, Top", n)
	}
	return &p, nil
}
