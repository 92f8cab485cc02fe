package ceremony_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
)

// TestOfficialFiles checks the official files present in the parameter
// directory ($FIL_PROOFS_PARAMETER_CACHE, default
// /var/tmp/filecoin-proof-parameters); shapes whose files are absent are
// skipped. Every present verifying key must match parameters.json and take
// the shape's public inputs; every present .params file must announce that
// verifying key's ic. The 2 KiB parameters (small) are checked in full,
// marker included (in a temporary state directory when the parameter
// directory is read-only).
func TestOfficialFiles(t *testing.T) {
	dir := ceremony.Dir()
	for _, s := range officialShapes(t) {
		t.Run(s.Name, func(t *testing.T) {
			p, err := ceremony.Locate(dir, s)
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("skipped: %v", err)
			}
			require.NoError(t, err)
			vk, _, err := ceremony.LoadVerifyingKey(context.Background(), dir, s)
			require.NoError(t, err)
			require.Len(t, vk.IC, seal.NumPublicInputs(s)+1)
			f, err := groth16.OpenParams(p.Params)
			require.NoError(t, err)
			defer f.Close()
			require.Equal(t, len(vk.IC), f.Layout().IC.Count)
			if s.Name != "2KiB" {
				return
			}
			res, err := ceremony.CheckShape(context.Background(), dir, s, ceremony.CheckOptions{StateDir: t.TempDir()})
			require.NoError(t, err)
			require.True(t, res.Params.Marker.PointsChecked)
		})
	}
}
