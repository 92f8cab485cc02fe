package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

// TestSealWritesVerifiableC1 runs the seal subcommand (a real seal and a
// sparse benchmark input) and checks the files with the native vanilla-proof
// verifier, the independent oracle.
func TestSealWritesVerifiableC1(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"sealed", []string{"-shape", "test-tiny", "-seed", "7"}, "sealed sector"},
		{"sparse", []string{"-shape", "test-mini", "-seed", "7", "-sparse"}, "BENCHMARK INPUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c1.json")
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"seal", "-out", path}, tc.args...), &out, &errb)
			require.Equal(t, 0, code, errb.String())
			require.Contains(t, out.String(), tc.want)
			require.NotEmpty(t, errb.String(), "progress lines on stderr")
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			doc, err := c1.Parse(f, c1.ParseOptions{})
			require.NoError(t, err)
			require.NoError(t, verifier.Verify(context.Background(), doc, verifier.Options{}))
		})
	}
}

// TestSealRejectsBadFlags: bad input is a clear error and writes nothing.
func TestSealRejectsBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-shape", "no-such-shape"}, `unknown shape "no-such-shape"`},
		{[]string{"-shape", "2KiB", "-sparse", "-data", "x"}, "exclude each other"},
		{[]string{"-shape", "test-tiny", "-data", filepath.Join(dir, "missing")}, "no such file"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"seal", "-out", filepath.Join(dir, "c1.json")}, tc.args...), &out, &errb)
		require.Equal(t, 1, code)
		require.Contains(t, errb.String(), tc.want)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a failed seal leaves no file behind")
}

// TestSealAsMinerSector: -miner and -sector make the replica id the one
// Filecoin derives for that sector (porep.ReplicaID, checked against Lotus's
// C1 outputs in pkg/porep/c1), and are refused with -sparse or when malformed.
func TestSealAsMinerSector(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c1.json")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"seal", "-out", path, "-shape", "test-tiny", "-miner", "t01000", "-sector", "42"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc, err := c1.ParseBytes(b)
	require.NoError(t, err)
	require.Equal(t, porep.ReplicaID(porep.ProverID(1000), 42, doc.Ticket, doc.CommD, doc.Shape.PoRepID()), doc.ReplicaID)
	require.NotEqual(t, porep.ReplicaID(porep.ProverID(1000), 43, doc.Ticket, doc.CommD, doc.Shape.PoRepID()), doc.ReplicaID)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-shape", "test-tiny", "-miner", "f3abc"}, "-miner"},
		{[]string{"-shape", "test-tiny", "-sector", "-1"}, `-sector "-1" is not a sector number`},
		{[]string{"-shape", "test-tiny", "-sparse", "-sector", "1"}, "not -sparse"},
	} {
		out.Reset()
		errb.Reset()
		p := filepath.Join(dir, "bad.json")
		code := run(context.Background(), append([]string{"seal", "-out", p}, tc.args...), &out, &errb)
		require.Equal(t, 2, code, errb.String())
		require.Contains(t, errb.String(), tc.want)
		require.NoFileExists(t, p)
	}
}
