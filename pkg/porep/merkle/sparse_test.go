package merkle

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// TestSparseEqualsDense builds the same leaf assignment (a default leaf
// everywhere except a random explicit set) as a dense Tree and as a
// SparseTree, for every tree kind the PoRep uses — binary SHA-254 (tree D)
// and Poseidon 8/0/0, 8/8/0, 8/8/2 (trees C and R_last) — plus odd layouts,
// and requires equal roots and byte-equal inclusion proofs for every leaf.
func TestSparseEqualsDense(t *testing.T) {
	t.Parallel()
	for ci, c := range []struct {
		name   string
		shape  porep.TreeShape
		leaves int
		h      Hasher
	}{
		{"sha254 binary", porep.TreeShape{Base: 2}, 256, SHA254{}},
		{"poseidon 8/0/0", porep.TreeShape{Base: 8}, 512, Poseidon{}},
		{"poseidon 8/8/0", porep.TreeShape{Base: 8, Sub: 8}, 512, Poseidon{}},
		{"poseidon 8/8/2", porep.TreeShape{Base: 8, Sub: 8, Top: 2}, 1024, Poseidon{}},
		{"poseidon 8/2/0", porep.TreeShape{Base: 8, Sub: 2}, 128, Poseidon{}},
		{"poseidon 4/4/2", porep.TreeShape{Base: 4, Sub: 4, Top: 2}, 128, Poseidon{}},
		{"sha254 8/8/2", porep.TreeShape{Base: 8, Sub: 8, Top: 2}, 128, SHA254{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(11, uint64(ci)))
			def := randomLeaves(r, 1)[0]
			values := randomLeaves(r, c.leaves)
			n := uint64(c.leaves)
			for _, count := range []int{0, 1, 3, c.leaves / 5, c.leaves} {
				explicit := map[uint64]porep.Domain{}
				switch count {
				case 0:
				case 1:
					explicit[n-1] = values[n-1] // the last leaf: every path to the right edge
				default:
					explicit[0] = values[0]
					for len(explicit) < count {
						i := r.Uint64N(n)
						explicit[i] = values[i]
					}
				}
				dense := make([]porep.Domain, n)
				for i := range dense {
					dense[i] = def
					if v, ok := explicit[uint64(i)]; ok {
						dense[i] = v
					}
				}
				want, err := Build(context.Background(), c.shape, dense, c.h)
				require.NoError(t, err)
				got, err := BuildSparse(context.Background(), c.shape, n, def, explicit, c.h)
				require.NoError(t, err)
				require.Equal(t, want.Root(), got.Root(), "%d explicit leaves", count)
				require.Equal(t, count, got.Explicit())
				require.Equal(t, n, got.Leaves())
				for i := range n {
					wp, err := want.Prove(i)
					require.NoError(t, err)
					gp, err := got.Prove(i)
					require.NoError(t, err)
					require.Equal(t, wp, gp, "%d explicit leaves, leaf %d", count, i)
					require.Equal(t, dense[i], got.Leaf(i))
					_, isExp := explicit[i]
					require.Equal(t, isExp, got.IsExplicit(i))
				}
			}
		})
	}
}

// TestSparseZeroCommD checks the sparse binary SHA-254 tree of an all-zero
// sector against Filecoin's published zero-piece commitments (the table of
// go-commp-utils zerocomm / cpp-filecoin, index k = 128·2^k bytes): 2 KiB,
// 32 GiB and 64 GiB, i.e. comm_d of a committed-capacity sector of those sizes.
func TestSparseZeroCommD(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		nodes uint64
		want  string
	}{
		{1 << 6, "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"},
		{1 << 30, "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e"},
		{1 << 31, "e64005a6bfe3777953b8ad6ef93f0fca1049b2041654f2a411f7702799cece02"},
	} {
		tree, err := BuildSparse(context.Background(), porep.TreeShape{Base: 2}, c.nodes, porep.Domain{}, nil, SHA254{})
		require.NoError(t, err)
		root := tree.Root()
		require.Equal(t, c.want, hex.EncodeToString(root[:]), "%d nodes", c.nodes)
		// A path through the middle of the huge tree verifies against it.
		leaf := (c.nodes/2 + 12345) % c.nodes
		p, err := tree.Prove(leaf)
		require.NoError(t, err)
		require.NoError(t, p.CheckShape(porep.TreeShape{Base: 2}, c.nodes))
		require.Equal(t, leaf, p.PathIndex(porep.TreeShape{Base: 2}))
		require.NoError(t, p.Verify(SHA254{}))
	}
}

// TestSparseHugePoseidon opens explicit leaves of a 2^31-leaf 8/8/2 Poseidon
// tree (the 64 GiB tree C / R_last layout): proofs verify and have the
// official path shape, and the stored node count stays O(explicit × height).
func TestSparseHugePoseidon(t *testing.T) {
	t.Parallel()
	shape := porep.TreeShape{Base: 8, Sub: 8, Top: 2}
	const n = uint64(1) << 31
	r := rand.New(rand.NewPCG(5, 9))
	vals := randomLeaves(r, 20)
	explicit := map[uint64]porep.Domain{}
	for i := range vals {
		explicit[r.Uint64N(n)] = vals[i]
	}
	explicit[n-1] = vals[0]
	tree, err := BuildSparse(context.Background(), shape, n, vals[1], explicit, Poseidon{})
	require.NoError(t, err)
	require.LessOrEqual(t, tree.StoredNodes(), len(explicit)*(shape.BaseHeight(n)+1))
	for i, v := range explicit {
		p, err := tree.Prove(i)
		require.NoError(t, err)
		require.Equal(t, v, p.Leaf)
		require.NoError(t, p.CheckShape(shape, n))
		require.Equal(t, i, p.PathIndex(shape))
		require.NoError(t, p.Verify(Poseidon{}))
	}
	p, err := tree.Prove(3)
	require.NoError(t, err)
	require.Equal(t, vals[1], p.Leaf)
	require.NoError(t, p.Verify(Poseidon{}))
}

func TestSparseRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shape := porep.TreeShape{Base: 8, Sub: 8}
	_, err := BuildSparse(ctx, shape, 100, porep.Domain{}, nil, Poseidon{})
	require.ErrorContains(t, err, "base trees")
	_, err = BuildSparse(ctx, porep.TreeShape{Base: 8}, 16, porep.Domain{}, nil, Poseidon{})
	require.ErrorContains(t, err, "not a power of arity 8")
	_, err = BuildSparse(ctx, shape, 512, porep.Domain{}, map[uint64]porep.Domain{512: {}}, Poseidon{})
	require.ErrorContains(t, err, "explicit leaf 512 out of range")

	var bad porep.Domain
	for i := range bad {
		bad[i] = 0xff
	}
	_, err = BuildSparse(ctx, shape, 512, bad, nil, Poseidon{})
	require.ErrorIs(t, err, porep.ErrNotCanonical)
	require.ErrorContains(t, err, "default node of level 1")
	_, err = BuildSparse(ctx, shape, 512, porep.Domain{}, map[uint64]porep.Domain{77: bad}, Poseidon{})
	require.ErrorIs(t, err, porep.ErrNotCanonical)
	require.ErrorContains(t, err, "level 1: node 9")

	tree, err := BuildSparse(ctx, shape, 512, porep.Domain{}, nil, Poseidon{})
	require.NoError(t, err)
	_, err = tree.Prove(512)
	require.ErrorContains(t, err, "out of range")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = BuildSparse(cctx, shape, 512, porep.Domain{}, nil, Poseidon{})
	require.ErrorIs(t, err, context.Canceled)
}
