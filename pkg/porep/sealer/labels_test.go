package sealer

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
)

// frRepr turns the u64 limbs of a bellperson FrRepr literal into its
// little-endian bytes, the way labels are stored.
func frRepr(limbs [4]uint64) porep.Domain {
	var d porep.Domain
	for i, l := range limbs {
		binary.LittleEndian.PutUint64(d[8*i:], l)
	}
	return d
}

// TestLabelsKnownAnswers checks graph + labeling against the expected last
// labels of storage-proofs-porep create_label/multi.rs test_create_labels:
// 11 layers, replica id [9; 32], sector sizes 2048 and 4096 bytes (64 and 128
// nodes), porep id [0; 32] under ApiVersion 1.0 and [123; 32] under 1.1.
func TestLabelsKnownAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		nodes   uint64
		porepID byte
		api     porep.APIVersion
		want    [4]uint64
	}{
		{64, 0, porep.APIVersion1_0, [4]uint64{0xd3faa96b9a0fba04, 0xea81a283d106485e, 0xe3d51b9afa5ac2b3, 0x0462f4f4f1a68d37}},
		{128, 0, porep.APIVersion1_0, [4]uint64{0x7e191e52c4a8da86, 0x5ae8a1c9e6fac148, 0xce239f3b88a894b8, 0x234c00d1dc1d53be}},
		{64, 123, porep.APIVersion1_1, [4]uint64{0xabb3f38bb70defcf, 0x777a2e4d7769119f, 0x3448959d495490bc, 0x06021188c7a71cb5}},
		{128, 123, porep.APIVersion1_1, [4]uint64{0x22ab81cf68c4676d, 0x7a77a82fc7c9c189, 0xc6c03d32c1e42d23, 0x0f777c18cc2c55bd}},
	}
	for _, c := range cases {
		var pid [32]byte
		for i := range pid {
			pid[i] = c.porepID
		}
		g, err := graph.New(graph.Params{Nodes: c.nodes, BaseDegree: 6, ExpDegree: 8, PoRepID: pid, APIVersion: c.api})
		require.NoError(t, err)
		s := &porep.Shape{Name: "kat", Nodes: c.nodes, Layers: 11, BaseDegree: 6, ExpDegree: 8, LabelParents: 37}
		var rid porep.Domain
		for i := range rid {
			rid[i] = 9
		}
		labels, err := ComputeLabels(context.Background(), s, g, rid, nil)
		require.NoError(t, err)
		require.Equal(t, frRepr(c.want), labels[10][c.nodes-1], "nodes %d api %s", c.nodes, c.api)
	}
}
