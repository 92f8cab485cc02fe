package ceremony

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// ParametersVersion is the parameter set version of the official files
// (storage-proofs-core parameter_cache VERSION): the "v28-" of their names.
const ParametersVersion = 28

// Extensions of the two files of a parameter set.
const (
	ExtParams = "params"
	ExtVK     = "vk"
)

// parametersJSON is the PoRep subset of rust-fil-proofs' parameters.json
// (filecoin-project/rust-fil-proofs, parameters.json at commit
// f4c584ae2c85c74f05b6fbd1c1f6571a2f7d12a0; filecoin-proofs/parameters.json
// links to it): its ten "v28-stacked-proof-of-replication-…" entries, copied
// verbatim. The PoSt and empty-sector-update entries are left out.
//
//go:embed parameters-porep-v28.json
var parametersJSON []byte

// cacheHashes are the hex SHA-256 parts of the official names: rust-fil-
// proofs' cache identifier hashes the public parameters' identifier string;
// the names are published in parameters.json, and the test checks that every
// name derived here is there, of the shape's sector size and tree.
var cacheHashes = map[string]string{
	"2KiB":   "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f",
	"8MiB":   "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb",
	"512MiB": "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472",
	"32GiB":  "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
	"64GiB":  "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
}

// File is one official file: its name in the parameter directory and its
// parameters.json entry.
type File struct {
	// Name is the file name, e.g. "v28-stacked-proof-of-replication-
	// merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a3….params".
	Name string
	// CID is the IPFS CID the fetch tools download it by.
	CID string
	// Digest is the expected digest (see Digest): 32 lowercase hex digits.
	Digest string
	// SectorSize is the sector size in bytes the entry is for.
	SectorSize uint64
}

// Files are the two official files of a shape.
type Files struct {
	// Shape is the shape's registry name ("32GiB").
	Shape  string
	Params File
	VK     File
}

// ErrNoOfficialFiles: the shape has no official parameters (test shapes
// exist only in c2cluster).
var ErrNoOfficialFiles = errors.New("ceremony: no official parameter files")

type entry struct {
	CID        string `json:"cid"`
	Digest     string `json:"digest"`
	SectorSize uint64 `json:"sector_size"`
}

var entries = func() map[string]entry {
	var m map[string]entry
	if err := json.Unmarshal(parametersJSON, &m); err != nil {
		panic(fmt.Sprintf("ceremony: embedded parameters.json: %v", err)) // caught by every test
	}
	return m
}()

// CacheID is a shape's parameter set identifier, the name of its files
// without the version and the extension:
// "stacked-proof-of-replication-merkletree-poseidon_hasher-<base>-<sub>-<top>-sha256_hasher-<hash>".
func CacheID(s *porep.Shape) (string, error) {
	if s == nil {
		return "", fmt.Errorf("%w: nil shape", ErrNoOfficialFiles)
	}
	h, ok := cacheHashes[s.Name]
	if s.Test || !ok {
		return "", fmt.Errorf("%w for shape %s: only the official shapes (2KiB, 8MiB, 512MiB, 32GiB, 64GiB) have them", ErrNoOfficialFiles, s.Name)
	}
	return fmt.Sprintf("stacked-proof-of-replication-merkletree-poseidon_hasher-%d-%d-%d-sha256_hasher-%s",
		s.Tree.Base, s.Tree.Sub, s.Tree.Top, h), nil
}

// FileName is the official file name of a shape's parameters (ext
// ExtParams) or verifying key (ExtVK).
func FileName(s *porep.Shape, ext string) (string, error) {
	id, err := CacheID(s)
	if err != nil {
		return "", err
	}
	if ext != ExtParams && ext != ExtVK {
		return "", fmt.Errorf("ceremony: extension %q is neither %q nor %q", ext, ExtParams, ExtVK)
	}
	return fmt.Sprintf("v%d-%s.%s", ParametersVersion, id, ext), nil
}

// ForShape returns the official files of a shape with their parameters.json
// entries. Test shapes are ErrNoOfficialFiles.
func ForShape(s *porep.Shape) (Files, error) {
	out := Files{}
	for _, f := range []struct {
		ext string
		dst *File
	}{{ExtParams, &out.Params}, {ExtVK, &out.VK}} {
		name, err := FileName(s, f.ext)
		if err != nil {
			return Files{}, err
		}
		e, ok := entries[name]
		if !ok {
			return Files{}, fmt.Errorf("%w: %s is not in parameters.json", ErrNoOfficialFiles, name)
		}
		if e.SectorSize != s.SectorSize() {
			return Files{}, fmt.Errorf("ceremony: parameters.json gives %s sector size %d, shape %s has %d", name, e.SectorSize, s.Name, s.SectorSize())
		}
		*f.dst = File{Name: name, CID: e.CID, Digest: e.Digest, SectorSize: e.SectorSize}
	}
	out.Shape = s.Name
	return out, nil
}

// Name is an official PoRep file name taken apart.
type Name struct {
	Version int
	// Tree is the arity layout of trees C and R_last named by the
	// "merkletree-poseidon_hasher-<base>-<sub>-<top>" part.
	Tree porep.TreeShape
	// Hash is the 64 hex digits after "sha256_hasher-".
	Hash string
	// Ext is ExtParams or ExtVK.
	Ext string
}

var porepName = regexp.MustCompile(`^v([0-9]+)-stacked-proof-of-replication-merkletree-poseidon_hasher-([0-9]+)-([0-9]+)-([0-9]+)-sha256_hasher-([0-9a-f]{64})\.(params|vk)$`)

// ParseName takes an official PoRep file name apart: the tree hasher must be
// Poseidon ("poseidon_hasher") and the piece hasher SHA-256 ("sha256_hasher"),
// as in every v1.1 PoRep parameter set.
func ParseName(name string) (Name, error) {
	m := porepName.FindStringSubmatch(name)
	if m == nil {
		return Name{}, fmt.Errorf("ceremony: %q is not a PoRep parameter file name (v<N>-stacked-proof-of-replication-merkletree-poseidon_hasher-<b>-<s>-<t>-sha256_hasher-<hash>.params|vk)", name)
	}
	var n [4]int
	for i := range n {
		v, err := strconv.Atoi(m[i+1])
		if err != nil || v > 1<<16 {
			return Name{}, fmt.Errorf("ceremony: %q: number %q out of range", name, m[i+1])
		}
		n[i] = v
	}
	return Name{Version: n[0], Tree: porep.TreeShape{Base: n[1], Sub: n[2], Top: n[3]}, Hash: m[5], Ext: m[6]}, nil
}

// FetchCommand is the command that downloads a shape's official files
// into the parameter directory.
func FetchCommand(s *porep.Shape) string {
	return fmt.Sprintf("lotus fetch-params %s (or curio fetch-params %s)", s.Name, s.Name)
}
