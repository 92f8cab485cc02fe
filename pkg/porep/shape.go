package porep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"
)

// APIVersion is the rust-fil-proofs ApiVersion a shape is sealed under. It
// changes the DRG parent order and the expander parent arithmetic.
type APIVersion int

const (
	// APIVersion1_0 is ApiVersion::V1_0_0 (RegisteredSealProof ...V1); kept
	// so the graph can be checked against rust-fil-proofs' V1_0 vectors.
	APIVersion1_0 APIVersion = iota
	// APIVersion1_1 is ApiVersion::V1_1_0 (RegisteredSealProof ...V1_1),
	// the version every shape in the registry uses.
	APIVersion1_1
)

func (v APIVersion) String() string {
	switch v {
	case APIVersion1_0:
		return "1.0.0"
	case APIVersion1_1:
		return "1.1.0"
	}
	return fmt.Sprintf("APIVersion(%d)", int(v))
}

// TreeShape is the arity layout of the Poseidon trees C and R_last
// (rust-fil-proofs' LCTree<_, Base, Sub, Top>): Base is the arity of each base
// tree; Sub > 0 groups Sub base-tree roots under one node; Top > 0 groups Top
// sub-tree roots under the root. 32 GiB is 8/8/0, 64 GiB 8/8/2, 2 KiB 8/0/0.
type TreeShape struct {
	Base, Sub, Top int
}

// BaseTreeCount is the number of base trees (Sub × Top, zeros counting as 1).
func (t TreeShape) BaseTreeCount() int {
	n := 1
	if t.Sub > 0 {
		n *= t.Sub
	}
	if t.Top > 0 {
		n *= t.Top
	}
	return n
}

func (t TreeShape) String() string { return fmt.Sprintf("%d/%d/%d", t.Base, t.Sub, t.Top) }

// BaseHeight is the number of path elements in a base tree over leaves/BaseTreeCount leaves.
func (t TreeShape) BaseHeight(leaves uint64) int {
	n := leaves / uint64(t.BaseTreeCount())
	h := 0
	for n > 1 {
		n /= uint64(t.Base)
		h++
	}
	return h
}

// Shape is one PoRep proof type: every number the sealer, the C1 format, the
// verifier and the circuit need.
type Shape struct {
	// Name is the registry key: "2KiB", "8MiB", "512MiB", "32GiB", "64GiB" for
	// the official v1.1 shapes, "test-…" for test shapes.
	Name string
	// RegisteredProof is the C1 "registered_proof" string: the serde name of
	// filecoin-proofs-api's RegisteredSealProof (e.g. "StackedDrg32GiBV1_1"),
	// or "C2ClusterTest/<Name>" for test shapes.
	RegisteredProof string
	// VanillaProofTag is the C1 "vanilla_proofs" enum tag: filecoin-proofs-api's
	// VanillaSealProof variant ("StackedDrg32GiBV1" — the V1 name is used for
	// V1_1 too), or TestVanillaProofTag for test shapes.
	VanillaProofTag string
	// ProofID is the RegisteredSealProof discriminant that seeds PoRepID
	// (5..9 for the v1.1 shapes; TestProofIDBase|n for test shapes).
	ProofID uint64
	// APIVersion selects the graph variant.
	APIVersion APIVersion
	// Nodes is the sector size in 32-byte nodes (a power of two).
	Nodes uint64
	// Layers is the number of SDR layers (also the column-hash arity).
	Layers int
	// Partitions is the number of Groth16 partitions of a C2 proof.
	Partitions int
	// ChallengesPerPartition is the number of challenged nodes per partition.
	ChallengesPerPartition int
	// MinimumChallenges is filecoin-proofs' POREP_MINIMUM_CHALLENGES for the
	// sector size; ChallengesPerPartition is the smallest count with
	// Partitions × count ≥ MinimumChallenges.
	MinimumChallenges int
	// BaseDegree is the DRG degree (6); ExpDegree the expander degree (8).
	BaseDegree, ExpDegree int
	// LabelParents is how many parent labels the labeling hash absorbs: the
	// parent list is repeated cyclically up to this count (TOTAL_PARENTS, 37).
	LabelParents int
	// Tree is the arity layout of trees C and R_last. Tree D is always binary.
	Tree TreeShape
	// RowsToDiscard is the number of tree_r_last rows rust-fil-proofs does not
	// store on disk (default_rows_to_discard with the default setting 2); it
	// does not change any proof.
	RowsToDiscard int
	// Test marks shapes that exist only in c2cluster.
	Test bool
}

// SectorSize is Nodes × 32 bytes.
func (s *Shape) SectorSize() uint64 { return s.Nodes * NodeSize }

// PoRepID is rust-fil-proofs' porep_id: the proof id (u64 little-endian) in
// bytes 0..8, the nonce (0) in bytes 8..16, zeros after.
func (s *Shape) PoRepID() [32]byte {
	var id [32]byte
	binary.LittleEndian.PutUint64(id[0:8], s.ProofID)
	return id
}

