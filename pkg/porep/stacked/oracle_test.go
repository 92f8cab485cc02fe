package stacked

import (
	"fmt"
	"testing"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
	"github.com/c2cluster/c2cluster/pkg/r1cs/r1cstest"
)

// oracleShape is a test shape of storage-proofs-porep's
// tests/stacked_circuit.rs: 8 nodes per base tree, 2 layers, one
// challenge, the official degrees and label parents, porep_id [44; 32].
func oracleShape(tree porep.TreeShape) *porep.Shape {
	return &porep.Shape{
		Name:                   fmt.Sprintf("oracle-%d-%d-%d", tree.Base, tree.Sub, tree.Top),
		APIVersion:             porep.APIVersion1_1,
		Nodes:                  8 * uint64(tree.BaseTreeCount()),
		Layers:                 2,
		Partitions:             1,
		ChallengesPerPartition: 1,
		MinimumChallenges:      1,
		BaseDegree:             6,
		ExpDegree:              8,
		LabelParents:           37,
		Tree:                   tree,
		Test:                   true,
	}
}

func synthesizeBlank(t testing.TB, s *porep.Shape, opts ...r1cs.SystemOption) *r1cs.System {
	t.Helper()
	c, err := Blank(s)
	if err != nil {
		t.Fatal(err)
	}
	sys := r1cs.NewSystem(opts...)
	if err := c.Synthesize(sys); err != nil {
		t.Fatal(err)
	}
	return sys
}

// TestBlankBase8MatchesDump compares the blank base-8 test circuit with the
// reference's dump, every constraint line (names included), the counts and
// the hash.
func TestBlankBase8MatchesDump(t *testing.T) {
	r1cstest.OracleDir(t)
	if testing.Short() {
		t.Skip("short: the base-8 hash (TestBlankTestShapesMatchReference) stands for the dump")
	}
	sys := synthesizeBlank(t, oracleShape(porep.TreeShape{Base: 8}), r1cs.WithNames())
	r1cstest.CompareDump(t, sys, "porep-base8.r1cs.txt.gz")
}

// The reference's counts and hashes (../shared/oracle/README.md).
type reference struct {
	inputs, aux, constraints int
	hash                     string
}

var testShapeRefs = []struct {
	tree porep.TreeShape
	ref  reference
}{
	{porep.TreeShape{Base: 2}, reference{22, 1_205_053, 1_206_212, "e933e8bea2e68a3569205187f61c428770f083c7e7d2113babedb204b9429bc3"}},
	{porep.TreeShape{Base: 8}, reference{22, 1_198_525, 1_199_620, "b9e22ee377bc73c4e08f679252c4f87948f5812be8c95358a6bf87a7279a785f"}},
	{porep.TreeShape{Base: 8, Sub: 4}, reference{22, 1_295_435, 1_296_576, "2bb32fe1d16325b1afe3f67f42148047406233e23eae86605f53247273706615"}},
	{porep.TreeShape{Base: 8, Sub: 4, Top: 2}, reference{22, 1_345_810, 1_346_982, "c9b69c85139ae04bac789fecb881052900c660c6337ab4b520eaa0c9f7293f75"}},
}

func checkReference(t *testing.T, sys *r1cs.System, ref reference) {
	t.Helper()
	if sys.NumInputs() != ref.inputs || sys.NumAux() != ref.aux || sys.NumConstraints() != ref.constraints {
		t.Fatalf("%d inputs, %d aux, %d constraints; reference %d, %d, %d",
			sys.NumInputs(), sys.NumAux(), sys.NumConstraints(), ref.inputs, ref.aux, ref.constraints)
	}
	if h := fmt.Sprintf("%x", sys.Hash()); h != ref.hash {
		t.Fatalf("hash %s, reference %s", h, ref.hash)
	}
}

// TestBlankTestShapesMatchReference checks the blank circuits of the four
// test shapes of the reference (trees 2-0-0, 8-0-0, 8-4-0, 8-4-2) against
// its counts and hashes.
func TestBlankTestShapesMatchReference(t *testing.T) {
	for _, tc := range testShapeRefs {
		t.Run(tc.tree.String(), func(t *testing.T) {
			if testing.Short() && tc.tree != (porep.TreeShape{Base: 8}) {
				t.Skip("short: only base 8")
			}
			checkReference(t, synthesizeBlank(t, oracleShape(tc.tree)), tc.ref)
		})
	}
}
