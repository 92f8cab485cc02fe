package merkle

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// TestZeroCommD checks tree D against Filecoin's published zero-piece
// commitments (the CommP of all-zero unsealed data; go-commp-utils zerocomm,
// also in many Filecoin client fixtures): 128 B, 2 KiB and 4 KiB.
func TestZeroCommD(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bytes int
		want  string
	}{
		{128, "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333"},
		{2048, "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"},
		{4096, "08c47b38ee13bc43f41b915c0eed9911a26086b3ed62401bf9d58b8d19dff624"},
	} {
		tree, err := Build(context.Background(), porep.TreeShape{Base: 2}, make([]porep.Domain, c.bytes/32), SHA254{})
		require.NoError(t, err)
		root := tree.Root()
		require.Equal(t, c.want, hex.EncodeToString(root[:]), "%d bytes", c.bytes)
	}
}

func randomLeaves(r *rand.Rand, n int) []porep.Domain {
	leaves := make([]porep.Domain, n)
	for i := range leaves {
		for j := range leaves[i] {
			leaves[i][j] = byte(r.Uint32())
		}
		leaves[i].TruncateTo254()
	}
	return leaves
}

func TestProveVerifyEveryShape(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		shape  porep.TreeShape
		leaves int
		kind   Kind
	}{
		{porep.TreeShape{Base: 2}, 64, Single},
		{porep.TreeShape{Base: 8}, 64, Single},
		{porep.TreeShape{Base: 8, Sub: 8}, 512, Sub},
		{porep.TreeShape{Base: 8, Sub: 2}, 128, Sub},
		{porep.TreeShape{Base: 8, Sub: 8, Top: 2}, 1024, Top},
		{porep.TreeShape{Base: 4, Sub: 4, Top: 2}, 128, Top},
	} {
		leaves := randomLeaves(r, c.leaves)
		tree, err := Build(context.Background(), c.shape, leaves, SHA254{})
		require.NoError(t, err)
		for i := range uint64(c.leaves) {
			p, err := tree.Prove(i)
			require.NoError(t, err)
			require.Equal(t, c.kind, p.Kind)
			require.Equal(t, leaves[i], p.Leaf)
			require.NoError(t, p.CheckShape(c.shape, uint64(c.leaves)))
			require.Equal(t, i, p.PathIndex(c.shape), "shape %s leaf %d", c.shape, i)
			require.NoError(t, p.Verify(SHA254{}))
		}
		// A sibling hash changed anywhere breaks the root.
		p, err := tree.Prove(uint64(c.leaves - 1))
		require.NoError(t, err)
		paths := [][]PathElement{p.Base, p.Sub, p.Top}
		for _, path := range paths {
			for k := range path {
				saved := path[k].Hashes[0]
				path[k].Hashes[0][3] ^= 1
				require.ErrorIs(t, p.Verify(SHA254{}), ErrRootMismatch)
				path[k].Hashes[0] = saved
			}
		}
		require.NoError(t, p.Verify(SHA254{}))
	}
}

func TestIndependentRoot(t *testing.T) {
	t.Parallel()
	// Sub tree root = H(base roots) computed by hand for a 8/2/0 tree of 16 leaves.
	r := rand.New(rand.NewPCG(3, 4))
	leaves := randomLeaves(r, 16)
	tree, err := Build(context.Background(), porep.TreeShape{Base: 8, Sub: 2}, leaves, SHA254{})
	require.NoError(t, err)
	h := SHA254{}
	a, _ := h.HashNode(leaves[:8])
	b, _ := h.HashNode(leaves[8:])
	want, _ := h.HashNode([]porep.Domain{a, b})
	require.Equal(t, want, tree.Root())
}

func TestCheckShapeRejects(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	shape := porep.TreeShape{Base: 8, Sub: 8}
	tree, err := Build(context.Background(), shape, randomLeaves(r, 512), SHA254{})
	require.NoError(t, err)
	p, err := tree.Prove(77)
	require.NoError(t, err)
	require.NoError(t, p.CheckShape(shape, 512))
	require.ErrorContains(t, p.CheckShape(porep.TreeShape{Base: 8}, 512), "kind")
	require.ErrorContains(t, p.CheckShape(shape, 4096), "base path")
	p.Base[0].Index = 8
	require.ErrorContains(t, p.CheckShape(shape, 512), "index 8")
	p.Base[0].Index = 1
	p.Sub[0].Hashes = p.Sub[0].Hashes[:3]
	require.ErrorContains(t, p.CheckShape(shape, 512), "hashes")
	_, err = tree.Prove(512)
	require.Error(t, err)
	_, err = Build(context.Background(), shape, randomLeaves(r, 100), SHA254{})
	require.Error(t, err)
}
