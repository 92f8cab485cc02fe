package stacked

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/hashers"
	"github.com/c2cluster/c2cluster/pkg/gadget/por"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Namespace is the namespace the reference synthesizes the circuit in.
const Namespace = "stacked drgporep"

// ErrShape is wrapped by every error about an instance that does not fit
// its shape.
var ErrShape = errors.New("stacked: instance does not fit its shape")

// Circuit is one partition's instance of the StackedCircuit.
type Circuit struct {
	Shape *porep.Shape

	// ReplicaID, CommD and CommR are the public values; CommRLast and
	// CommC the roots of trees R_last and C.
	ReplicaID, CommD, CommR, CommRLast, CommC fr.Element

	// Challenges has Shape.ChallengesPerPartition entries.
	Challenges []Challenge
}

// Challenge is the private part of one challenge (storage-proofs-porep's
// circuit Proof).
type Challenge struct {
	// Node is the challenged node.
	Node uint64
	// DataLeaf is the challenged node of the unsealed data and CommDPath
	// its path in tree D (binary).
	DataLeaf  fr.Element
	CommDPath por.Path
	// CommRLastPath is the replica node's path in tree R_last; the leaf is
	// computed (data + key).
	CommRLastPath por.Path
	// CommCPath is the path of the challenged node's column hash in tree
	// C; the column is computed (the labels).
	CommCPath por.Path
	// DRGParents (Shape.BaseDegree) and ExpParents (Shape.ExpDegree) are
	// the parents' columns and their paths in tree C.
	DRGParents, ExpParents []Column
}

// Column is a parent's labels in every layer (layer 1 first) and the path
// of its column hash in tree C.
type Column struct {
	Rows []fr.Element
	Path por.Path
}

// TreeD is the layout and node hash of tree D: binary, SHA-256.
func TreeD() por.Tree { return por.Tree{Base: 2, Hasher: hashers.SHA256{}} }

// TreeC is the layout and node hash of trees C and R_last: the shape's
// arities, Poseidon.
func TreeC(s *porep.Shape) por.Tree {
	return por.Tree{Base: s.Tree.Base, Sub: s.Tree.Sub, Top: s.Tree.Top, Hasher: hashers.Poseidon{}}
}

// Blank is the blank circuit of a shape (StackedCompound::blank_circuit):
// every value zero, every path index 0.
func Blank(s *porep.Shape) (*Circuit, error) {
	if err := checkShape(s); err != nil {
		return nil, err
	}
	td, tc := TreeD(), TreeC(s)
	column := func() Column {
		return Column{Rows: make([]fr.Element, s.Layers), Path: tc.Blank(s.Nodes)}
	}
	c := &Circuit{Shape: s, Challenges: make([]Challenge, s.ChallengesPerPartition)}
	for i := range c.Challenges {
		ch := &c.Challenges[i]
		ch.CommDPath = td.Blank(s.Nodes)
		ch.CommRLastPath = tc.Blank(s.Nodes)
		ch.CommCPath = tc.Blank(s.Nodes)
		ch.DRGParents = make([]Column, s.BaseDegree)
		for j := range ch.DRGParents {
			ch.DRGParents[j] = column()
		}
		ch.ExpParents = make([]Column, s.ExpDegree)
		for j := range ch.ExpParents {
			ch.ExpParents[j] = column()
		}
	}
	return c, nil
}

// checkShape checks what the circuit needs of a shape beyond
// Shape.Validate: at least one expander parent (the reference asserts it)
// and power-of-two tree arities.
func checkShape(s *porep.Shape) error {
	if s == nil {
		return fmt.Errorf("%w: no shape", ErrShape)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrShape, err)
	}
	if s.ExpDegree < 1 {
		return fmt.Errorf("%w: shape %q has no expander parents", ErrShape, s.Name)
	}
	if err := TreeC(s).Validate(); err != nil {
		return fmt.Errorf("%w: shape %q tree %s: %v", ErrShape, s.Name, s.Tree, err)
	}
	return nil
}

// Check reports the first field of c that does not fit its shape.
func (c *Circuit) Check() error {
	if err := checkShape(c.Shape); err != nil {
		return err
	}
	s := c.Shape
	if len(c.Challenges) != s.ChallengesPerPartition {
		return fmt.Errorf("%w: challenges: %d, shape %q has %d per partition", ErrShape, len(c.Challenges), s.Name, s.ChallengesPerPartition)
	}
	td, tc := TreeD(), TreeC(s)
	fail := func(field string, err error) error {
		return fmt.Errorf("%w: %s: %v", ErrShape, field, err)
	}
	for i := range c.Challenges {
		ch := &c.Challenges[i]
		f := fmt.Sprintf("challenges[%d]", i)
		if ch.Node >= s.Nodes {
			return fail(f+".node", fmt.Errorf("node %d outside the %d nodes", ch.Node, s.Nodes))
		}
		if err := td.Check(&ch.CommDPath, s.Nodes); err != nil {
			return fail(f+".comm_d_path", err)
		}
		if err := tc.Check(&ch.CommRLastPath, s.Nodes); err != nil {
			return fail(f+".comm_r_last_path", err)
		}
		if err := tc.Check(&ch.CommCPath, s.Nodes); err != nil {
			return fail(f+".comm_c_path", err)
		}
		for _, p := range []struct {
			name string
			cols []Column
			n    int
		}{{"drg_parents", ch.DRGParents, s.BaseDegree}, {"exp_parents", ch.ExpParents, s.ExpDegree}} {
			if len(p.cols) != p.n {
				return fail(f+"."+p.name, fmt.Errorf("%d columns, want %d", len(p.cols), p.n))
			}
			for j := range p.cols {
				col := &p.cols[j]
				cf := fmt.Sprintf("%s.%s[%d]", f, p.name, j)
				if len(col.Rows) != s.Layers {
					return fail(cf+".rows", fmt.Errorf("%d rows, want %d (layers)", len(col.Rows), s.Layers))
				}
				if err := tc.Check(&col.Path, s.Nodes); err != nil {
					return fail(cf+".path", err)
				}
			}
		}
	}
	return nil
}
