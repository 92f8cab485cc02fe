package graph

import (
	"encoding/binary"
	"testing"

	"golang.org/x/crypto/chacha20"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// The exact parent values are pinned end to end by the label known-answer
// test in porep/sealer (rust-fil-proofs test_create_labels); rust-fil-proofs
// publishes no raw parent vectors. These tests check the structure.

func TestBaseParentsStructure(t *testing.T) {
	t.Parallel()
	for _, api := range []porep.APIVersion{porep.APIVersion1_0, porep.APIVersion1_1} {
		g, err := New(Params{Nodes: 2048, BaseDegree: 6, ExpDegree: 8, PoRepID: [32]byte{123}, APIVersion: api})
		require.NoError(t, err)
		p := make([]uint32, 6)
		g.BaseParents(0, p)
		require.Equal(t, []uint32{0, 0, 0, 0, 0, 0}, p)
		g.BaseParents(1, p)
		require.Equal(t, []uint32{0, 0, 0, 0, 0, 0}, p)
		pred := 0
		if api == porep.APIVersion1_0 {
			pred = 5
		}
		for n := uint64(2); n < 2048; n++ {
			g.BaseParents(n, p)
			require.Equal(t, uint32(n-1), p[pred], "node %d", n)
			for _, x := range p {
				require.Less(t, uint64(x), n, "node %d parent %d", n, x)
			}
		}
	}
}

func TestExpanderIsPermutation(t *testing.T) {
	t.Parallel()
	// Over all (node, i) the Feistel network is a permutation of [0, n·d).
	const n, d = 1024, 8
	g, err := New(Params{Nodes: n, BaseDegree: 6, ExpDegree: d, PoRepID: [32]byte{9}, APIVersion: porep.APIVersion1_1})
	require.NoError(t, err)
	seen := make([]bool, n*d)
	for node := uint64(0); node < n; node++ {
		for i := range uint64(d) {
			v := g.permute(n*d, node*d+i)
			require.Less(t, v, uint64(n*d))
			require.False(t, seen[v])
			seen[v] = true
		}
	}
	p := make([]uint32, d)
	g.ExpParents(500, p)
	for _, x := range p {
		require.Less(t, x, uint32(n))
	}
}

func TestForCachesAndMatchesOnDemand(t *testing.T) {
	t.Parallel()
	s, err := porep.ShapeByName("test-sub")
	require.NoError(t, err)
	g1, err := For(s)
	require.NoError(t, err)
	g2, err := For(s)
	require.NoError(t, err)
	require.Same(t, g1, g2)
	require.NotNil(t, g1.cache)
	fresh, err := New(Params{Nodes: s.Nodes, BaseDegree: s.BaseDegree, ExpDegree: s.ExpDegree, PoRepID: s.PoRepID(), APIVersion: s.APIVersion})
	require.NoError(t, err)
	a, b := make([]uint32, 14), make([]uint32, 14)
	for n := range s.Nodes {
		g1.Parents(n, a)
		fresh.Parents(n, b)
		require.Equal(t, a, b)
	}
	// Different porep ids give different graphs.
	other, err := New(Params{Nodes: s.Nodes, BaseDegree: 6, ExpDegree: 8, PoRepID: [32]byte{1}, APIVersion: porep.APIVersion1_1})
	require.NoError(t, err)
	other.Parents(100, b)
	g1.Parents(100, a)
	require.NotEqual(t, a, b)
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	_, err := New(Params{Nodes: 1, BaseDegree: 6})
	require.Error(t, err)
	_, err = New(Params{Nodes: 64, BaseDegree: 1})
	require.Error(t, err)
	_, err = New(Params{Nodes: 64, BaseDegree: 6, ExpDegree: -1})
	require.Error(t, err)
}

func TestChaChaBlockAgainstXCrypto(t *testing.T) {
	t.Parallel()
	// With 20 rounds, zero stream id and counter from 0 the generator's words
	// are the ChaCha20 keystream of golang.org/x/crypto/chacha20 with a zero
	// nonce: an independent check of the block function and word order.
	var seed [32]byte
	for i := range seed {
		seed[i] = byte(i * 7)
	}
	c := newChaCha8(&seed)
	c.doubleRounds = 10
	ks := make([]byte, 64*3)
	x, err := chacha20.NewUnauthenticatedCipher(seed[:], make([]byte, chacha20.NonceSize))
	require.NoError(t, err)
	x.XORKeyStream(ks, ks)
	for i := 0; i < len(ks); i += 8 {
		require.Equal(t, binary.LittleEndian.Uint64(ks[i:]), c.nextU64(), "word %d", i/4)
	}
}
