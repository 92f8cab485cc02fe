package ceremony_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/blake2b"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
)

// oracleDigest is the digest rule computed in one call of the reference
// BLAKE2b-512: the first 16 bytes of the sum, lowercase hex.
func oracleDigest(b []byte) string {
	sum := blake2b.Sum512(b)
	return hex.EncodeToString(sum[:16])
}

// TestDigest checks the streaming digest against known answers (RFC 7693's
// BLAKE2b-512 of "" and "abc", truncated) and against the one-call oracle
// over a generated file larger than the read buffer, with progress.
func TestDigest(t *testing.T) {
	ctx := context.Background()
	for in, want := range map[string]string{
		"":    "786a02f742015903c6c6fd852552d272",
		"abc": "ba80a53f981c4d0d6a2797b69f12f6e9",
	} {
		got, err := ceremony.Digest(ctx, bytes.NewReader([]byte(in)), "", int64(len(in)), nil)
		require.NoError(t, err)
		require.Equal(t, want, got, "%q", in)
		require.Equal(t, want, oracleDigest([]byte(in)))
	}

	data := make([]byte, 9<<20+12345)
	rand.NewChaCha8([32]byte{1}).Read(data)
	path := filepath.Join(t.TempDir(), "f.params")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	var mu sync.Mutex
	var calls []int64
	got, err := ceremony.FileDigest(ctx, path, func(stage string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, "ceremony: digest f.params", stage)
		require.Equal(t, int64(len(data)), total)
		calls = append(calls, done)
	})
	require.NoError(t, err)
	require.Equal(t, oracleDigest(data), got)
	require.Regexp(t, "^[0-9a-f]{32}$", got)
	require.Equal(t, int64(0), calls[0])
	require.Equal(t, int64(len(data)), calls[len(calls)-1])
	require.GreaterOrEqual(t, len(calls), 4, "progress per read")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ceremony.FileDigest(cctx, path, nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = ceremony.FileDigest(ctx, path+".missing", nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// smallKey is a real (seeded) Groth16 setup of a small circuit with every
// query non-trivial (groth16test's chain of n steps), and the circuit.
func smallKey(t *testing.T, n int) (*groth16.ProvingKey, *groth16.Circuit) {
	t.Helper()
	ctx := context.Background()
	sys := groth16test.ChainSystem(n, 1, 2, 3)
	pk, _, err := groth16.SetupR1CS(ctx, sys, groth16.SetupSeed([]byte("ceremony tests")))
	require.NoError(t, err)
	c, err := groth16.CircuitOf(ctx, sys)
	require.NoError(t, err)
	return pk, c
}

// writeKey writes pk's .params and .vk into dir and returns their paths and
// parameters.json-style entries (digests from the oracle).
func writeKey(t *testing.T, dir string, pk *groth16.ProvingKey) (params, vk string, pf, vf ceremony.File) {
	t.Helper()
	params, vk = filepath.Join(dir, "key.params"), filepath.Join(dir, "key.vk")
	require.NoError(t, groth16.WriteParamsFile(params, pk))
	require.NoError(t, groth16.WriteVerifyingKeyFile(vk, &pk.VK))
	for _, f := range []struct {
		path string
		dst  *ceremony.File
	}{{params, &pf}, {vk, &vf}} {
		b, err := os.ReadFile(f.path)
		require.NoError(t, err)
		*f.dst = ceremony.File{Name: filepath.Base(f.path), Digest: oracleDigest(b)}
	}
	return params, vk, pf, vf
}

func TestCheckAndMarker(t *testing.T) {
	ctx := context.Background()
	pk, _ := smallKey(t, 40)
	dir := t.TempDir()
	params, vk, pf, vf := writeKey(t, dir, pk)

	var digested int
	opts := ceremony.CheckOptions{Progress: func(stage string, done, total int64) {
		if stage == "ceremony: digest key.params" && done == 0 {
			digested++
		}
	}}

	// First check: digest and points, marker beside the file.
	res, err := ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.False(t, res.Reused)
	require.NoError(t, res.MarkerErr)
	require.Equal(t, params+ceremony.MarkerSuffix, res.MarkerPath)
	require.True(t, res.Marker.PointsChecked)
	require.Equal(t, pf.Digest, res.Marker.Digest)
	st, err := os.Stat(params)
	require.NoError(t, err)
	require.Equal(t, st.Size(), res.Marker.Size)
	require.Equal(t, st.ModTime().UnixNano(), res.Marker.ModTimeUnixNano)
	require.Equal(t, 1, digested)

	// Second: reused after a stat, the file not read.
	res, err = ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.True(t, res.Reused)
	require.Equal(t, 1, digested, "a reused marker reads nothing")

	// A touched file invalidates the marker.
	later := st.ModTime().Add(time.Hour)
	require.NoError(t, os.Chtimes(params, later, later))
	res, err = ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.False(t, res.Reused)
	require.Equal(t, 2, digested)
	require.Equal(t, later.UnixNano(), res.Marker.ModTimeUnixNano)
	res, err = ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.True(t, res.Reused)

	// A marker for another digest (parameters.json changed) is not reused.
	other := pf
	other.Digest = oracleDigest([]byte("other"))
	_, err = ceremony.Check(ctx, params, other, opts)
	var de *ceremony.DigestError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, ceremony.ErrDigestMismatch)
	require.Equal(t, other.Digest, de.Expected)
	require.Equal(t, pf.Digest, de.Actual)
	require.ErrorContains(t, err, params)
	require.ErrorContains(t, err, "digest "+pf.Digest+", parameters.json says "+other.Digest)

	// A garbled marker is ignored: the file is checked again.
	require.NoError(t, os.WriteFile(params+ceremony.MarkerSuffix, []byte(`{"format":1,"extra":true}`), 0o644))
	res, err = ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.False(t, res.Reused)

	// The verifying key: checked, marked, reused.
	res, err = ceremony.Check(ctx, vk, vf, ceremony.CheckOptions{})
	require.NoError(t, err)
	require.False(t, res.Reused)
	res, err = ceremony.Check(ctx, vk, vf, ceremony.CheckOptions{})
	require.NoError(t, err)
	require.True(t, res.Reused)

	_, err = ceremony.Check(ctx, filepath.Join(dir, "missing.params"), pf, opts)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = ceremony.Check(ctx, params, ceremony.File{Digest: "abc"}, opts)
	require.ErrorContains(t, err, "not 32 hex digits")
}

// TestCheckRefusesWrongFiles: a wrong digest and a bad point leave no
// marker behind.
func TestCheckRefusesWrongFiles(t *testing.T) {
	ctx := context.Background()
	pk, _ := smallKey(t, 40)
	dir := t.TempDir()
	params, vk, pf, _ := writeKey(t, dir, pk)

	// A different file of the same name and size.
	b, err := os.ReadFile(params)
	require.NoError(t, err)
	l, err := groth16.ParseParamsLayout(b)
	require.NoError(t, err)
	bad := bytes.Clone(b)
	bad[l.L.Offset+5] ^= 0x40 // a coordinate of l[0]: off the curve
	require.NoError(t, os.WriteFile(params, bad, 0o644))
	_, err = ceremony.Check(ctx, params, pf, ceremony.CheckOptions{})
	require.ErrorIs(t, err, ceremony.ErrDigestMismatch)
	require.NoFileExists(t, params+ceremony.MarkerSuffix)

	// The same file with its digest as expected: the point check refuses it.
	badFile := pf
	badFile.Digest = oracleDigest(bad)
	_, err = ceremony.Check(ctx, params, badFile, ceremony.CheckOptions{})
	var fe *groth16.FormatError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, groth16.SectionL, fe.Section)
	require.Equal(t, 0, fe.Index)
	require.NoFileExists(t, params+ceremony.MarkerSuffix)

	// A point outside the subgroup (on the curve): refused too.
	np := groth16test.NotInSubgroupG1(t, 3)
	raw := np.RawBytes()
	sub := bytes.Clone(b)
	copy(sub[l.A.Offset+96:], raw[:])
	require.NoError(t, os.WriteFile(params, sub, 0o644))
	subFile := pf
	subFile.Digest = oracleDigest(sub)
	_, err = ceremony.Check(ctx, params, subFile, ceremony.CheckOptions{})
	require.ErrorIs(t, err, groth16.ErrNotInSubgroup)
	require.ErrorAs(t, err, &fe)
	require.Equal(t, groth16.SectionA, fe.Section)
	require.Equal(t, 1, fe.Index)
	require.NoFileExists(t, params+ceremony.MarkerSuffix)

	// A verifying key with a bad point.
	vb, err := os.ReadFile(vk)
	require.NoError(t, err)
	vb[10] ^= 0x01
	require.NoError(t, os.WriteFile(vk, vb, 0o644))
	_, err = ceremony.Check(ctx, vk, ceremony.File{Digest: oracleDigest(vb)}, ceremony.CheckOptions{})
	require.ErrorAs(t, err, &fe)
	require.Equal(t, groth16.SectionVK, fe.Section)
}

