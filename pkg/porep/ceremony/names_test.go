package ceremony_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
)

func officialShapes(t *testing.T) []*porep.Shape {
	t.Helper()
	var out []*porep.Shape
	for _, s := range porep.Shapes() {
		if !s.Test {
			out = append(out, &s)
		}
	}
	require.Len(t, out, 5)
	return out
}

// TestNamesInParametersJSON derives every official shape's file names and
// finds them in the embedded parameters.json, whose entries are identified
// independently by the names' tree and hasher parts and the sector size:
// each PoRep entry is one shape's .params or .vk, and no entry is left over.
func TestNamesInParametersJSON(t *testing.T) {
	raw, err := os.ReadFile("parameters-porep-v28.json")
	require.NoError(t, err)
	var entries map[string]struct {
		CID        string `json:"cid"`
		Digest     string `json:"digest"`
		SectorSize uint64 `json:"sector_size"`
	}
	require.NoError(t, json.Unmarshal(raw, &entries))
	require.Len(t, entries, 10)

	used := map[string]bool{}
	for _, s := range officialShapes(t) {
		f, err := ceremony.ForShape(s)
		require.NoError(t, err, s.Name)
		require.Equal(t, s.Name, f.Shape)
		for _, file := range []ceremony.File{f.Params, f.VK} {
			e, ok := entries[file.Name]
			require.True(t, ok, "%s: %s is not in parameters.json", s.Name, file.Name)
			require.Equal(t, e.CID, file.CID)
			require.Equal(t, e.Digest, file.Digest)
			require.Equal(t, s.SectorSize(), e.SectorSize)
			require.Len(t, file.Digest, ceremony.DigestLen)
			used[file.Name] = true
		}
		require.Equal(t, strings.TrimSuffix(f.Params.Name, ".params"), strings.TrimSuffix(f.VK.Name, ".vk"))
	}
	require.Len(t, used, len(entries), "every PoRep entry belongs to a shape")

	// Identify each entry from its name alone and check it is the shape's.
	for name, e := range entries {
		n, err := ceremony.ParseName(name)
		require.NoError(t, err)
		require.Equal(t, ceremony.ParametersVersion, n.Version)
		var match []string
		for _, s := range officialShapes(t) {
			if s.Tree == n.Tree && s.SectorSize() == e.SectorSize {
				match = append(match, s.Name)
				want, err := ceremony.FileName(s, n.Ext)
				require.NoError(t, err)
				require.Equal(t, want, name)
			}
		}
		require.Len(t, match, 1, "%s identifies exactly one shape", name)
	}

	// The 32 GiB files, as Filecoin operators know them.
	s32, err := porep.ShapeByName("32GiB")
	require.NoError(t, err)
	name, err := ceremony.FileName(s32, ceremony.ExtParams)
	require.NoError(t, err)
	require.Equal(t, "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params", name)
	s64, err := porep.ShapeByName("64GiB")
	require.NoError(t, err)
	name, err = ceremony.FileName(s64, ceremony.ExtVK)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(name, "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-"), name)
}

func TestNoOfficialFilesForTestShapes(t *testing.T) {
	s, err := porep.ShapeByName("test-micro")
	require.NoError(t, err)
	_, err = ceremony.ForShape(s)
	require.ErrorIs(t, err, ceremony.ErrNoOfficialFiles)
	require.ErrorContains(t, err, "test-micro")
	_, err = ceremony.ForShape(nil)
	require.ErrorIs(t, err, ceremony.ErrNoOfficialFiles)
	s32, err := porep.ShapeByName("32GiB")
	require.NoError(t, err)
	_, err = ceremony.FileName(s32, "meta")
	require.ErrorContains(t, err, `extension "meta"`)
}

func TestParseName(t *testing.T) {
	n, err := ceremony.ParseName("v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-" + strings.Repeat("ab", 32) + ".vk")
	require.NoError(t, err)
	require.Equal(t, ceremony.Name{Version: 28, Tree: porep.TreeShape{Base: 8, Sub: 8, Top: 2}, Hash: strings.Repeat("ab", 32), Ext: "vk"}, n)
	for _, bad := range []string{
		"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0.params",
		"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-" + strings.Repeat("AB", 32) + ".params",
		"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-" + strings.Repeat("ab", 32) + ".meta",
		"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-99999999-0-0-sha256_hasher-" + strings.Repeat("ab", 32) + ".vk",
		"",
	} {
		_, err := ceremony.ParseName(bad)
		require.Error(t, err, bad)
	}
}

func FuzzParseName(f *testing.F) {
	f.Add("v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params")
	f.Add("v1-stacked-proof-of-replication-merkletree-poseidon_hasher-0-0-0-sha256_hasher-" + strings.Repeat("0", 64) + ".vk")
	f.Add("x")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ceremony.ParseName(s)
		if err != nil {
			return
		}
		require.True(t, strings.HasSuffix(s, "."+n.Ext))
		require.Contains(t, s, n.Hash)
	})
}

// TestLocate: the directory rule and the error for a missing file.
func TestLocate(t *testing.T) {
	t.Setenv(ceremony.EnvDir, "")
	require.Equal(t, "/var/tmp/filecoin-proof-parameters", ceremony.Dir())
	dir := t.TempDir()
	t.Setenv(ceremony.EnvDir, dir)
	require.Equal(t, dir, ceremony.Dir())

	s, err := porep.ShapeByName("32GiB")
	require.NoError(t, err)
	p, err := ceremony.PathsIn(dir, s)
	require.NoError(t, err)
	_, err = ceremony.Locate(dir, s)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var miss *ceremony.MissingError
	require.True(t, errors.As(err, &miss))
	require.Equal(t, p.VK, miss.Path)
	require.ErrorContains(t, err, p.VK)
	require.ErrorContains(t, err, "lotus fetch-params 32GiB")
	require.ErrorContains(t, err, "curio fetch-params 32GiB")
	require.ErrorContains(t, err, "FIL_PROOFS_PARAMETER_CACHE="+dir)

	require.NoError(t, os.WriteFile(p.VK, []byte("vk"), 0o644))
	_, err = ceremony.Locate(dir, s)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, filepath.Base(p.Params), "the .params file is named next")
	require.NoError(t, os.Mkdir(p.Params, 0o755))
	_, err = ceremony.Locate(dir, s)
	require.ErrorContains(t, err, "not a regular file")
	require.NoError(t, os.Remove(p.Params))
	require.NoError(t, os.WriteFile(p.Params, []byte("params"), 0o644))
	got, err := ceremony.Locate(dir, s)
	require.NoError(t, err)
	require.Equal(t, p, got)
}
