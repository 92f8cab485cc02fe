package circuit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

func TestParamsOfOfficialShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		shape     string
		public    int // without the constant one
		levels    []int
		nodeBits  int
		challenge int
	}{
		// 32 GiB: bellperson's 328 inputs include the one.
		{"32GiB", 327, []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8}, 30, 18},
		{"64GiB", 327, []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 2}, 31, 18},
		{"2KiB", 3 + 2*18, []int{8, 8}, 6, 2},
		{"512MiB", 3 + 2*18, []int{8, 8, 8, 8, 8, 8, 8, 8}, 24, 2},
	}
	for _, tc := range cases {
		s, err := porep.ShapeByName(tc.shape)
		require.NoError(t, err)
		p, err := ParamsOf(s)
		require.NoError(t, err, tc.shape)
		require.Equal(t, tc.public, p.NumPublic(), tc.shape)
		require.Equal(t, tc.levels, p.TreeLevels(), tc.shape)
		require.Equal(t, tc.nodeBits, p.NodeBits(), tc.shape)
		require.Equal(t, tc.challenge, p.Challenges, tc.shape)
		require.Equal(t, 37, p.LabelParents)
	}
	s, _ := porep.ShapeByName("32GiB")
	p, _ := ParamsOf(s)
	want := Official32GiB()
	want.Name = p.Name
	require.Equal(t, want, p, "Official32GiB is the registry's 32 GiB shape")

	for _, s := range porep.Shapes() {
		_, err := ParamsOf(&s)
		require.NoError(t, err, s.Name)
	}
	_, err := ParamsOf(nil)
	require.ErrorIs(t, err, ErrInvalidInput)
}

func TestPublicInputLayout(t *testing.T) {
	t.Parallel()
	p := Official32GiB()
	// Challenge j's block: comm_d path, 6 DRG, 8 expander, challenge,
	// comm_r_last path, comm_c path; after replica_id, comm_d, comm_r.
	require.Equal(t, 3, p.inCommDPath(0))
	require.Equal(t, 4, p.inDRGPath(0, 0))
	require.Equal(t, 10, p.inExpPath(0, 0))
	require.Equal(t, 18, p.inChallenge(0))
	require.Equal(t, 19, p.inRLastPath(0))
	require.Equal(t, 20, p.inCPath(0))
	require.Equal(t, 21, p.inCommDPath(1))
	require.Equal(t, p.NumPublic()-1, p.inCPath(p.Challenges-1))
}

func TestParamsValidate(t *testing.T) {
	t.Parallel()
	ok := Params{Name: "x", Nodes: 64, Layers: 2, DRGDegree: 2, ExpDegree: 2, LabelParents: 4, Challenges: 1, Tree: TreeArity{Base: 8}}
	require.NoError(t, ok.Validate())
	bad := []struct {
		field string
		edit  func(p *Params)
	}{
		{"Nodes", func(p *Params) { p.Nodes = 48 }},
		{"Nodes", func(p *Params) { p.Nodes = 1 << 41 }},
		{"Layers", func(p *Params) { p.Layers = 0 }},
		{"DRGDegree", func(p *Params) { p.DRGDegree = 0 }},
		{"ExpDegree", func(p *Params) { p.ExpDegree = -1 }},
		{"LabelParents", func(p *Params) { p.LabelParents = 3 }},
		{"Challenges", func(p *Params) { p.Challenges = 0 }},
		{"Tree.Base", func(p *Params) { p.Tree.Base = 6 }},
		{"Tree.Sub", func(p *Params) { p.Tree.Sub = 1 }},
		{"Tree", func(p *Params) { p.Tree.Top = 2 }},
		{"Tree", func(p *Params) { p.Tree.Base = 16 }}, // 64 is not a power of 16
	}
	for _, tc := range bad {
		p := ok
		tc.edit(&p)
		err := p.Validate()
		require.Error(t, err, tc.field)
		require.Contains(t, err.Error(), tc.field+":")
	}
}