// TotalChallenges is Partitions × ChallengesPerPartition.
func (s *Shape) TotalChallenges() int { return s.Partitions * s.ChallengesPerPartition }

// Degree is BaseDegree + ExpDegree: the parents of a node in layers > 1.
func (s *Shape) Degree() int { return s.BaseDegree + s.ExpDegree }

// TreeDHeight is the path length of the binary tree D.
func (s *Shape) TreeDHeight() int { return bits.TrailingZeros64(s.Nodes) }

// Validate checks the internal consistency of a shape.
func (s *Shape) Validate() error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("porep: shape %q: %s", s.Name, fmt.Sprintf(format, a...))
	}
	switch {
	case s.Nodes < 4 || s.Nodes&(s.Nodes-1) != 0:
		return fail("nodes %d must be a power of two ≥ 4", s.Nodes)
	case s.Nodes > 1<<32:
		return fail("nodes %d exceed 2^32", s.Nodes)
	case s.Layers < 1 || s.Layers > 16:
		return fail("layers %d outside 1..16", s.Layers)
	case s.Partitions < 1 || s.Partitions > 255:
		return fail("partitions %d outside 1..255", s.Partitions)
	case s.ChallengesPerPartition < 1:
		return fail("challenges per partition %d < 1", s.ChallengesPerPartition)
	case s.BaseDegree < 2:
		return fail("base degree %d < 2", s.BaseDegree)
	case s.ExpDegree < 0:
		return fail("expander degree %d < 0", s.ExpDegree)
	case s.LabelParents < s.Degree():
		return fail("label parents %d < degree %d", s.LabelParents, s.Degree())
	case s.Tree.Base < 2 || s.Tree.Base > 16 || s.Tree.Sub < 0 || s.Tree.Sub > 16 || s.Tree.Top < 0 || s.Tree.Top > 16:
		return fail("tree arities %s out of range", s.Tree)
	case s.Tree.Top > 0 && s.Tree.Sub == 0:
		return fail("tree %s has a top layer without a sub layer", s.Tree)
	case s.Tree.Sub == 1 || s.Tree.Top == 1:
		return fail("tree %s has an arity of 1", s.Tree)
	}
	leaves := s.Nodes / uint64(s.Tree.BaseTreeCount())
	if leaves*uint64(s.Tree.BaseTreeCount()) != s.Nodes {
		return fail("nodes %d not divisible by %d base trees", s.Nodes, s.Tree.BaseTreeCount())
	}
	for n := leaves; n > 1; n /= uint64(s.Tree.Base) {
		if n%uint64(s.Tree.Base) != 0 {
			return fail("base tree of %d leaves is not a power of arity %d", leaves, s.Tree.Base)
		}
	}
	if leaves < uint64(s.Tree.Base) {
		return fail("base tree of %d leaves is smaller than its arity %d", leaves, s.Tree.Base)
	}
	return nil
}

// ErrUnknownShape is returned by the registry lookups.
var ErrUnknownShape = errors.New("porep: unknown shape")

// TestShapeDefault is the test shape every command defaults to (coordinator
// seal, circuit and run, c2-params): the smallest shape with several
// partitions, so a sector sealed, its parameters made and the single node
// started without -shape all agree.
const TestShapeDefault = "test-micro"

// TestVanillaProofTag is the "vanilla_proofs" enum tag of every test shape's
// C1 output; the shape itself is named by RegisteredProof.
const TestVanillaProofTag = "C2ClusterTest"

// TestRegisteredProofPrefix starts the "registered_proof" string of test
// shapes. No RegisteredSealProof serde name contains '/'.
const TestRegisteredProofPrefix = "C2ClusterTest/"

// TestProofIDBase is OR-ed into test shapes' ProofID so their porep ids (and
// so their graphs) can never equal an official one.
const TestProofIDBase uint64 = 0xC2C1_0000_0000_0000

func official(name, rp, tag string, id uint64, nodes uint64, layers, partitions, minChallenges int, tree TreeShape) Shape {
	s := Shape{
		Name: name, RegisteredProof: rp, VanillaProofTag: tag, ProofID: id,
		APIVersion: APIVersion1_1, Nodes: nodes, Layers: layers, Partitions: partitions,
		MinimumChallenges: minChallenges, BaseDegree: 6, ExpDegree: 8, LabelParents: 37, Tree: tree,
	}
	s.ChallengesPerPartition = (minChallenges + partitions - 1) / partitions
	s.RowsToDiscard = defaultRowsToDiscard(nodes/uint64(tree.BaseTreeCount()), tree.Base)
	return s
}

