package sealer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// SparseC1Help is the help text of the command that writes a sparse C1
// (for the CLI that wires WriteSparseC1).
const SparseC1Help = `Write a sparse BENCHMARK INPUT C1 for a shape (any shape, including 32GiB and
64GiB) without sealing the sector. The sector is all zeros (a committed-capacity
sector: comm_d is the zero-piece commitment); only the challenged nodes, their
parents' columns and their Merkle paths get values: parent labels come from a
PRNG keyed by the seed, challenged labels are computed from them, and every
other leaf of trees C and R_last is a fixed default. The C1 passes the native
verifier and satisfies the partition circuits, but it is NOT a sealed sector:
its comm_r belongs to no replica. Use it to benchmark C2 proving only; never
submit it or its proof to a chain.`

// sparseBanner starts and ends the progress output of the sparse mode.
const sparseBanner = "BENCHMARK INPUT: sparse sector, not sealed; comm_r belongs to no replica — use only to benchmark C2"

// Domain-separation tags of the sparse mode's deterministic values.
const (
	sparseLabelTag   = "c2cluster sparse benchmark label"
	sparseDefaultTag = "c2cluster sparse benchmark default leaf"
)

// SparseSector is a BENCHMARK INPUT, not a sealed sector: an all-zero
// (committed-capacity) sector of any shape in which only what the vanilla
// proofs of one interactive seed open has values. Tree D is the all-zero
// tree (comm_d = zero-piece commitment) and the replica id and challenges
// follow from it as in a real seal. The columns of the challenges' parents
// hold labels from a PRNG keyed by FillKey (the vanilla proof never
// re-derives a parent's labels); each challenged node's labels are computed
// from its parents layer by layer, so a challenged node that is also another
// challenge's parent is consistent in both roles. Tree C has the column
// hashes of the opened nodes as explicit leaves and tree R_last the
// encodings (0 + key) of the challenged nodes; every other leaf of either
// tree is a fixed default. The vanilla proofs it yields pass verifier.Verify
// and satisfy the partition circuits, but comm_r commits to no replica that
// any data seals to.
//
// SparseSector implements Source for the nodes it opened: ColumnProof fails
// for a node that is neither challenged nor a challenge's parent, and
// ReplicaProof for a node that is not challenged.
type SparseSector struct {
	Shape    *porep.Shape
	Graph    *graph.Graph
	Identity Identity
	// Seed is the interactive seed whose challenges the sector opens.
	Seed porep.Domain
	// FillKey keys the PRNG labels of non-challenged nodes and the default
	// leaves of trees C and R_last.
	FillKey   [32]byte
	ReplicaID porep.Domain
	TreeD     *merkle.SparseTree
	TreeC     *merkle.SparseTree
	TreeR     *merkle.SparseTree
	CommD     porep.Domain
	CommC     porep.Domain
	CommRLast porep.Domain
	CommR     porep.Domain
	// Challenged lists the distinct challenged nodes of every partition, in
	// increasing order; Opened the distinct nodes whose columns are opened
	// (challenges and their parents), in increasing order.
	Challenged []uint64
	Opened     []uint64
	// labels[n][l] is the computed label of challenged node n in layer l+1.
	labels map[uint64][]porep.Domain
	opened map[uint64]struct{}
}

