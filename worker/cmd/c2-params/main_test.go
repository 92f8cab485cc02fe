package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/worker/node"
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

// -check reads real parameters as a worker with trusted_params: false does:
// a file as written passes; the same file with one H point replaced by a
// point on the curve outside the subgroup (which only the subgroup check
// catches) fails, naming the problem, and nothing is rewritten.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, run(ctx, []string{"-dir", dir, "-shapes", "test-micro", "-backend", "cpu"}, io.Discard, io.Discard))
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"-check", "-dir", dir, "-shapes", "test-micro"}, &out, io.Discard))
	require.Contains(t, out.String(), "test-micro: "+filepath.Join(dir, "test-micro.params")+" checked in")

	// A point on y² = x³ + 4 whose order is not r: the smallest x with a square root.
	var p curve.G1Affine
	var rhs, four fp.Element
	four.SetUint64(4)
	for x := uint64(1); ; x++ {
		p.X.SetUint64(x)
		rhs.Square(&p.X).Mul(&rhs, &p.X).Add(&rhs, &four)
		if p.Y.Sqrt(&rhs) != nil {
			break
		}
	}
	require.True(t, p.IsOnCurve())
	require.False(t, p.IsInSubGroup())
	vk, err := groth16.ReadVerifyingKeyFile(filepath.Join(dir, "test-micro.vk"))
	require.NoError(t, err)
	// the .params layout: vk points, ic count and points, then h's count and points
	firstH := int64(3*96+3*192) + 4 + int64(len(vk.IC))*96 + 4
	path := filepath.Join(dir, "test-micro.params")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	raw := p.RawBytes()
	_, err = f.WriteAt(raw[:], firstH)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	err = run(ctx, []string{"-check", "-dir", dir, "-shapes", "test-micro"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, groth16.ErrNotInSubgroup)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "section h: point 0")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "-check writes nothing")
}

// -convert-h needs the parameters it converts: without them it names the
// command that makes them, and writes nothing. (The conversion itself is
// tested in pkg/groth16 and pkg/porep/ceremony: a test shape's domain
// takes the CPU DFT minutes.)
func TestConvertHNeedsParams(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := run(context.Background(), []string{"-convert-h", "-dir", dir, "-shapes", "test-micro", "-backend", "cpu"}, &out, io.Discard)
	require.ErrorContains(t, err, "make the parameters first: c2-params -dir "+dir+" -shapes test-micro")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}