// TestCheckMarkerInStateDir: when the marker cannot be written beside the
// file (here its name is taken by a directory, as a read-only parameter
// directory refuses it), it goes to the state directory and is found there.
func TestCheckMarkerInStateDir(t *testing.T) {
	ctx := context.Background()
	pk, _ := smallKey(t, 40)
	dir := t.TempDir()
	params, _, pf, _ := writeKey(t, dir, pk)
	require.NoError(t, os.Mkdir(params+ceremony.MarkerSuffix, 0o755))

	res, err := ceremony.Check(ctx, params, pf, ceremony.CheckOptions{})
	require.NoError(t, err, "the check passes without a marker")
	require.Empty(t, res.MarkerPath)
	require.ErrorContains(t, res.MarkerErr, "no checked marker written")

	state := filepath.Join(t.TempDir(), "state")
	opts := ceremony.CheckOptions{StateDir: state}
	res, err = ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.False(t, res.Reused)
	require.Equal(t, filepath.Join(state, "key.params"+ceremony.MarkerSuffix), res.MarkerPath)
	require.Equal(t, []string{params + ceremony.MarkerSuffix, res.MarkerPath}, ceremony.MarkerPaths(params, state))
	res, err = ceremony.Check(ctx, params, pf, opts)
	require.NoError(t, err)
	require.True(t, res.Reused)
	require.Equal(t, filepath.Join(state, "key.params"+ceremony.MarkerSuffix), res.MarkerPath)
}

