package circuit

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark/frontend"
)

// partitionCircuit is the gnark circuit of one PoRep partition: every check
// of the stacked-DRG vanilla proof of Challenges challenges, with the public
// inputs of rust-fil-proofs' StackedCircuit (see Params.NumPublic).
//
// Its fields are the witness; the same struct, with values, is the
// assignment.
type partitionCircuit struct {
	// Public are the public inputs, in StackedCircuit order.
	Public []frontend.Variable `gnark:",public"`

	// CommC and CommRLast are the roots of trees C and R_last;
	// comm_r = Poseidon(CommC, CommRLast).
	CommC     frontend.Variable
	CommRLast frontend.Variable

	Challenges []challengeWitness

	params Params `gnark:"-"`
}

// challengeWitness is the private part of the proof of one challenge.
type challengeWitness struct {
	// DataLeaf is the challenged node of the unsealed data.
	DataLeaf frontend.Variable
	// CommDPath holds the tree-D sibling of each level, leaf level first.
	CommDPath []frontend.Variable
	// DRGParents and ExpParents are the columns of the challenged node's
	// parents with their tree-C paths.
	DRGParents []columnWitness
	ExpParents []columnWitness
	// RLastPath and CPath are the tree-R_last path of the replica node and
	// the tree-C path of the challenged node's column: per level, its
	// arity − 1 siblings in order.
	RLastPath [][]frontend.Variable
	CPath     [][]frontend.Variable
}

// columnWitness is one opened column: the labels of the node in every layer
// and the tree-C path of their column hash.
type columnWitness struct {
	Rows []frontend.Variable
	Path [][]frontend.Variable
}

// newPartitionCircuit allocates the (empty) circuit of p, which must be valid.
func newPartitionCircuit(p Params) *partitionCircuit {
	c := &partitionCircuit{
		Public:     make([]frontend.Variable, p.NumPublic()),
		Challenges: make([]challengeWitness, p.Challenges),
		params:     p,
	}
	for j := range c.Challenges {
		c.Challenges[j] = newChallengeWitness(p)
	}
	return c
}

// newChallengeWitness allocates the (empty) witness of one challenge of p.
func newChallengeWitness(p Params) challengeWitness {
	levels := p.TreeLevels()
	path := func() [][]frontend.Variable {
		out := make([][]frontend.Variable, len(levels))
		for l, a := range levels {
			out[l] = make([]frontend.Variable, a-1)
		}
		return out
	}
	column := func() columnWitness {
		return columnWitness{Rows: make([]frontend.Variable, p.Layers), Path: path()}
	}
	ch := challengeWitness{
		CommDPath:  make([]frontend.Variable, p.NodeBits()),
		DRGParents: make([]columnWitness, p.DRGDegree),
		ExpParents: make([]columnWitness, p.ExpDegree),
		RLastPath:  path(),
		CPath:      path(),
	}
	for i := range ch.DRGParents {
		ch.DRGParents[i] = column()
	}
	for i := range ch.ExpParents {
		ch.ExpParents[i] = column()
	}
	return ch
}

// Define implements frontend.Circuit.
func (c *partitionCircuit) Define(api frontend.API) error {
	p := c.params
	if err := p.Validate(); err != nil {
		return err
	}
	if len(c.Public) != p.NumPublic() || len(c.Challenges) != p.Challenges {
		return fmt.Errorf("circuit %q: %d public inputs and %d challenges, want %d and %d",
			p.Name, len(c.Public), len(c.Challenges), p.NumPublic(), p.Challenges)
	}
	replica := defineHead(api, c.Public, c.CommC, c.CommRLast)
	for j := range c.Challenges {
		defineChallenge(api, p, j, c.Public, c.CommC, c.CommRLast, &c.Challenges[j], replica)
	}
	return nil
}

// defineHead adds the checks made once per partition, before the
// challenges, and returns the SHA-order bits of replica_id that every label
// hashes. Compile assembles the partition from this head and one compiled
// challenge (template.go), so the head is all the partition shares.
func defineHead(api frontend.API, public []frontend.Variable, commC, commRLast frontend.Variable) []frontend.Variable {
	// replica_id, canonically decomposed once for all labels.
	replica := replicaBits(api, public[inReplicaID])

	// comm_r = H(comm_c, comm_r_last).
	commRCheck(api, commC, commRLast, public[inCommR])
	return replica
}

// defineChallenge adds the checks of challenge j: it reads the public inputs
// of challenge j and comm_d from public, and commC, commRLast, the replica
// bits and its own witness ch.
func defineChallenge(api frontend.API, p Params, j int, public []frontend.Variable, commC, commRLast frontend.Variable,
	ch *challengeWitness, replica []frontend.Variable) {
	nodeBits := p.NodeBits()

	// The data leaf is in tree D.
	cur := dataLeafBits(api, ch.DataLeaf)
	idx := pathIndexBits(api, public[p.inCommDPath(j)], nodeBits)
	for l, sib := range ch.CommDPath {
		cur = treeDLevel(api, cur, idx[l], sib, l)
	}
	treeDRootCheck(api, cur, public[inCommD])

	// Every parent column is in tree C.
	openColumn := func(col *columnWitness, input int) {
		h := columnHash(api, col.Rows)
		poseidonPathCheck(api, p, h, pathIndexBits(api, public[input], nodeBits), col.Path, commC)
	}
	for i := range ch.DRGParents {
		openColumn(&ch.DRGParents[i], p.inDRGPath(j, i))
	}
	for i := range ch.ExpParents {
		openColumn(&ch.ExpParents[i], p.inExpPath(j, i))
	}

	// The labels of the challenged node, layer by layer: DRG parents from
	// the same layer, expander parents from the previous one.
	node := challengeBits(api, public[p.inChallenge(j)])
	labels := make([]frontend.Variable, p.Layers)
	for layer := 1; layer <= p.Layers; layer++ {
		parents := make([][]frontend.Variable, 0, p.DRGDegree+p.ExpDegree)
		for i := range ch.DRGParents {
			parents = append(parents, parentLabelBits(api, ch.DRGParents[i].Rows[layer-1]))
		}
		if layer > 1 {
			for i := range ch.ExpParents {
				parents = append(parents, parentLabelBits(api, ch.ExpParents[i].Rows[layer-2]))
			}
		}
		labels[layer-1] = label(api, replica, layer, node, p.labelPreimageParents(parents))
	}

	// Encoding: replica node = data + key (the last layer's label), in R_last.
	replicaNode := api.Add(ch.DataLeaf, labels[p.Layers-1])
	poseidonPathCheck(api, p, replicaNode, pathIndexBits(api, public[p.inRLastPath(j)], nodeBits), ch.RLastPath, commRLast)

	// The column of the computed labels is in tree C.
	poseidonPathCheck(api, p, columnHash(api, labels), pathIndexBits(api, public[p.inCPath(j)], nodeBits), ch.CPath, commC)
}

// poseidonPathCheck climbs a tree-C or tree-R_last path from leaf and checks
// the root.
func poseidonPathCheck(api frontend.API, p Params, leaf frontend.Variable, idx []frontend.Variable, path [][]frontend.Variable, root frontend.Variable) {
	cur := leaf
	off := 0
	for l, arity := range p.TreeLevels() {
		k := bits.TrailingZeros(uint(arity))
		cur = poseidonLevel(api, cur, idx[off:off+k], path[l])
		off += k
	}
	rootCheck(api, cur, root)
}