func test(n uint64, name string, nodes uint64, layers, partitions, challenges, base, exp, labelParents int, tree TreeShape) Shape {
	s := Shape{
		Name: name, RegisteredProof: TestRegisteredProofPrefix + name, VanillaProofTag: TestVanillaProofTag,
		ProofID: TestProofIDBase | n, APIVersion: APIVersion1_1, Nodes: nodes, Layers: layers,
		Partitions: partitions, ChallengesPerPartition: challenges, MinimumChallenges: partitions * challenges,
		BaseDegree: base, ExpDegree: exp, LabelParents: labelParents, Tree: tree, Test: true,
	}
	s.RowsToDiscard = defaultRowsToDiscard(nodes/uint64(tree.BaseTreeCount()), tree.Base)
	return s
}

// defaultRowsToDiscard mirrors storage-proofs-core util::default_rows_to_discard
// with the default rows_to_discard setting of 2.
func defaultRowsToDiscard(leaves uint64, arity int) int {
	rows := 1
	for n := leaves; n > 1; n /= uint64(arity) {
		rows++
	}
	switch {
	case rows <= 2:
		return 0
	case rows == 3:
		return 1
	}
	maxRows := rows - 2
	limit := 2
	switch arity {
	case 2:
		limit = 7
	case 4:
		limit = 5
	}
	return min(maxRows, limit)
}

var registry = func() map[string]Shape {
	shapes := []Shape{
		// filecoin-proofs constants.rs (POREP_PARTITIONS, POREP_MINIMUM_CHALLENGES,
		// LAYERS, SectorShape*) and filecoin-proofs-api registry.rs (ids, porep_id).
		official("2KiB", "StackedDrg2KiBV1_1", "StackedDrg2KiBV1", 5, 1<<6, 2, 1, 2, TreeShape{8, 0, 0}),
		official("8MiB", "StackedDrg8MiBV1_1", "StackedDrg8MiBV1", 6, 1<<18, 2, 1, 2, TreeShape{8, 0, 0}),
		official("512MiB", "StackedDrg512MiBV1_1", "StackedDrg512MiBV1", 7, 1<<24, 2, 1, 2, TreeShape{8, 0, 0}),
		official("32GiB", "StackedDrg32GiBV1_1", "StackedDrg32GiBV1", 8, 1<<30, 11, 10, 176, TreeShape{8, 8, 0}),
		official("64GiB", "StackedDrg64GiBV1_1", "StackedDrg64GiBV1", 9, 1<<31, 11, 10, 176, TreeShape{8, 8, 2}),
		// Test shapes: see docs/porep.md. test-tiny keeps the official degrees;
		// test-mini shrinks the label hash so a partition circuit stays small.
		test(1, "test-tiny", 64, 2, 2, 2, 6, 8, 37, TreeShape{8, 0, 0}),
		test(2, "test-mini", 64, 2, 3, 1, 2, 2, 4, TreeShape{8, 0, 0}),
		test(3, "test-sub", 512, 3, 2, 2, 6, 8, 37, TreeShape{8, 8, 0}),
		test(4, "test-top", 1024, 4, 2, 2, 6, 8, 37, TreeShape{8, 8, 2}),
		test(5, "test-11layers", 128, 11, 2, 1, 6, 8, 37, TreeShape{8, 2, 0}),
		// test-micro is the smallest shape with several partitions: its
		// partition circuit (~250k constraints, domain 2^18) is the one
		// pkg/porep/circuit sets up and proves in CI.
		test(6, "test-micro", 4, 2, 2, 1, 2, 1, 3, TreeShape{4, 0, 0}),
	}
	m := make(map[string]Shape, len(shapes))
	for _, s := range shapes {
		if err := s.Validate(); err != nil {
			panic(err) // a broken built-in table is a programming error caught by every test
		}
		m[s.Name] = s
	}
	return m
}()

// ShapeByName returns the registered shape with that name.
func ShapeByName(name string) (*Shape, error) {
	s, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownShape, name, strings.Join(ShapeNames(), ", "))
	}
	return &s, nil
}

// ShapeByRegisteredProof returns the shape whose C1 "registered_proof" string
// is rp (e.g. "StackedDrg2KiBV1_1").
func ShapeByRegisteredProof(rp string) (*Shape, error) {
	for _, s := range registry {
		if s.RegisteredProof == rp {
			return &s, nil
		}
	}
	return nil, fmt.Errorf("%w: registered proof %q", ErrUnknownShape, rp)
}

// ShapeNames lists the registry: official shapes by size, then test shapes.
func ShapeNames() []string {
	all := Shapes()
	names := make([]string, len(all))
	for i := range all {
		names[i] = all[i].Name
	}
	return names
}

// Shapes returns copies of all registered shapes: official ones by size, then
// test shapes by name.
func Shapes() []Shape {
	out := make([]Shape, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Test != out[j].Test {
			return !out[i].Test
		}
		if out[i].Test {
			return out[i].Name < out[j].Name
		}
		return out[i].Nodes < out[j].Nodes
	})
	return out
}
