package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

func TestRefusesOfficialShapesAndSkipsPresentParams(t *testing.T) {
	dir := t.TempDir()
	err := run(context.Background(), []string{"-dir", dir, "-shapes", "32GiB"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "official shape")
	err = run(context.Background(), []string{"-dir", dir, "-shapes", "nope"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "nope")

	// Present files are left alone (the setup itself is tested in
	// pkg/porep/circuit): two files that are not parameters stay as they are.
	for _, f := range []string{"test-micro.params", "test-micro.vk"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600))
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-dir", dir, "-shapes", "test-micro"}, &out, io.Discard))
	require.Contains(t, out.String(), "parameters present")
	b, err := os.ReadFile(filepath.Join(dir, "test-micro.params"))
	require.NoError(t, err)
	require.Equal(t, "x", string(b))
	_, err = groth16.ReadVerifyingKeyFile(filepath.Join(dir, "test-micro.vk"))
	require.Error(t, err)
}