// TestCheckCounts compares a written key's layout with its circuit's counts
// and refuses every mismatch with the section and both counts.
func TestCheckCounts(t *testing.T) {
	pk, c := smallKey(t, 40)
	dir := t.TempDir()
	params, _, _, _ := writeKey(t, dir, pk)
	counts := ceremony.CircuitCounts(c)
	require.NoError(t, ceremony.CheckParamsCounts(params, counts))
	require.Equal(t, 4, counts.Inputs, "one and three public inputs")

	f, err := groth16.OpenParams(params)
	require.NoError(t, err)
	l := f.Layout()
	require.NoError(t, f.Close())
	for _, tc := range []struct {
		change  func(*ceremony.Counts)
		section string
		params  int
		circuit int
	}{
		{func(c *ceremony.Counts) { c.Inputs++ }, groth16.SectionIC, l.IC.Count, l.IC.Count + 1},
		{func(c *ceremony.Counts) { c.Domain *= 2 }, "", 0, 0},
		{func(c *ceremony.Counts) { c.Aux-- }, groth16.SectionL, l.L.Count, l.L.Count - 1},
		{func(c *ceremony.Counts) { c.ADensityAux-- }, groth16.SectionA, l.A.Count, l.A.Count - 1},
		{func(c *ceremony.Counts) { c.BDensityAux-- }, groth16.SectionBG1, l.BG1.Count, l.BG1.Count - 1},
		{func(c *ceremony.Counts) { c.BDensityInput-- }, groth16.SectionBG1, l.BG1.Count, l.BG1.Count - 1},
	} {
		cc := counts
		tc.change(&cc)
		err := ceremony.CheckCounts(l, cc)
		require.Error(t, err)
		if tc.section == "" {
			require.ErrorContains(t, err, "not the smallest power of two")
			continue
		}
		var ce *ceremony.CountError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, tc.section, ce.Section)
		require.Equal(t, tc.params, ce.Params)
		require.Equal(t, tc.circuit, ce.Circuit)
		require.ErrorContains(t, err, "section "+tc.section)
	}

	// The parameters of a longer chain: another domain (h) or aux count (l).
	pk2, c2 := smallKey(t, 300)
	params2, _, _, _ := writeKey(t, t.TempDir(), pk2)
	err = ceremony.CheckParamsCounts(params2, counts)
	var ce *ceremony.CountError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, []string{groth16.SectionH, groth16.SectionL}, ce.Section)
	require.ErrorContains(t, err, params2)
	require.NoError(t, ceremony.CheckParamsCounts(params2, ceremony.CircuitCounts(c2)))

	// Counts that describe no circuit.
	for _, bad := range []ceremony.Counts{{}, {Inputs: 1, Domain: 3}, {Inputs: 1, Domain: 2, Aux: 1, ADensityAux: 2}, {Inputs: 5, Constraints: 10, Domain: 8}} {
		err := ceremony.CheckCounts(l, bad)
		require.ErrorContains(t, err, "circuit counts", "%+v", bad)
		require.False(t, errors.As(err, &ce))
	}
}

