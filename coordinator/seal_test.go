package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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