// SealSparse builds the sparse benchmark sector of shape s for the identity
// (prover id, sector id, ticket) and the interactive seed; fillKey keys its
// PRNG values. Cost is O(challenges × (degree × layers + tree height)) hashes,
// independent of the sector size; parents are computed on demand.
func SealSparse(ctx context.Context, s *porep.Shape, id Identity, seed porep.Domain, fillKey [32]byte, progress *Progress) (*SparseSector, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	progress.printf("%s", sparseBanner)
	progress.printf("sparse seal %s: %d nodes, %d layers, %d partitions × %d challenges", s.Name, s.Nodes, s.Layers, s.Partitions, s.ChallengesPerPartition)
	// graph.New computes parents on demand: the sparse mode looks up a few
	// thousand nodes, so precomputing a graph (graph.For) would only cost.
	g, err := graph.New(graph.Params{Nodes: s.Nodes, BaseDegree: s.BaseDegree, ExpDegree: s.ExpDegree, PoRepID: s.PoRepID(), APIVersion: s.APIVersion})
	if err != nil {
		return nil, fmt.Errorf("sealer: graph of shape %q: %w", s.Name, err)
	}
	sec := &SparseSector{Shape: s, Graph: g, Identity: id, Seed: seed, FillKey: fillKey}

	if sec.TreeD, err = merkle.BuildSparse(ctx, porep.TreeShape{Base: 2}, s.Nodes, porep.Domain{}, nil, merkle.SHA254{}); err != nil {
		return nil, fmt.Errorf("sealer: sparse tree D: %w", err)
	}
	sec.CommD = sec.TreeD.Root()
	sec.ReplicaID = porep.ReplicaID(id.ProverID, id.SectorID, id.Ticket, sec.CommD, s.PoRepID())
	progress.printf("tree D (all-zero sector): comm_d %s, replica id %s", sec.CommD, sec.ReplicaID)

	challenged := map[uint64]struct{}{}
	for k := range s.Partitions {
		for _, c := range porep.Challenges(s, sec.ReplicaID, seed, k) {
			challenged[c] = struct{}{}
		}
	}
	sec.Challenged = slices.Sorted(maps.Keys(challenged))
	sec.opened = map[uint64]struct{}{}
	parents := make([]uint32, g.Degree())
	for _, c := range sec.Challenged {
		sec.opened[c] = struct{}{}
		g.Parents(c, parents)
		for _, p := range parents {
			sec.opened[uint64(p)] = struct{}{}
		}
	}
	sec.Opened = slices.Sorted(maps.Keys(sec.opened))
	progress.printf("challenges: %d distinct nodes, %d opened columns", len(sec.Challenged), len(sec.Opened))

	if err := sec.computeLabels(ctx, parents); err != nil {
		return nil, err
	}
	progress.printf("labels: %d challenged nodes × %d layers", len(sec.Challenged), s.Layers)

	hashes, err := columnHashes(ctx, s, sec, uint64(len(sec.Opened)), func(i uint64) uint64 { return sec.Opened[i] })
	if err != nil {
		return nil, fmt.Errorf("sealer: sparse column hashes: %w", err)
	}
	columns := make(map[uint64]porep.Domain, len(sec.Opened))
	for i, n := range sec.Opened {
		columns[n] = hashes[i]
	}
	if sec.TreeC, err = merkle.BuildSparse(ctx, s.Tree, s.Nodes, sec.fill(sparseDefaultTag, 'C', 0, 0), columns, merkle.Poseidon{}); err != nil {
		return nil, fmt.Errorf("sealer: sparse tree C: %w", err)
	}
	sec.CommC = sec.TreeC.Root()
	progress.printf("tree C: %d explicit leaves, %d stored nodes, comm_c %s", sec.TreeC.Explicit(), sec.TreeC.StoredNodes(), sec.CommC)

	replica := make(map[uint64]porep.Domain, len(sec.Challenged))
	for _, c := range sec.Challenged {
		// data is zero: the replica node is the key, the last layer's label.
		if replica[c], err = porep.Encode(porep.Domain{}, sec.labels[c][s.Layers-1]); err != nil {
			return nil, fmt.Errorf("sealer: encode node %d: %w", c, err)
		}
	}
	if sec.TreeR, err = merkle.BuildSparse(ctx, s.Tree, s.Nodes, sec.fill(sparseDefaultTag, 'R', 0, 0), replica, merkle.Poseidon{}); err != nil {
		return nil, fmt.Errorf("sealer: sparse tree R_last: %w", err)
	}
	sec.CommRLast = sec.TreeR.Root()
	if sec.CommR, err = (merkle.Poseidon{}).HashNode([]porep.Domain{sec.CommC, sec.CommRLast}); err != nil {
		return nil, fmt.Errorf("sealer: comm_r: %w", err)
	}
	progress.printf("tree R_last: %d explicit leaves, comm_r_last %s, comm_r %s", sec.TreeR.Explicit(), sec.CommRLast, sec.CommR)
	return sec, nil
}

// computeLabels labels the challenged nodes layer by layer, in increasing
// node order within a layer, so that every parent label it reads is final:
// DRG parents (same layer) are smaller nodes, expander parents are in the
// layer already done.
func (sec *SparseSector) computeLabels(ctx context.Context, parents []uint32) error {
	s := sec.Shape
	sec.labels = make(map[uint64][]porep.Domain, len(sec.Challenged))
	for _, c := range sec.Challenged {
		sec.labels[c] = make([]porep.Domain, s.Layers)
	}
	own := make([]porep.Domain, s.Degree())
	full := make([]porep.Domain, s.LabelParents)
	for l := 1; l <= s.Layers; l++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sealer: sparse labels of layer %d: %w", l, err)
		}
		for _, c := range sec.Challenged {
			sec.Graph.Parents(c, parents)
			labelParents(s, sec, l, parents, own, full)
			sec.labels[c][l-1] = porep.LabelHash(sec.ReplicaID, uint32(l), c, full)
		}
	}
	return nil
}

