package singlenode

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
)

// TestEnsureParamsChecksTheCircuitFingerprint: cached parameters are used
// only with the compiled circuit's fingerprint beside them; without one, or
// with another circuit's, they are made again (here stopped by a cancelled
// context right after that decision), and what Setup writes is then found
// cached.
func TestEnsureParamsChecksTheCircuitFingerprint(t *testing.T) {
	const shape = "test-micro"
	dir := t.TempDir()
	var out bytes.Buffer
	r := &runner{cfg: Config{Shape: shape}, out: &out, start: time.Now()}
	pp, vp, fp := circuit.ParamsPath(dir, shape), circuit.VKPath(dir, shape), circuit.FingerprintPath(dir, shape)
	for _, f := range []string{pp, vp} {
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o600))
	}
	// The circuit's R1CS hash (the fingerprint) is computed once per
	// process; here before the cancelled calls, which stop at the setup.
	s, err := porep.ShapeByName(shape)
	require.NoError(t, err)
	c, err := circuit.ForShape(s)
	require.NoError(t, err)
	_, err = c.Hash(context.Background(), nil)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	require.ErrorIs(t, r.ensureParams(cancelled, dir, &out), context.Canceled)
	require.Contains(t, out.String(), "not used: no circuit fingerprint")

	out.Reset()
	require.NoError(t, os.WriteFile(fp, []byte("0123 "+shape+"\n"), 0o600))
	require.ErrorIs(t, r.ensureParams(cancelled, dir, &out), context.Canceled)
	require.Contains(t, out.String(), "parameters were made for another circuit")
	_, err = os.Stat(fp)
	require.ErrorIs(t, err, os.ErrNotExist, "the stale fingerprint is removed before the setup")

	out.Reset()
	require.NoError(t, r.ensureParams(context.Background(), dir, &out))
	require.Contains(t, out.String(), "parameters written")
	out.Reset()
	require.NoError(t, r.ensureParams(context.Background(), dir, &out))
	require.Contains(t, out.String(), "cached in "+dir)
	m, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.ElementsMatch(t, []string{pp, vp, fp}, m)
}
