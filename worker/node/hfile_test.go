package node_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/worker/node"
)

// The worker's choice of H form for a test shape's parameters: auto
// proves with the monomial key when no H file is there or the one there is
// stale or damaged (logged, never used), and with the H file's key when
// it is valid; coset-lagrange refuses to start without a valid one,
// naming the command that makes it; monomial never reads one. (The H
// file's key proving the monomial key's proofs is tested in
// pkg/porep/ceremony; here the H file's points are a stand-in of the
// right shape, bound to the real file.)
func TestLoadShapeParamsHForm(t *testing.T) {
	pk := params(t)
	ctx := context.Background()
	dir := t.TempDir()
	src := circuit.ParamsPath(dir, testShape)
	b, err := os.ReadFile(circuit.ParamsPath(paramsDir, testShape))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(src, b, 0o600))
	hPath := src + ceremony.HFileSuffix

	load := func(form string) (string, error) {
		var logs bytes.Buffer
		_, err := node.LoadShapeParamsHForm(ctx, testShape, dir, true, nil, slog.New(slog.NewTextHandler(&logs, nil)), form)
		return logs.String(), err
	}
	logs, err := load(node.HFormAuto)
	require.NoError(t, err)
	require.Contains(t, logs, "no H file")
	require.Contains(t, logs, "h_form=monomial")
	_, err = load("coset-lagrange")
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "c2-params -convert-h -shapes "+testShape)
	_, err = load("lagrange")
	require.ErrorContains(t, err, `"lagrange" is not auto, monomial or coset-lagrange`)

	// A damaged H file.
	require.NoError(t, os.WriteFile(hPath, []byte("not an H file"), 0o600))
	logs, err = load(node.HFormAuto)
	require.NoError(t, err)
	require.Contains(t, logs, "H file not used")
	require.Contains(t, logs, "h_form=monomial")
	_, err = load("coset-lagrange")
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, hPath)

	// An H file of the right shape for another source digest (stale), then
	// for this file's.
	lagr := *pk
	lagr.HForm = groth16.HCosetLagrange
	lagr.H = append(slices.Clip(pk.H), pk.H[0])
	lagr.LInput = slices.Clone(pk.VK.IC)
	_, err = groth16.WriteHFile(hPath, &lagr, int64(len(b)), "0123456789abcdef0123456789abcdef")
	require.NoError(t, err)
	logs, err = load(node.HFormAuto)
	require.NoError(t, err)
	require.Contains(t, logs, "not of this parameter file")
	require.Contains(t, logs, "h_form=monomial")

	digest, err := ceremony.FileDigest(ctx, src, nil)
	require.NoError(t, err)
	_, err = groth16.WriteHFile(hPath, &lagr, int64(len(b)), digest)
	require.NoError(t, err)
	for _, form := range []string{node.HFormAuto, "coset-lagrange"} {
		logs, err = load(form)
		require.NoError(t, err, form)
		require.Contains(t, logs, "H file loaded", form)
		require.Contains(t, logs, "h_form=coset-lagrange", form)
	}
	logs, err = load("monomial")
	require.NoError(t, err)
	require.Contains(t, logs, "h_form=monomial")
	require.NotContains(t, logs, "H file")
	require.Equal(t, filepath.Dir(hPath), dir)
}
