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

	// With a circuit fingerprint beside them that is not the circuit's,
	// they are made again: the run gets as far as choosing the fixed-base
	// backend (here one that fails at once, naming its library).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test-micro.circuit"), []byte("0123 test-micro\n"), 0o600))
	out.Reset()
	missing := filepath.Join(t.TempDir(), "absent.so")
	err = run(context.Background(), []string{"-dir", dir, "-shapes", "test-micro", "-backend", "cuda", "-cuda-library", missing}, &out, io.Discard)
	require.ErrorContains(t, err, "absent.so")
	require.Contains(t, out.String(), "parameters were made for another circuit")
}

// The fixed-base backend is chosen only when some shape needs parameters;
// "cuda" without a usable library is then an error naming it, "cpu" never
// looks for one, and an unknown mode is refused.
func TestBackendSelection(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(t.TempDir(), "absent.so")
	for _, f := range []string{"test-micro.params", "test-micro.vk"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600))
	}
	require.NoError(t, run(context.Background(), []string{"-dir", dir, "-shapes", "test-micro", "-backend", "cuda",
		"-cuda-library", missing}, io.Discard, io.Discard))

	empty := t.TempDir()
	err := run(context.Background(), []string{"-dir", empty, "-shapes", "test-micro", "-backend", "cuda",
		"-cuda-library", missing}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "absent.so")
	err = run(context.Background(), []string{"-dir", empty, "-shapes", "test-micro", "-backend", "gpu"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, `"gpu"`)
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	require.Empty(t, entries, "a refused run writes nothing")
}