// cpuChecker is a SubgroupChecker on the CPU that counts the points it is
// given, standing in for a device checker.
type cpuChecker struct{ g1, g2 int }

func (c *cpuChecker) FirstNotInSubgroupG1(pts []curve.G1Affine) (int, error) {
	c.g1 += len(pts)
	for i := range pts {
		if !pts[i].IsInSubGroup() {
			return i, nil
		}
	}
	return -1, nil
}

func (c *cpuChecker) FirstNotInSubgroupG2(pts []curve.G2Affine) (int, error) {
	c.g2 += len(pts)
	for i := range pts {
		if !pts[i].IsInSubGroup() {
			return i, nil
		}
	}
	return -1, nil
}

// TestCheckWithSubgroupChecker: the point check hands every proving-key
// point to an external checker and reports the one it finds.
func TestCheckWithSubgroupChecker(t *testing.T) {
	ctx := context.Background()
	pk, _ := smallKey(t, 40)
	dir := t.TempDir()
	params, _, pf, _ := writeKey(t, dir, pk)
	chk := &cpuChecker{}
	res, err := ceremony.Check(ctx, params, pf, ceremony.CheckOptions{Subgroup: chk, Workers: 2})
	require.NoError(t, err)
	require.True(t, res.Marker.PointsChecked)
	require.Equal(t, len(pk.H)+len(pk.L)+len(pk.A)+len(pk.BG1), chk.g1)
	require.Equal(t, len(pk.BG2), chk.g2)

	b, err := os.ReadFile(params)
	require.NoError(t, err)
	l, err := groth16.ParseParamsLayout(b)
	require.NoError(t, err)
	np := groth16test.NotInSubgroupG2(t, 5)
	raw := np.RawBytes()
	copy(b[l.BG2.Offset+2*192:], raw[:])
	require.NoError(t, os.WriteFile(params, b, 0o644))
	bad := pf
	bad.Digest = oracleDigest(b)
	_, err = ceremony.Check(ctx, params, bad, ceremony.CheckOptions{Subgroup: &cpuChecker{}})
	var fe *groth16.FormatError
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, groth16.ErrNotInSubgroup)
	require.Equal(t, groth16.SectionBG2, fe.Section)
	require.Equal(t, 2, fe.Index)
}
