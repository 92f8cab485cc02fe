package verifier_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/c1/c1test"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

var (
	fixtureOnce sync.Once
	fixture     []byte
	fixtureRes  *sealer.Result
	fixtureErr  error
)

// sealed returns a fresh parse of one test-tiny C1 (2 partitions × 2 challenges).
func sealed(t *testing.T) (*c1.Output, *sealer.Result) {
	t.Helper()
	fixtureOnce.Do(func() {
		var buf bytes.Buffer
		fixtureRes, fixtureErr = sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: "test-tiny", Seed: 42}, &buf)
		fixture = buf.Bytes()
	})
	require.NoError(t, fixtureErr)
	out, err := c1.ParseBytes(fixture)
	require.NoError(t, err)
	return out, fixtureRes
}

func TestVerifyAccepts(t *testing.T) {
	t.Parallel()
	out, res := sealed(t)
	require.NoError(t, verifier.CheckStructure(out, verifier.Options{}))
	require.NoError(t, verifier.Verify(context.Background(), out, verifier.Options{
		Identity: &verifier.Identity{ProverID: res.Identity.ProverID, SectorID: res.Identity.SectorID},
	}))
}

func TestTampering(t *testing.T) {
	t.Parallel()
	type mut struct {
		name       string
		mutate     func(o *c1.Output)
		check      verifier.Check
		part, chal int
		structural bool // CheckStructure already catches it
	}
	p := func(o *c1.Output, k, i int) *c1.ChallengeProof { return &o.VanillaProofs.Partitions()[k][i] }
	cases := []mut{
		{"label in c_x column", func(o *c1.Output) { p(o, 1, 1).ReplicaColumnProofs.CX.Column.Rows[1][0] ^= 1 }, verifier.CheckColumnPath, 1, 1, false},
		{"label of a drg parent column", func(o *c1.Output) { p(o, 0, 1).ReplicaColumnProofs.DrgParents[2].Column.Rows[0][4] ^= 1 }, verifier.CheckLabelParents, 0, 1, true},
		{"labeling proof parent", func(o *c1.Output) { p(o, 1, 0).LabelingProofs[1].Parents[20][7] ^= 1 }, verifier.CheckLabelParents, 1, 0, true},
		{"encoding proof parent", func(o *c1.Output) { p(o, 1, 0).EncodingProof.Parents[36][7] ^= 1 }, verifier.CheckLabelParents, 1, 0, true},
		{"comm_r_last path hash", func(o *c1.Output) { p(o, 0, 1).CommRLastProof.Data.Single.Path.Path[0].Hashes[3][0] ^= 1 }, verifier.CheckCommRLastPath, 0, 1, false},
		{"comm_d path hash", func(o *c1.Output) { p(o, 1, 1).CommDProofs.Data.Single.Path.Path[2].Hashes[0][9] ^= 1 }, verifier.CheckCommDPath, 1, 1, false},
		{"tree C path hash", func(o *c1.Output) {
			p(o, 0, 0).ReplicaColumnProofs.ExpParents[3].InclusionProof.Data.Single.Path.Path[0].Hashes[0][1] ^= 1
		}, verifier.CheckColumnPath, 0, 0, false},
		{"comm_r", func(o *c1.Output) { o.CommR[2] ^= 1 }, verifier.CheckCommR, 0, 0, false},
		{"comm_d", func(o *c1.Output) { o.CommD[2] ^= 1 }, verifier.CheckCommDRoot, 0, 0, true},
		{"challenge index in comm_d path", func(o *c1.Output) {
			e := &p(o, 1, 0).CommDProofs.Data.Single.Path.Path[0]
			e.Index ^= 1
		}, verifier.CheckChallenge, 1, 0, true},
		{"challenge index of c_x column", func(o *c1.Output) { p(o, 0, 1).ReplicaColumnProofs.CX.Column.Index ^= 1 }, verifier.CheckChallenge, 0, 1, true},
		{"labeling proof node", func(o *c1.Output) { p(o, 0, 0).LabelingProofs[0].Node++ }, verifier.CheckLabelIndex, 0, 0, true},
		{"exp parent column index", func(o *c1.Output) { p(o, 1, 1).ReplicaColumnProofs.ExpParents[0].Column.Index++ }, verifier.CheckParents, 1, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, _ := sealed(t)
			c.mutate(out)
			err := verifier.Verify(context.Background(), out, verifier.Options{})
			var ve *verifier.Error
			require.True(t, errors.As(err, &ve), "got %v", err)
			require.Equal(t, c.check, ve.Check, "%v", err)
			require.Equal(t, c.part, ve.Partition, "%v", err)
			require.Equal(t, c.chal, ve.Challenge, "%v", err)
			require.Contains(t, err.Error(), string(c.check))
			serr := verifier.CheckStructure(out, verifier.Options{})
			if c.structural {
				require.ErrorAs(t, serr, &ve)
				require.Equal(t, c.check, ve.Check)
			} else {
				require.NoError(t, serr)
			}
		})
	}
}

