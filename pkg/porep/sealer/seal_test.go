package sealer

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

// TestSealWriteParseVerify seals every small shape, writes C1, parses it back
// and checks it with the native verifier (including the replica id derivation).
func TestSealWriteParseVerify(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"2KiB", "test-tiny", "test-mini", "test-sub", "test-top", "test-11layers"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var buf, progress bytes.Buffer
			res, err := WriteRandomC1(context.Background(), RandomC1Config{Shape: name, Seed: 7, Progress: &progress}, &buf)
			require.NoError(t, err)
			require.EqualValues(t, buf.Len(), res.Bytes)
			require.Contains(t, progress.String(), "vanilla proofs: partition")
			require.Contains(t, progress.String(), "wrote C1")

			out, err := c1.Parse(bytes.NewReader(buf.Bytes()), c1.ParseOptions{})
			require.NoError(t, err)
			require.Equal(t, res.Shape.Name, out.Shape.Name)
			require.Equal(t, res.CommR, out.CommR)
			require.Equal(t, res.CommD, out.CommD)
			require.Len(t, out.VanillaProofs.Partitions(), res.Shape.Partitions)
			id := &verifier.Identity{ProverID: res.Identity.ProverID, SectorID: res.Identity.SectorID}
			require.NoError(t, verifier.Verify(context.Background(), out, verifier.Options{Identity: id}))

			// Writing the parsed document again gives the same bytes.
			var again bytes.Buffer
			_, err = out.WriteTo(&again)
			require.NoError(t, err)
			require.Equal(t, buf.String(), again.String())
		})
	}
}

func TestSealDeterministicAndDataSource(t *testing.T) {
	t.Parallel()
	var a, b, c bytes.Buffer
	_, err := WriteRandomC1(context.Background(), RandomC1Config{Shape: "test-tiny", Seed: 1}, &a)
	require.NoError(t, err)
	_, err = WriteRandomC1(context.Background(), RandomC1Config{Shape: "test-tiny", Seed: 1}, &b)
	require.NoError(t, err)
	require.Equal(t, a.String(), b.String())

	// All-zero data: comm_d is the published zero commitment of 2 KiB.
	res, err := WriteRandomC1(context.Background(), RandomC1Config{Shape: "2KiB", Seed: 1, Data: bytes.NewReader(make([]byte, 2048))}, &c)
	require.NoError(t, err)
	require.Equal(t, "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833", res.CommD.String())

	_, err = WriteRandomC1(context.Background(), RandomC1Config{Shape: "2KiB", Data: bytes.NewReader(make([]byte, 100))}, io.Discard)
	require.ErrorContains(t, err, "read data node 3 of 64")
	_, err = WriteRandomC1(context.Background(), RandomC1Config{Shape: "nope"}, io.Discard)
	require.ErrorIs(t, err, porep.ErrUnknownShape)
}

func TestSealRejectsBadInput(t *testing.T) {
	t.Parallel()
	s, err := porep.ShapeByName("test-tiny")
	require.NoError(t, err)
	_, err = Seal(context.Background(), s, make([]porep.Domain, 3), Identity{}, nil)
	require.ErrorContains(t, err, "3 data nodes")
	data := make([]porep.Domain, s.Nodes)
	for i := range data[5] {
		data[5][i] = 0xff
	}
	_, err = Seal(context.Background(), s, data, Identity{}, nil)
	require.ErrorIs(t, err, porep.ErrNotCanonical)
	big, err := porep.ShapeByName("32GiB")
	require.NoError(t, err)
	_, err = Seal(context.Background(), big, nil, Identity{}, nil)
	require.ErrorContains(t, err, "in-memory limit")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Seal(ctx, s, make([]porep.Domain, s.Nodes), Identity{}, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// TestSectorInternals cross-checks the sealed sector against its definition:
// replica = data + last label, comm_r = H(comm_c, comm_r_last), tree D over data.
func TestSectorInternals(t *testing.T) {
	t.Parallel()
	s, err := porep.ShapeByName("test-sub")
	require.NoError(t, err)
	data := make([]porep.Domain, s.Nodes)
	for i := range data {
		data[i][0] = byte(i)
		data[i][1] = byte(i >> 8)
	}
	var prog strings.Builder
	sec, err := Seal(context.Background(), s, data, Identity{SectorID: 9}, &Progress{W: &prog})
	require.NoError(t, err)
	require.Contains(t, prog.String(), "labels: layer 3/3")
	for _, n := range []uint64{0, 1, 100, s.Nodes - 1} {
		want, err := porep.Encode(data[n], sec.Labels[s.Layers-1][n])
		require.NoError(t, err)
		require.Equal(t, want, sec.Replica[n])
	}
	commR, err := merkle.Poseidon{}.HashNode([]porep.Domain{sec.CommC, sec.CommRLast})
	require.NoError(t, err)
	require.Equal(t, commR, sec.CommR)
	tree, err := merkle.Build(context.Background(), porep.TreeShape{Base: 2}, data, merkle.SHA254{})
	require.NoError(t, err)
	require.Equal(t, tree.Root(), sec.CommD)
	require.Equal(t, porep.ReplicaID([32]byte{}, 9, [32]byte{}, sec.CommD, s.PoRepID()), sec.ReplicaID)
}
