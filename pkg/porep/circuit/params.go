package circuit

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark/frontend"
)

// Params are the dimensions of one partition circuit. Everything the circuit
// looks like (its constraint system, public-input layout and witness shape)
// follows from them; a porep shape maps to exactly one Params (ParamsOf).
//
// Params is plain data so that circuits of shapes that are not in the
// registry (the 32 GiB extrapolation, bellperson's test configurations) can be
// built for constraint counting.
type Params struct {
	// Name identifies the shape (cache key, error messages).
	Name string
	// Nodes is the number of 32-byte nodes of the sector, a power of two.
	Nodes uint64
	// Layers is the number of SDR layers (labels per column).
	Layers int
	// DRGDegree is the number of DRG parents of a node (6 officially).
	DRGDegree int
	// ExpDegree is the number of expander parents of a node (8 officially).
	ExpDegree int
	// LabelParents is the number of parent labels in a labeling preimage
	// (37 officially): the node's parents cycled until that many are hashed.
	LabelParents int
	// Challenges is the number of challenges of one partition.
	Challenges int
	// Tree is the arity shape of trees C and R_last.
	Tree TreeArity
}

// TreeArity is the shape of a Poseidon Merkle tree as rust-fil-proofs types
// it: Base is the arity of the base trees, Sub (0 if none) of the level
// joining base-tree roots, Top (0 if none) of the level joining sub-tree roots.
type TreeArity struct {
	Base, Sub, Top int
}

// String formats the arity as rust-fil-proofs names tree shapes ("8-8-0").
func (t TreeArity) String() string { return fmt.Sprintf("%d-%d-%d", t.Base, t.Sub, t.Top) }

// Limits on Params, far above every official shape, that keep a malformed
// shape from asking for an absurd circuit.
const (
	maxLayers       = 16
	maxDegree       = 64
	maxLabelParents = 256
	maxChallenges   = 1024
	maxArity        = 16
	maxNodeBits     = 40
)

// Validate checks that p describes a circuit that can be built.
func (p Params) Validate() error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("circuit params %q: %s: %s", p.Name, field, fmt.Sprintf(format, a...))
	}
	if p.Nodes < 2 || p.Nodes&(p.Nodes-1) != 0 {
		return bad("Nodes", "%d is not a power of two ≥ 2", p.Nodes)
	}
	if bits.TrailingZeros64(p.Nodes) > maxNodeBits {
		return bad("Nodes", "2^%d nodes is above the limit 2^%d", bits.TrailingZeros64(p.Nodes), maxNodeBits)
	}
	if p.Layers < 1 || p.Layers > maxLayers {
		return bad("Layers", "%d is outside 1..%d", p.Layers, maxLayers)
	}
	if p.DRGDegree < 1 || p.DRGDegree > maxDegree {
		return bad("DRGDegree", "%d is outside 1..%d", p.DRGDegree, maxDegree)
	}
	if p.ExpDegree < 0 || p.ExpDegree > maxDegree {
		return bad("ExpDegree", "%d is outside 0..%d", p.ExpDegree, maxDegree)
	}
	if p.LabelParents < p.DRGDegree+p.ExpDegree || p.LabelParents > maxLabelParents {
		return bad("LabelParents", "%d is outside %d..%d", p.LabelParents, p.DRGDegree+p.ExpDegree, maxLabelParents)
	}
	if p.Challenges < 1 || p.Challenges > maxChallenges {
		return bad("Challenges", "%d is outside 1..%d", p.Challenges, maxChallenges)
	}
	for _, a := range []struct {
		name  string
		arity int
		opt   bool
	}{{"Tree.Base", p.Tree.Base, false}, {"Tree.Sub", p.Tree.Sub, true}, {"Tree.Top", p.Tree.Top, true}} {
		if a.opt && a.arity == 0 {
			continue
		}
		if a.arity < 2 || a.arity > maxArity || a.arity&(a.arity-1) != 0 {
			return bad(a.name, "arity %d is not a power of two in 2..%d", a.arity, maxArity)
		}
	}
	if p.Tree.Top != 0 && p.Tree.Sub == 0 {
		return bad("Tree", "a top arity (%d) needs a sub arity", p.Tree.Top)
	}
	if _, err := p.treeLevels(); err != nil {
		return bad("Tree", "%v", err)
	}
	return nil
}