func TestTamperedReplicaID(t *testing.T) {
	t.Parallel()
	out, res := sealed(t)
	out.ReplicaID[0] ^= 1
	var ve *verifier.Error
	// With the identity the derivation itself fails.
	err := verifier.Verify(context.Background(), out, verifier.Options{Identity: &verifier.Identity{ProverID: res.Identity.ProverID, SectorID: res.Identity.SectorID}})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, verifier.CheckReplicaID, ve.Check)
	// Without it, the challenges derived from the replica id no longer match
	// the opened nodes (or, for a challenge that happens to coincide, the labels fail).
	err = verifier.Verify(context.Background(), out, verifier.Options{})
	require.ErrorAs(t, err, &ve)
	require.Contains(t, []verifier.Check{verifier.CheckChallenge, verifier.CheckLabel}, ve.Check, "%v", err)
}

func TestTamperedSeedAndLabelHash(t *testing.T) {
	t.Parallel()
	out, _ := sealed(t)
	out.Seed[5] ^= 0x10
	err := verifier.Verify(context.Background(), out, verifier.Options{})
	var ve *verifier.Error
	require.ErrorAs(t, err, &ve)
	require.Equal(t, verifier.CheckChallenge, ve.Check)
}

func TestVerifyNeedsShape(t *testing.T) {
	t.Parallel()
	var ve *verifier.Error
	require.ErrorAs(t, verifier.Verify(context.Background(), &c1.Output{}, verifier.Options{}), &ve)
	require.Equal(t, verifier.CheckShape, ve.Check)
	out, _ := sealed(t)
	out.VanillaProofs.Partitions()[0] = out.VanillaProofs.Partitions()[0][:1]
	require.ErrorAs(t, verifier.CheckStructure(out, verifier.Options{}), &ve)
	require.Equal(t, verifier.CheckShape, ve.Check)
	require.Contains(t, ve.Error(), "vanilla_proofs.C2ClusterTest[0]")
}

// TestVerifyAcceptsLotusC1: the C1 outputs Lotus made for real 2 KiB and
// 8 MiB sectors pass every check, the replica id included with the miner
// and sector number of their Commit2In envelopes; another sector number
// is refused.
func TestVerifyAcceptsLotusC1(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"2KiB.json", "8MiB.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, err := c1.ParseCommit2In(c1test.LotusFile(t, name))
			require.NoError(t, err)
			out, err := c1.ParseBytes(env.Phase1Out)
			require.NoError(t, err)
			miner, err := seal.ParseMinerID(env.Miner)
			require.NoError(t, err)
			id := verifier.Identity{ProverID: porep.ProverID(miner), SectorID: env.SectorNum}
			require.NoError(t, verifier.Verify(context.Background(), out, verifier.Options{Identity: &id}))
			id.SectorID++
			var ve *verifier.Error
			require.ErrorAs(t, verifier.Verify(context.Background(), out, verifier.Options{Identity: &id}), &ve)
			require.Equal(t, verifier.CheckReplicaID, ve.Check)
		})
	}
}
