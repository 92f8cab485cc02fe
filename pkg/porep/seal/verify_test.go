package seal_test

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
)

// proofShape is the smallest shape with several partitions: its setup and
// CPU proofs take seconds.
const proofShape = "test-micro"

// proved is a sector of proofShape sealed, proven by the existing system
// (circuit synthesis and the CPU prover) with fixed randomness, and the
// verifying key of its parameters.
type proved struct {
	vk     *groth16.PreparedVerifyingKey
	pk     *groth16.ProvingKey
	sector seal.Sector
	proof  []byte
	out    *c1.Output
}

var paramsDir string

func TestMain(m *testing.M) {
	var err error
	if paramsDir, err = os.MkdirTemp("", "c2-seal-params-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(paramsDir)
	os.Exit(code)
}

var (
	provedOnce sync.Once
	provedFix  *proved
	provedErr  error
)

func provedSector(t *testing.T) *proved {
	t.Helper()
	provedOnce.Do(func() {
		provedFix, provedErr = prove(t, paramsDir)
	})
	require.NoError(t, provedErr)
	return provedFix
}

func prove(t *testing.T, dir string) (*proved, error) {
	ctx := context.Background()
	pk := poreptest.Params(t, dir, proofShape, "seal tests")
	var buf bytes.Buffer
	res, err := sealer.WriteRandomC1(ctx, sealer.RandomC1Config{Shape: proofShape, Seed: 11}, &buf)
	if err != nil {
		return nil, err
	}
	out, err := c1.ParseBytes(buf.Bytes())
	if err != nil {
		return nil, err
	}
	comp, err := circuit.ForShape(out.Shape)
	if err != nil {
		return nil, err
	}
	key, err := groth16.NewCPUBackend().Load(ctx, pk)
	if err != nil {
		return nil, err
	}
	defer key.Close()
	proofs := make([]*groth16.Proof, out.Shape.Partitions)
	for k := range proofs {
		w, err := comp.Synthesize(ctx, out, k)
		if err != nil {
			return nil, err
		}
		var rnd groth16.Randomness
		rnd.R.SetUint64(uint64(1000 + k))
		rnd.S.SetUint64(uint64(2000 + k))
		if proofs[k], _, err = groth16.Prove(ctx, key, w, rnd); err != nil {
			return nil, err
		}
	}
	proof, err := groth16.JoinProofs(proofs)
	if err != nil {
		return nil, err
	}
	vk, err := groth16.PrepareVerifyingKey(&pk.VK)
	if err != nil {
		return nil, err
	}
	return &proved{vk: vk, pk: pk, proof: proof, out: out, sector: seal.Sector{
		Shape: out.Shape, CommR: out.CommR, CommD: out.CommD, ProverID: res.Identity.ProverID,
		SectorNumber: res.Identity.SectorID, Ticket: res.Identity.Ticket, Seed: out.Seed,
	}}, nil
}

// TestVerifyProof: a proof the system made verifies, and the statement
// Verify derives from the sector's chain values is the C1 output's: the
// replica id the sealer used, and the public inputs the prover proved.
func TestVerifyProof(t *testing.T) {
	p := provedSector(t)
	require.NoError(t, seal.Verify(p.vk, &p.sector, p.proof))

	st, err := p.sector.Statement()
	require.NoError(t, err)
	require.Equal(t, p.out.ReplicaID, st.ReplicaID, "replica id from prover id, sector number, ticket, comm_d, porep id")
	fromC1, err := seal.StatementOf(p.out)
	require.NoError(t, err)
	require.Equal(t, fromC1, st)
	for k := 0; k < p.out.Shape.Partitions; k++ {
		in, err := st.PublicInputs(k)
		require.NoError(t, err)
		require.Len(t, in, seal.NumPublicInputs(p.out.Shape))
		legacy, err := circuit.PublicInputs(p.out, k)
		require.NoError(t, err)
		require.Equal(t, in, legacy, "the circuit package forwards to seal")
	}
}

// TestVerifyRejects: every change of the proof or of the sector's values
// fails with an error that says what is wrong.
func TestVerifyRejects(t *testing.T) {
	p := provedSector(t)
	parts := p.out.Shape.Partitions

	t.Run("flipped byte", func(t *testing.T) {
		// The sort flag of partition 1's A: a valid point, −A.
		bad := bytes.Clone(p.proof)
		bad[groth16.ProofSize] ^= 0x20
		err := seal.Verify(p.vk, &p.sector, bad)
		var inv *seal.InvalidProofError
		require.ErrorAs(t, err, &inv)
		require.Equal(t, []int{1}, inv.Failed)
		require.ErrorIs(t, err, groth16.ErrInvalidProof)
		require.ErrorContains(t, err, "partition(s) [1] of 2 fail")
		// A bit of partition 1's C: no point (the proof's randomness is
		// fixed, so this is always the same x).
		bad = bytes.Clone(p.proof)
		bad[2*groth16.ProofSize-1] ^= 0x01
		err = seal.Verify(p.vk, &p.sector, bad)
		require.ErrorIs(t, err, seal.ErrMalformedProof)
		require.ErrorContains(t, err, "partition proof 1")
		require.ErrorContains(t, err, "C: point not on curve")
	})
	t.Run("swapped partitions", func(t *testing.T) {
		bad := bytes.Clone(p.proof)
		copy(bad[groth16.ProofSize:], p.proof[:groth16.ProofSize])
		err := seal.Verify(p.vk, &p.sector, bad)
		var inv *seal.InvalidProofError
		require.ErrorAs(t, err, &inv)
		require.Equal(t, []int{1}, inv.Failed)
		require.ErrorContains(t, err, "partition(s) [1] of 2 fail")
	})
	for _, tc := range []struct {
		name   string
		change func(*seal.Sector)
	}{
		{"wrong seed", func(s *seal.Sector) { s.Seed[0] ^= 1 }},
		{"wrong sector number", func(s *seal.Sector) { s.SectorNumber++ }},
		{"wrong ticket", func(s *seal.Sector) { s.Ticket[5] ^= 0x10 }},
		{"wrong prover id", func(s *seal.Sector) { s.ProverID = seal.ProverID(1000) }},
		{"wrong comm_r", func(s *seal.Sector) { s.CommR[0] ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec := p.sector
			tc.change(&sec)
			err := seal.Verify(p.vk, &sec, p.proof)
			var inv *seal.InvalidProofError
			require.ErrorAs(t, err, &inv)
			require.NotEmpty(t, inv.Failed)
			require.ErrorContains(t, err, "proof does not verify")
			require.ErrorContains(t, err, "seed")
			t.Log(err)
		})
	}
	for _, tc := range []struct {
		name   string
		change func(*seal.Sector, *[]byte)
		is     error
		msg    string
	}{
		{"empty proof", func(_ *seal.Sector, b *[]byte) { *b = nil }, seal.ErrMalformedProof, "empty proof"},
		{"short proof", func(_ *seal.Sector, b *[]byte) { *b = (*b)[:groth16.ProofSize] }, seal.ErrMalformedProof,
			"192 bytes, a test-micro proof has 2 partitions × 192 bytes = 384"},
		{"long proof", func(_ *seal.Sector, b *[]byte) { *b = append(bytes.Clone(*b), 0) }, seal.ErrMalformedProof, "385 bytes"},
		{"zero comm_d", func(s *seal.Sector, _ *[]byte) { s.CommD = porep.Domain{} }, seal.ErrInvalidInput, "all-zero commitment (comm_d)"},
		{"zero comm_r", func(s *seal.Sector, _ *[]byte) { s.CommR = porep.Domain{} }, seal.ErrInvalidInput, "all-zero commitment (comm_r)"},
		{"non-canonical comm_r", func(s *seal.Sector, _ *[]byte) {
			s.CommR = porep.Domain{}
			for i := range s.CommR {
				s.CommR[i] = 0xff
			}
		}, seal.ErrInvalidInput, "invalid commitment (comm_r)"},
		{"no shape", func(s *seal.Sector, _ *[]byte) { s.Shape = nil }, seal.ErrInvalidInput, "no registered proof"},
		{"other shape", func(s *seal.Sector, _ *[]byte) { s.Shape, _ = porep.ShapeByName("test-tiny") },
			seal.ErrWrongKey, "a test-tiny partition has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec, proof := p.sector, p.proof
			tc.change(&sec, &proof)
			err := seal.Verify(p.vk, &sec, proof)
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	require.Equal(t, 2, parts)
	require.ErrorIs(t, seal.Verify(nil, &p.sector, p.proof), seal.ErrWrongKey)
}

// TestPublicInputsLayout checks the input layout against the graph and the
// challenges directly: tree-D index, the 14 (here 3) parents' indexes in
// graph order, the challenge, the tree-R_last and tree-C indexes.
func TestPublicInputsLayout(t *testing.T) {
	s, err := porep.ShapeByName("test-tiny")
	require.NoError(t, err)
	st := seal.Statement{Shape: s, ReplicaID: porep.Domain{1}, CommD: porep.Domain{2}, CommR: porep.Domain{3}, Seed: porep.Domain{4}}
	for k := 0; k < s.Partitions; k++ {
		in, err := st.PublicInputs(k)
		require.NoError(t, err)
		require.Len(t, in, 3+s.ChallengesPerPartition*(s.BaseDegree+s.ExpDegree+4))
		require.Equal(t, uint64(1), in[0].Uint64())
		require.Equal(t, uint64(2), in[1].Uint64())
		require.Equal(t, uint64(3), in[2].Uint64())
		chal := porep.Challenges(s, st.ReplicaID, st.Seed, k)
		per := seal.InputsPerChallenge(s)
		for j, c := range chal {
			blk := in[3+j*per : 3+(j+1)*per]
			require.Equal(t, c, blk[0].Uint64(), "tree D index")
			require.Equal(t, c, blk[per-3].Uint64(), "challenge")
			require.Equal(t, c, blk[per-2].Uint64(), "tree R_last index")
			require.Equal(t, c, blk[per-1].Uint64(), "tree C index")
		}
	}
	_, err = st.PublicInputs(s.Partitions)
	require.ErrorIs(t, err, seal.ErrInvalidInput)
	require.ErrorContains(t, err, "partition 2 outside 0..1")
	_, err = seal.Statement{}.PublicInputs(0)
	require.ErrorIs(t, err, seal.ErrInvalidInput)
}

// TestShapeOf resolves registered proofs by name, number and shape name.
func TestShapeOf(t *testing.T) {
	for in, want := range map[string]string{
		"StackedDrg32GiBV1_1": "32GiB", "8": "32GiB", "5": "2KiB", "64GiB": "64GiB", "test-micro": "test-micro",
		"StackedDrg2KiBV1_1": "2KiB",
	} {
		s, err := seal.ShapeOf(in)
		require.NoError(t, err, in)
		require.Equal(t, want, s.Name, in)
	}
	for _, in := range []string{"StackedDrg32GiBV1", "0", "4", "", "32G"} {
		_, err := seal.ShapeOf(in)
		require.ErrorIs(t, err, porep.ErrUnknownShape, in)
		require.ErrorContains(t, err, "StackedDrg32GiBV1_1 (8)")
	}
}