// NodeBits is log2(Nodes): the depth of tree D and the bit length of a node
// index.
func (p Params) NodeBits() int { return bits.TrailingZeros64(p.Nodes) }

// TreeLevels lists the arity of each level of trees C and R_last, from the
// leaves up. It panics on Params that do not Validate.
func (p Params) TreeLevels() []int {
	l, err := p.treeLevels()
	if err != nil {
		panic(err)
	}
	return l
}

func (p Params) treeLevels() ([]int, error) {
	log2 := func(a int) int { return bits.TrailingZeros(uint(a)) }
	rest := p.NodeBits()
	var top []int
	if p.Tree.Sub != 0 {
		rest -= log2(p.Tree.Sub)
		top = append(top, p.Tree.Sub)
	}
	if p.Tree.Top != 0 {
		rest -= log2(p.Tree.Top)
		top = append(top, p.Tree.Top)
	}
	b := log2(p.Tree.Base)
	if rest < b || rest%b != 0 {
		return nil, fmt.Errorf("%d nodes do not split into base trees of arity %d under %s", p.Nodes, p.Tree.Base, p.Tree)
	}
	levels := make([]int, 0, rest/b+len(top))
	for i := 0; i < rest/b; i++ {
		levels = append(levels, p.Tree.Base)
	}
	return append(levels, top...), nil
}

// InputsPerChallenge is the number of public inputs each challenge adds, in
// rust-fil-proofs' StackedCircuit order: the tree-D path index, one path index
// per DRG parent and per expander parent (their columns in tree C), the
// challenge itself, the tree-R_last path index and the tree-C path index of
// the challenged column.
func (p Params) InputsPerChallenge() int { return p.DRGDegree + p.ExpDegree + 4 }

// NumPublic is the number of public inputs of a partition, without the
// constant one: replica_id, comm_d, comm_r, then InputsPerChallenge per
// challenge. (32 GiB: 3 + 18·18 = 327, i.e. bellperson's 328 with the one.)
func (p Params) NumPublic() int { return 3 + p.Challenges*p.InputsPerChallenge() }

// Offsets of the inputs of challenge j within the public inputs, and of each
// entry within a challenge's block.
const (
	inReplicaID = 0
	inCommD     = 1
	inCommR     = 2
	inFirst     = 3
)

func (p Params) challengeBase(j int) int { return inFirst + j*p.InputsPerChallenge() }
func (p Params) inCommDPath(j int) int   { return p.challengeBase(j) }
func (p Params) inDRGPath(j, i int) int  { return p.challengeBase(j) + 1 + i }
func (p Params) inExpPath(j, i int) int  { return p.challengeBase(j) + 1 + p.DRGDegree + i }
func (p Params) inChallenge(j int) int   { return p.challengeBase(j) + 1 + p.DRGDegree + p.ExpDegree }
func (p Params) inRLastPath(j int) int   { return p.inChallenge(j) + 1 }
func (p Params) inCPath(j int) int       { return p.inChallenge(j) + 2 }

// labelPreimageParents returns the parent labels of the labeling preimage of
// a given 1-based layer from the node's parents of that layer (the DRG
// parents, then on layers > 1 the expander parents): the list cycled to
// LabelParents entries (rust-fil-proofs: 6 DRG parents ×6 and the first again
// on layer 1; 14 parents ×2 and the first 9 on later layers).
func (p Params) labelPreimageParents(parents [][]frontend.Variable) [][]frontend.Variable {
	out := make([][]frontend.Variable, p.LabelParents)
	for i := range out {
		out[i] = parents[i%len(parents)]
	}
	return out
}

// Official32GiB returns the dimensions of a 32 GiB (v1.1) partition: 2^30
// nodes, 11 layers, 18 challenges, DRG degree 6, expander degree 8, 37 label
// parents, trees C and R_last of shape 8-8-0. It is used to extrapolate the
// constraint count; the shape itself lives in the porep registry.
func Official32GiB() Params {
	return Params{Name: "32GiB-v1.1 (extrapolation)", Nodes: 1 << 30, Layers: 11, DRGDegree: 6, ExpDegree: 8,
		LabelParents: 37, Challenges: 18, Tree: TreeArity{Base: 8, Sub: 8}}
}
