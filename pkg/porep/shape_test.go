package porep

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOfficialShapes pins the official v1.1 shapes to the values of
// filecoin-proofs constants.rs and filecoin-proofs-api registry.rs.
func TestOfficialShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, rp, tag          string
		id                     uint64
		size                   uint64
		layers, parts, perPart int
		tree                   TreeShape
		rowsToDiscard          int
	}{
		{"2KiB", "StackedDrg2KiBV1_1", "StackedDrg2KiBV1", 5, 2 << 10, 2, 1, 2, TreeShape{8, 0, 0}, 1},
		{"8MiB", "StackedDrg8MiBV1_1", "StackedDrg8MiBV1", 6, 8 << 20, 2, 1, 2, TreeShape{8, 0, 0}, 2},
		{"512MiB", "StackedDrg512MiBV1_1", "StackedDrg512MiBV1", 7, 512 << 20, 2, 1, 2, TreeShape{8, 0, 0}, 2},
		{"32GiB", "StackedDrg32GiBV1_1", "StackedDrg32GiBV1", 8, 32 << 30, 11, 10, 18, TreeShape{8, 8, 0}, 2},
		{"64GiB", "StackedDrg64GiBV1_1", "StackedDrg64GiBV1", 9, 64 << 30, 11, 10, 18, TreeShape{8, 8, 2}, 2},
	}
	for _, c := range cases {
		s, err := ShapeByName(c.name)
		require.NoError(t, err)
		require.False(t, s.Test)
		require.Equal(t, c.rp, s.RegisteredProof)
		require.Equal(t, c.tag, s.VanillaProofTag)
		require.Equal(t, c.size, s.SectorSize())
		require.Equal(t, c.layers, s.Layers)
		require.Equal(t, c.parts, s.Partitions)
		require.Equal(t, c.perPart, s.ChallengesPerPartition)
		require.Equal(t, c.tree, s.Tree)
		require.Equal(t, c.rowsToDiscard, s.RowsToDiscard)
		require.Equal(t, 6, s.BaseDegree)
		require.Equal(t, 8, s.ExpDegree)
		require.Equal(t, 37, s.LabelParents)
		require.Equal(t, APIVersion1_1, s.APIVersion)
		var wantID [32]byte // proof id u64 LE, nonce 0
		wantID[0] = byte(c.id)
		require.Equal(t, wantID, s.PoRepID())
		byRP, err := ShapeByRegisteredProof(c.rp)
		require.NoError(t, err)
		require.Equal(t, s.Name, byRP.Name)
	}
	s, _ := ShapeByName("32GiB")
	require.Equal(t, 180, s.TotalChallenges())
	require.Equal(t, 30, s.TreeDHeight())
	require.Equal(t, 9, s.Tree.BaseHeight(s.Nodes)) // 2^27 leaves per base tree = 8^9
	s, _ = ShapeByName("64GiB")
	require.Equal(t, 16, s.Tree.BaseTreeCount())
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	names := ShapeNames()
	require.Equal(t, []string{"2KiB", "8MiB", "512MiB", "32GiB", "64GiB"}, names[:5])
	seen := map[[32]byte]string{}
	multi := false
	for _, s := range Shapes() {
		require.NoError(t, s.Validate())
		if s.Test {
			require.Equal(t, TestRegisteredProofPrefix+s.Name, s.RegisteredProof)
			require.Equal(t, TestVanillaProofTag, s.VanillaProofTag)
			require.NotZero(t, s.ProofID&TestProofIDBase)
			multi = multi || s.Partitions >= 2
		}
		prev, dup := seen[s.PoRepID()]
		require.False(t, dup, "%s and %s share a porep id", s.Name, prev)
		seen[s.PoRepID()] = s.Name
	}
	require.True(t, multi, "a test shape with 2+ partitions")
	_, err := ShapeByName("1TiB")
	require.ErrorIs(t, err, ErrUnknownShape)
	_, err = ShapeByRegisteredProof("StackedDrg2KiBV1")
	require.ErrorIs(t, err, ErrUnknownShape)

	bad := Shape{Name: "bad", Nodes: 100, Layers: 2, Partitions: 1, ChallengesPerPartition: 1, BaseDegree: 6, ExpDegree: 8, LabelParents: 37, Tree: TreeShape{8, 0, 0}}
	require.ErrorContains(t, bad.Validate(), "power of two")
	bad.Nodes = 128
	require.ErrorContains(t, bad.Validate(), "power of arity")
	bad.Nodes, bad.LabelParents = 64, 10
	require.ErrorContains(t, bad.Validate(), "label parents")
}

func TestChallengesAndReplicaID(t *testing.T) {
	t.Parallel()
	s, err := ShapeByName("32GiB")
	require.NoError(t, err)
	var rid Domain
	rid[0] = 1
	var seed [32]byte
	seed[1] = 2
	// Partitioning is a slicing of one sequence (challenge_partition_equivalence).
	one := *s
	one.ChallengesPerPartition = s.TotalChallenges()
	all := Challenges(&one, rid, seed, 0)
	for k := range s.Partitions {
		require.Equal(t, all[k*18:(k+1)*18], Challenges(s, rid, seed, k))
	}
	for _, c := range all {
		require.True(t, c >= 1 && c < s.Nodes)
	}
	tiny, err := ShapeByName("2KiB")
	require.NoError(t, err)
	for k := range 200 {
		for _, c := range Challenges(tiny, rid, [32]byte{byte(k)}, 0) {
			require.True(t, c >= 1 && c <= 63)
		}
	}
	a := ReplicaID([32]byte{1}, 7, [32]byte{2}, Domain{3}, s.PoRepID())
	require.Zero(t, a[31]&0xc0)
	require.NotEqual(t, a, ReplicaID([32]byte{1}, 8, [32]byte{2}, Domain{3}, s.PoRepID()))
}

func TestDomainElement(t *testing.T) {
	t.Parallel()
	var d Domain
	for i := range d {
		d[i] = 0xff
	}
	_, err := d.Element()
	require.ErrorIs(t, err, ErrNotCanonical)
	d.TruncateTo254()
	e, err := d.Element()
	require.NoError(t, err)
	require.Equal(t, d, DomainFromElement(&e))
	sum, err := Encode(Domain{1}, Domain{2})
	require.NoError(t, err)
	require.Equal(t, Domain{3}, sum)
	p := LabelPrefix(Domain{9}, 2, 0x0102)
	require.Equal(t, byte(9), p[0])
	require.Equal(t, []byte{0, 0, 0, 2}, p[32:36])
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 1, 2}, p[36:44])
	require.Equal(t, make([]byte, 20), p[44:])
}
