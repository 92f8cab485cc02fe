package ceremony_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
)

// hFileChain is the chain length of the H file tests (domain 128).
const hFileChain = 40

// TestConvertHAndLoad converts a written monomial key, loads the H file
// back and proves with the key it makes: the proof bytes equal the
// monomial key's for the same randomness, and verify with the file's
// verifying key.
func TestConvertHAndLoad(t *testing.T) {
	ctx := context.Background()
	pk, c := smallKey(t, hFileChain)
	sys := groth16test.ChainSystem(hFileChain, 1, 2, 3)
	dir := t.TempDir()
	params, _, pf, _ := writeKey(t, dir, pk)
	counts := ceremony.CircuitCounts(c)

	_, _, err := ceremony.LoadHFile(ctx, params, pf.Digest, counts, "")
	require.ErrorIs(t, err, ceremony.ErrNoHFile)
	require.ErrorIs(t, err, fs.ErrNotExist)

	path, digest, err := ceremony.ConvertH(ctx, params, pf.Digest, sys, ceremony.ConvertOptions{})
	require.NoError(t, err)
	require.Equal(t, params+ceremony.HFileSuffix, path)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(136+96*(counts.Domain+counts.Aux+counts.Inputs)), st.Size(), "header, points, digest")

	hf, got, err := ceremony.LoadHFile(ctx, params, pf.Digest, counts, "")
	require.NoError(t, err)
	require.Equal(t, path, got)
	require.Equal(t, digest, hf.Digest)

	// The key from the source's vk, A, B (H and L left out) and the H file.
	f, err := groth16.OpenParams(params)
	require.NoError(t, err)
	defer f.Close()
	src, err := f.ProvingKeyWithout(ctx, groth16.SectionH, groth16.SectionL)
	require.NoError(t, err)
	require.Empty(t, src.H)
	require.Empty(t, src.L)
	conv, err := groth16.WithHFile(src, hf)
	require.NoError(t, err)
	require.Equal(t, groth16.HCosetLagrange, conv.HForm)

	w, err := groth16.SynthesizeSystem(sys)
	require.NoError(t, err)
	var rnd groth16.Randomness
	rnd.R.SetUint64(5)
	rnd.S.SetUint64(6)
	mono, err := groth16.NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	want, _, err := groth16.Prove(ctx, mono, w, rnd)
	require.NoError(t, err)
	key, err := groth16.NewCPUBackend().Load(ctx, conv)
	require.NoError(t, err)
	w2, err := groth16.SynthesizeSystem(sys)
	require.NoError(t, err)
	proof, _, err := groth16.Prove(ctx, key, w2, rnd)
	require.NoError(t, err)
	require.Equal(t, *want, *proof, "the H file's key proves another proof")
	require.NoError(t, groth16.Verify(&pk.VK, proof, w.Input[1:]))
}

// An H file of another source, of another circuit or damaged is refused
// with a clear error and never used; the state directory takes the file
// when the parameter folder does not.
func TestHFileRefusals(t *testing.T) {
	ctx := context.Background()
	pk, c := smallKey(t, hFileChain)
	sys := groth16test.ChainSystem(hFileChain, 1, 2, 3)
	dir := t.TempDir()
	params, _, pf, _ := writeKey(t, dir, pk)
	counts := ceremony.CircuitCounts(c)
	path, _, err := ceremony.ConvertH(ctx, params, pf.Digest, sys, ceremony.ConvertOptions{})
	require.NoError(t, err)
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	stale := func(err error, what string) {
		t.Helper()
		var he *ceremony.HFileError
		require.ErrorAs(t, err, &he, what)
		require.Equal(t, path, he.Path)
		require.ErrorIs(t, err, ceremony.ErrHFileStale, what)
		require.ErrorContains(t, err, "c2-params -convert-h", what)
	}
	// Another source digest (a changed or different .params file).
	_, _, err = ceremony.LoadHFile(ctx, params, "0123456789abcdef0123456789abcdef", counts, "")
	stale(err, "digest")
	require.ErrorContains(t, err, "converted from a source of digest "+pf.Digest)
	// Another circuit's counts.
	other := counts
	other.Aux++
	_, _, err = ceremony.LoadHFile(ctx, params, pf.Digest, other, "")
	stale(err, "counts")
	require.ErrorContains(t, err, "section l (aux) has")
	// The source file grown by a byte: its size no longer matches.
	require.NoError(t, os.WriteFile(params+".copy", append(must(os.ReadFile(params)), 0), 0o600))
	require.NoError(t, os.Rename(params+".copy", params))
	_, _, err = ceremony.LoadHFile(ctx, params, pf.Digest, counts, "")
	stale(err, "size")
	params, _, pf, _ = writeKey(t, dir, pk)

	// Damage: a flipped bit in a point, in the digest, a truncated file.
	for name, damage := range map[string]func([]byte) []byte{
		"point":     func(b []byte) []byte { b[200] ^= 1; return b },
		"digest":    func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-96] },
		"magic":     func(b []byte) []byte { b[0] = 'C'; return b },
	} {
		b := damage(append([]byte(nil), good...))
		require.NoError(t, os.WriteFile(path, b, 0o600))
		_, _, err := ceremony.LoadHFile(ctx, params, pf.Digest, counts, "")
		var he *ceremony.HFileError
		require.ErrorAs(t, err, &he, name)
		require.False(t, errors.Is(err, ceremony.ErrNoHFile), name)
		switch name {
		case "point", "digest":
			require.ErrorIs(t, err, groth16.ErrFileDigest, name)
		case "truncated":
			require.ErrorIs(t, err, groth16.ErrTruncated, name)
		case "magic":
			require.ErrorContains(t, err, "not an H file", name)
		}
	}

	// A folder that does not take the file: the state directory does,
	// and a damaged file beside the source does not hide the good one there.
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	state := filepath.Join(t.TempDir(), "state")
	got, _, err := ceremony.ConvertH(ctx, params, pf.Digest, sys, ceremony.ConvertOptions{StateDir: state})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(state, "key.params"+ceremony.HFileSuffix), got)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, good[:100], 0o600))
	hf, from, err := ceremony.LoadHFile(ctx, params, pf.Digest, counts, state)
	require.NoError(t, err)
	require.Equal(t, got, from)
	require.Len(t, hf.H, counts.Domain)

	// A key of another circuit is not converted (the counts).
	_, _, err = ceremony.ConvertH(ctx, params, pf.Digest, groth16test.ChainSystem(hFileChain+200, 1, 2, 3), ceremony.ConvertOptions{})
	require.ErrorIs(t, err, groth16.ErrShape)
	require.ErrorContains(t, err, "section h has 127 points, the circuit needs 511")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
