package c1_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/c1/c1test"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
)

// TestLotusEnvelopes: the Commit2In envelopes Lotus wrote for real 2 KiB
// and 8 MiB sectors are detected and decoded; the C1 inside parses, and
// the sector size is the C1's.
func TestLotusEnvelopes(t *testing.T) {
	for _, tc := range []struct {
		name string
		size uint64
	}{{"2KiB.json", 2048}, {"8MiB.json", 8 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			raw := c1test.LotusFile(t, tc.name)
			require.True(t, c1.IsCommit2In(raw))
			env, err := c1.ParseCommit2In(raw)
			require.NoError(t, err)
			require.Equal(t, tc.size, env.SectorSize)
			require.Equal(t, uint64(0), env.SectorNum)
			require.Equal(t, "f01001", env.Miner)
			require.False(t, c1.IsCommit2In(env.Phase1Out), "the C1 inside is not an envelope")
			out, err := c1.ParseBytes(env.Phase1Out)
			require.NoError(t, err)
			require.NoError(t, env.CheckSectorSize(out))
			// The miner and sector number Lotus wrote are the ones the
			// replica id was derived from (verify_seal's derivation).
			miner, err := seal.ParseMinerID(env.Miner)
			require.NoError(t, err)
			want := porep.ReplicaID(porep.ProverID(miner), env.SectorNum, out.Ticket, out.CommD, out.Shape.PoRepID())
			require.Equal(t, out.ReplicaID, want)
			require.NotEqual(t, out.ReplicaID, porep.ReplicaID(porep.ProverID(miner+1), env.SectorNum, out.Ticket, out.CommD, out.Shape.PoRepID()))
			env.SectorSize *= 2
			require.ErrorContains(t, env.CheckSectorSize(out), "SectorSize: Commit2In envelope")
		})
	}
}

func TestCommit2InErrorsNameTheField(t *testing.T) {
	doc := base64.StdEncoding.EncodeToString([]byte(`{"registered_proof":"x"}`))
	for _, tc := range []struct {
		in, want string
	}{
		{`{"SectorNum":1,"SectorSize":2048}`, "Phase1Out: Commit2In envelope: missing"},
		{`{"Phase1Out":"` + doc + `","SectorSize":2048}`, "SectorNum: Commit2In envelope: missing"},
		{`{"SectorNum":1,"Phase1Out":"` + doc + `"}`, "SectorSize: Commit2In envelope: missing"},
		{`{"SectorNum":1,"Phase1Out":"!!!","SectorSize":2048}`, "Phase1Out"},
		{`{"SectorNum":1,"Phase1Out":"","SectorSize":2048}`, "Phase1Out: Commit2In envelope: empty"},
		{`{"SectorNum":-1,"Phase1Out":"` + doc + `","SectorSize":2048}`, "SectorNum"},
		{`{"SectorNum":1,"Phase1Out":"` + doc + `","SectorSize":2048,"Extra":1}`, `unknown field "Extra"`},
		{`{"SectorNum":1,"Phase1Out":"` + doc + `","SectorSize":2048} {}`, "trailing data"},
		{`{"SectorNum":1,"Phase1Out":"` + doc + `","SectorSize":"2KiB"}`, "SectorSize"},
	} {
		_, err := c1.ParseCommit2In([]byte(tc.in))
		require.ErrorContains(t, err, tc.want, tc.in)
		var fe *c1.FormatError
		require.ErrorAs(t, err, &fe, tc.in)
	}
	for _, s := range []string{"", "[]", `"x"`, `{"registered_proof":"StackedDrg2KiBV1_1"}`, "{"} {
		require.False(t, c1.IsCommit2In([]byte(s)), s)
	}
	require.True(t, c1.IsCommit2In([]byte(`{"SectorSize":2048}`)))
}

// FuzzParseCommit2In: any input either decodes to an envelope whose
// fields round-trip through Lotus's JSON form, or is a *FormatError; never
// a panic.
func FuzzParseCommit2In(f *testing.F) {
	f.Add([]byte(`{"SectorNum":7,"Phase1Out":"eyJhIjoxfQ==","SectorSize":2048,"Miner":"f01001"}`))
	f.Add([]byte(`{"SectorNum":7,"Phase1Out":"!","SectorSize":2048}`))
	f.Add([]byte(`{"SectorSize":1e3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := c1.ParseCommit2In(data)
		if err != nil {
			var fe *c1.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: %v is not a *c1.FormatError", data, err)
			}
			return
		}
		again, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c1.ParseCommit2In(again)
		if err != nil || back.SectorNum != env.SectorNum || back.SectorSize != env.SectorSize || string(back.Phase1Out) != string(env.Phase1Out) {
			t.Fatalf("round trip of %s: %v %+v", again, err, back)
		}
	})
}
