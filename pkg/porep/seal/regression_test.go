package seal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
)

// regressionRecord is one line of rust-fil-proofs'
// filecoin-proofs/tests/seal_regression_records-v16.json: a real proof made
// by rust-fil-proofs with Filecoin's official parameters, and everything
// verify_seal takes. testdata holds the StackedDrg2KiBV1_1 record and the
// StackedDrg32GiBV1_1 one, copied verbatim.
type regressionRecord struct {
	PoRepConfig struct {
		SectorSize  uint64   `json:"sector_size"`
		Partitions  int      `json:"partitions"`
		PoRepID     [32]byte `json:"porep_id"`
		APIVersion  string   `json:"api_version"`
		APIFeatures []string `json:"api_features"`
	} `json:"porep_config"`
	CommR    [32]byte `json:"comm_r"`
	CommD    [32]byte `json:"comm_d"`
	ProverID [32]byte `json:"prover_id"`
	SectorID uint64   `json:"sector_id"`
	Ticket   [32]byte `json:"ticket"`
	Seed     [32]byte `json:"seed"`
	Proof    []byte   `json:"proof"`
}

// UnmarshalJSON reads proof as an array of integers (serde's Vec<u8>).
func (r *regressionRecord) UnmarshalJSON(b []byte) error {
	type plain regressionRecord
	var aux struct {
		plain
		Proof []int `json:"proof"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aux); err != nil {
		return err
	}
	*r = regressionRecord(aux.plain)
	r.Proof = make([]byte, len(aux.Proof))
	for i, v := range aux.Proof {
		if v < 0 || v > 255 {
			return errors.New("proof byte out of range")
		}
		r.Proof[i] = byte(v)
	}
	return nil
}

func readRecord(t *testing.T, name string) (regressionRecord, *seal.Sector) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var r regressionRecord
	require.NoError(t, json.Unmarshal(b, &r))
	require.Equal(t, "V1_1_0", r.PoRepConfig.APIVersion)
	require.Empty(t, r.PoRepConfig.APIFeatures)
	// porep_id: the RegisteredSealProof number, u64 little-endian, then zeros.
	var id [32]byte
	id[0] = r.PoRepConfig.PoRepID[0]
	require.Equal(t, id, r.PoRepConfig.PoRepID)
	s, err := seal.ShapeOf(strconv.Itoa(int(id[0])))
	require.NoError(t, err)
	require.Equal(t, r.PoRepConfig.SectorSize, s.SectorSize())
	require.Equal(t, r.PoRepConfig.Partitions, s.Partitions)
	require.Equal(t, r.PoRepConfig.PoRepID, s.PoRepID())
	return r, &seal.Sector{Shape: s, CommR: r.CommR, CommD: r.CommD, ProverID: r.ProverID,
		SectorNumber: r.SectorID, Ticket: r.Ticket, Seed: r.Seed}
}

var regressionFiles = []string{"regression-2KiB-v1_1.json", "regression-32GiB-v1_1.json"}

// TestRegressionRecordsDecode checks what can be checked of the official
// records without the official verifying keys: the proofs are Partitions ×
// 192 bytes of valid points (which also shows the copy is intact), the
// commitments pass verify_seal's checks and every partition's public inputs
// compute.
func TestRegressionRecordsDecode(t *testing.T) {
	for _, name := range regressionFiles {
		t.Run(name, func(t *testing.T) {
			r, sec := readRecord(t, name)
			require.Len(t, r.Proof, sec.Shape.Partitions*groth16.ProofSize)
			proofs, err := groth16.SplitProofs(r.Proof)
			require.NoError(t, err)
			require.Len(t, proofs, sec.Shape.Partitions)
			st, err := sec.Statement()
			require.NoError(t, err)
			inputs, err := st.AllPublicInputs()
			require.NoError(t, err)
			require.Len(t, inputs, sec.Shape.Partitions)
			for _, in := range inputs {
				require.Len(t, in, seal.NumPublicInputs(sec.Shape))
			}
		})
	}
}

// TestRegressionRecordsVerify verifies the official records with the
// official verifying keys when they are in the parameter directory
// ($FIL_PROOFS_PARAMETER_CACHE, default /var/tmp/filecoin-proof-parameters):
// the proofs must verify and fail with a changed seed.
func TestRegressionRecordsVerify(t *testing.T) {
	dir := ceremony.Dir()
	for _, name := range regressionFiles {
		t.Run(name, func(t *testing.T) {
			r, sec := readRecord(t, name)
			vk, path, err := ceremony.LoadVerifyingKey(context.Background(), dir, sec.Shape)
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("skipped: the official %s verifying key is not present: %v", sec.Shape.Name, err)
			}
			require.NoError(t, err)
			pvk, err := groth16.PrepareVerifyingKey(vk)
			require.NoError(t, err)
			require.NoError(t, seal.Verify(pvk, sec, r.Proof), "official proof against %s", path)
			sec.Seed[0] ^= 1
			var inv *seal.InvalidProofError
			require.ErrorAs(t, seal.Verify(pvk, sec, r.Proof), &inv)
		})
	}
}
