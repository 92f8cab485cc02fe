package stacked

import (
	"errors"
	"strings"
	"testing"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func TestShapeErrors(t *testing.T) {
	if _, err := Blank(nil); !errors.Is(err, ErrShape) {
		t.Fatalf("nil shape: %v", err)
	}
	s, err := porep.ShapeByName("test-micro")
	if err != nil {
		t.Fatal(err)
	}
	noExp := *s
	noExp.ExpDegree = 0
	if _, err := Blank(&noExp); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "expander") {
		t.Fatalf("no expander parents: %v", err)
	}
	for _, tc := range []struct {
		edit func(c *Circuit)
		want string
	}{
		{func(c *Circuit) { c.Challenges = c.Challenges[:0] }, "challenges: 0"},
		{func(c *Circuit) { c.Challenges[0].Node = s.Nodes }, "challenges[0].node"},
		{func(c *Circuit) { c.Challenges[0].CommDPath.Base = nil }, "challenges[0].comm_d_path: base path has 0 levels"},
		{func(c *Circuit) { c.Challenges[0].CommCPath.Base[0].Index = 4 }, "challenges[0].comm_c_path: base path level 0 index 4"},
		{func(c *Circuit) { c.Challenges[0].CommRLastPath.Sub = c.Challenges[0].CommRLastPath.Base }, "challenges[0].comm_r_last_path: sub path"},
		{func(c *Circuit) { c.Challenges[0].ExpParents = nil }, "challenges[0].exp_parents: 0 columns, want 1"},
		{func(c *Circuit) { c.Challenges[0].DRGParents[1].Rows = nil }, "challenges[0].drg_parents[1].rows: 0 rows, want 2"},
		{func(c *Circuit) { c.Challenges[0].DRGParents[0].Path.Base[0].Hashes = nil }, "challenges[0].drg_parents[0].path"},
	} {
		c, err := Blank(s)
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(c)
		sys := r1cs.NewSystem()
		err = c.Synthesize(sys)
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("got %v, want an ErrShape naming %q", err, tc.want)
		}
		if sys.NumAux() != 0 {
			t.Fatal("a bad instance allocated variables before its error")
		}
	}
}

// TestBlankShapeIndependentOfValues: the blank circuit and a real one of
// the same shape have the same constraints (hash), so the blank one is
// what the parameters are made for.
func TestBlankShapeIndependentOfValues(t *testing.T) {
	out := sealedC1(t, "test-micro", 2)
	blank := synthesizeBlank(t, out.Shape)
	for k := range out.Shape.Partitions {
		c, err := FromC1(out, k)
		if err != nil {
			t.Fatal(err)
		}
		sys := r1cs.NewSystem()
		if err := c.Synthesize(sys); err != nil {
			t.Fatal(err)
		}
		if sys.Hash() != blank.Hash() {
			t.Fatalf("partition %d: the real circuit's hash differs from the blank one's", k)
		}
	}
}