// fill is the sparse mode's deterministic value for (tag, kind, a, b):
// SHA-256(tag ‖ fill key ‖ kind ‖ a u32 BE ‖ b u64 BE) truncated to 254 bits,
// so a canonical field element distributed like a real label.
func (sec *SparseSector) fill(tag string, kind byte, a uint32, b uint64) porep.Domain {
	h := sha256.New()
	h.Write([]byte(tag))
	h.Write(sec.FillKey[:])
	var buf [13]byte
	buf[0] = kind
	binary.BigEndian.PutUint32(buf[1:5], a)
	binary.BigEndian.PutUint64(buf[5:13], b)
	h.Write(buf[:])
	var d porep.Domain
	h.Sum(d[:0])
	d.TruncateTo254()
	return d
}

// Label implements Source: the computed label of a challenged node, the PRNG
// label of any other node.
func (sec *SparseSector) Label(layer int, node uint64) porep.Domain {
	if ls, ok := sec.labels[node]; ok {
		return ls[layer-1]
	}
	return sec.fill(sparseLabelTag, 'L', uint32(layer), node)
}

// DataProof implements Source: every node of the all-zero tree D opens.
func (sec *SparseSector) DataProof(node uint64) (*merkle.Proof, error) { return sec.TreeD.Prove(node) }

// ColumnProof implements Source for challenged nodes and their parents.
func (sec *SparseSector) ColumnProof(node uint64) (*merkle.Proof, error) {
	if _, ok := sec.opened[node]; !ok {
		return nil, fmt.Errorf("sparse sector: node %d is neither challenged nor a challenge's parent; its column is not in tree C", node)
	}
	return sec.TreeC.Prove(node)
}

// ReplicaProof implements Source for challenged nodes.
func (sec *SparseSector) ReplicaProof(node uint64) (*merkle.Proof, error) {
	if _, ok := sec.labels[node]; !ok {
		return nil, fmt.Errorf("sparse sector: node %d is not challenged; its replica node is not in tree R_last", node)
	}
	return sec.TreeR.Prove(node)
}

// Commitments implements Source.
func (sec *SparseSector) Commitments() (commD, commR, replicaID porep.Domain) {
	return sec.CommD, sec.CommR, sec.ReplicaID
}

// SparseC1Config configures WriteSparseC1.
type SparseC1Config struct {
	// Shape is a registry name (porep.ShapeNames); every shape works,
	// including "32GiB" and "64GiB".
	Shape string
	// Seed makes the run deterministic: prover id, sector id, ticket, the
	// interactive seed and the fill key (PRNG labels, default leaves) derive
	// from it.
	Seed uint64
	// Progress receives human-readable progress lines (nil: none); the first
	// and last say BENCHMARK INPUT.
	Progress io.Writer
}

// WriteSparseC1 writes a BENCHMARK INPUT C1 for the named shape without
// sealing the sector (see SparseSector and SparseC1Help): schema-exact C1
// JSON that verifier.Verify accepts and whose partition circuits are
// satisfied, for any shape, in seconds even for 32 GiB and 64 GiB. Its
// comm_r commits to no replica; nothing in the C1 marks it, so keep such
// files apart from real ones. Result.BenchmarkInput is true.
func WriteSparseC1(ctx context.Context, cfg SparseC1Config, w io.Writer) (*Result, error) {
	s, err := porep.ShapeByName(cfg.Shape)
	if err != nil {
		return nil, err
	}
	prog := &Progress{W: cfg.Progress}
	rng := newRNG(cfg.Seed, 's') // a stream apart from WriteRandomC1's for the same Seed
	id, seed := drawIdentity(rng)
	var fillKey [32]byte
	rng.Read(fillKey[:])

	sec, err := SealSparse(ctx, s, id, seed, fillKey, prog)
	if err != nil {
		return nil, err
	}
	out, err := commit1(ctx, s, sec.Graph, sec, id.Ticket, seed, prog)
	if err != nil {
		return nil, err
	}
	n, err := out.WriteTo(w)
	if err != nil {
		return nil, fmt.Errorf("sealer: write sparse C1: %w", err)
	}
	prog.printf("wrote C1: %d bytes", n)
	prog.printf("%s", sparseBanner)
	return &Result{Shape: s, Identity: id, CommD: sec.CommD, CommR: sec.CommR, ReplicaID: sec.ReplicaID, Bytes: n, Output: out, BenchmarkInput: true}, nil
}
