package ceremony

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// MarkerSuffix ends a checked marker's name: <file name>.c2checked.
const MarkerSuffix = ".c2checked"

// markerFormat is the version of the marker's JSON form.
const markerFormat = 1

// markerMaxBytes bounds the marker files read.
const markerMaxBytes = 64 << 10

// Marker records that a parameter file passed Check: its digest equals
// parameters.json's and every point in it decoded canonically, on the curve
// and in the prime-order subgroup. It is valid while the file keeps the
// recorded size and modification time.
type Marker struct {
	Format int `json:"format"`
	// File is the checked file's base name.
	File string `json:"file"`
	// Size and ModTimeUnixNano are the file's at the check.
	Size            int64 `json:"size"`
	ModTimeUnixNano int64 `json:"mtime_unix_ns"`
	// Digest is the file's digest (the parameters.json one).
	Digest string `json:"digest"`
	// PointsChecked: every point passed the curve and subgroup checks.
	PointsChecked bool `json:"points_checked"`
	// CheckedAt is when the check finished.
	CheckedAt time.Time `json:"checked_at"`
}

// CheckOptions configure Check.
type CheckOptions struct {
	// StateDir holds markers when the parameter directory is read-only: a
	// marker is written beside the file first (<file>.c2checked) and, if
	// that fails, in StateDir (created if needed). Markers are looked for
	// in both places. Empty: beside the file only.
	StateDir string
	// Progress receives the digest's progress in bytes (stage "ceremony:
	// digest <file>") and the point check's in points ("params: check").
	Progress groth16.Progress
	// Subgroup, if not nil, does the subgroup checks of a .params file's
	// proving-key sections (groth16.SubgroupCheckWith), e.g. on a GPU.
	Subgroup groth16.SubgroupChecker
	// Workers bounds the decoding goroutines (default GOMAXPROCS).
	Workers int
}

// CheckResult is what Check found.
type CheckResult struct {
	// Path is the file checked.
	Path   string
	Marker Marker
	// MarkerPath is where the marker lies ("" if it could not be written:
	// see MarkerErr).
	MarkerPath string
	// Reused: a valid marker was found and the file was not read.
	Reused bool
	// MarkerErr is why no marker could be written (the check itself
	// passed; the next start checks again).
	MarkerErr error
}

// ErrChanged: the file changed while it was being checked.
var ErrChanged = errors.New("ceremony: file changed while it was being checked")

// MarkerPaths are the places of path's marker, in lookup order: beside the
// file, then in stateDir (if not empty).
func MarkerPaths(path, stateDir string) []string {
	out := []string{path + MarkerSuffix}
	if stateDir != "" {
		out = append(out, filepath.Join(stateDir, filepath.Base(path)+MarkerSuffix))
	}
	return out
}

// Check verifies the official file at path against its parameters.json
// entry want, once: when a marker (MarkerPaths) records the file's current
// size and modification time, want's digest and passed point checks, it
// returns at the cost of a stat and a small read. Otherwise it computes the
// file's digest (streamed) and, if it equals want.Digest, decodes every
// point (a .params file: groth16.ParamsFile.CheckPoints; a .vk file:
// groth16.ReadVerifyingKeyFile), then writes a marker. A wrong digest is a
// *DigestError (ErrDigestMismatch) naming the file, the expected and the
// actual digest; a bad point is the decoder's *groth16.FormatError; a
// missing file wraps fs.ErrNotExist. No marker is written for a file that
// fails.
func Check(ctx context.Context, path string, want File, opts CheckOptions) (*CheckResult, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ceremony: check %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("ceremony: check %s: not a regular file", path)
	}
	if len(want.Digest) != DigestLen {
		return nil, fmt.Errorf("ceremony: check %s: expected digest %q is not %d hex digits", path, want.Digest, DigestLen)
	}
	res := &CheckResult{Path: path}
	for _, mp := range MarkerPaths(path, opts.StateDir) {
		if m, ok := readMarker(mp); ok && m.matches(path, st, want.Digest) {
			res.Marker, res.MarkerPath, res.Reused = m, mp, true
			return res, nil
		}
	}

	d, err := FileDigest(ctx, path, opts.Progress)
	if err != nil {
		return nil, err
	}
	if d != want.Digest {
		return nil, &DigestError{Path: path, Expected: want.Digest, Actual: d}
	}
	if err := checkPoints(ctx, path, opts); err != nil {
		return nil, err
	}
	after, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ceremony: check %s: %w", path, err)
	}
	if after.Size() != st.Size() || !after.ModTime().Equal(st.ModTime()) {
		return nil, fmt.Errorf("%w: %s (size %d → %d, mtime %s → %s)", ErrChanged, path, st.Size(), after.Size(),
			st.ModTime().Format(time.RFC3339Nano), after.ModTime().Format(time.RFC3339Nano))
	}
	res.Marker = Marker{Format: markerFormat, File: filepath.Base(path), Size: st.Size(), ModTimeUnixNano: st.ModTime().UnixNano(),
		Digest: d, PointsChecked: true, CheckedAt: time.Now().UTC()}
	res.MarkerPath, res.MarkerErr = writeMarker(res.Marker, MarkerPaths(path, opts.StateDir))
	return res, nil
}

func checkPoints(ctx context.Context, path string, opts CheckOptions) error {
	if strings.HasSuffix(path, "."+ExtVK) {
		_, err := groth16.ReadVerifyingKeyFile(path)
		return err
	}
	po := []groth16.ParamsOption{groth16.ParamsWorkers(opts.Workers)}
	if opts.Progress != nil {
		po = append(po, groth16.ParamsProgress(opts.Progress))
	}
	if opts.Subgroup != nil {
		po = append(po, groth16.SubgroupCheckWith(opts.Subgroup))
	}
	f, err := groth16.OpenParams(path, po...)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.CheckPoints(ctx)
}

func (m Marker) matches(path string, st fs.FileInfo, digest string) bool {
	return m.Format == markerFormat && m.File == filepath.Base(path) && m.Size == st.Size() &&
		m.ModTimeUnixNano == st.ModTime().UnixNano() && m.Digest == digest && m.PointsChecked
}

// readMarker reads a marker; a missing, unreadable or malformed one is
// simply not there (the file is checked again).
func readMarker(path string) (Marker, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Marker{}, false
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, markerMaxBytes+1)); err != nil || b.Len() > markerMaxBytes {
		return Marker{}, false
	}
	var m Marker
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Marker{}, false
	}
	return m, true
}

// writeMarker writes m atomically to the first of paths that takes it.
func writeMarker(m Marker, paths []string) (string, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	b = append(b, '\n')
	var errs []error
	for i, p := range paths {
		if i > 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := writeFileAtomic(p, b); err != nil {
			errs = append(errs, err)
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("ceremony: no checked marker written (give a writable state directory): %w", errors.Join(errs...))
}

func writeFileAtomic(path string, b []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ShapeCheck is the result of CheckShape.
type ShapeCheck struct {
	Paths
	Params, VK *CheckResult
}

// CheckShape locates a shape's official files in dir (Locate) and checks
// both (Check), the verifying key first.
func CheckShape(ctx context.Context, dir string, s *porep.Shape, opts CheckOptions) (*ShapeCheck, error) {
	p, err := Locate(dir, s)
	if err != nil {
		return nil, err
	}
	out := &ShapeCheck{Paths: p}
	if out.VK, err = Check(ctx, p.VK, p.Files.VK, opts); err != nil {
		return nil, err
	}
	if out.Params, err = Check(ctx, p.Params, p.Files.Params, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// vkMaxBytes bounds the .vk files LoadVerifyingKey reads (an official one
// is a few tens of kilobytes).
const vkMaxBytes = 64 << 20

// LoadVerifyingKey reads a shape's official .vk from dir, checks its
// digest against parameters.json (the file is small: it is hashed on every
// load) and decodes it with every point checked. It returns the key and the
// file's path; a missing file is a *MissingError, a wrong one a
// *DigestError.
func LoadVerifyingKey(ctx context.Context, dir string, s *porep.Shape) (*groth16.VerifyingKey, string, error) {
	p, err := PathsIn(dir, s)
	if err != nil {
		return nil, "", err
	}
	f, err := os.Open(p.VK)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fs.ErrNotExist
		}
		return nil, p.VK, &MissingError{Shape: s.Name, Path: p.VK, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, vkMaxBytes+1))
	if err != nil {
		return nil, p.VK, fmt.Errorf("ceremony: read %s: %w", p.VK, err)
	}
	if len(b) > vkMaxBytes {
		return nil, p.VK, fmt.Errorf("ceremony: %s: larger than %d bytes, not a verifying key", p.VK, vkMaxBytes)
	}
	d, err := Digest(ctx, bytes.NewReader(b), "", int64(len(b)), nil)
	if err != nil {
		return nil, p.VK, err
	}
	if d != p.Files.VK.Digest {
		return nil, p.VK, &DigestError{Path: p.VK, Expected: p.Files.VK.Digest, Actual: d}
	}
	r := bytes.NewReader(b)
	vk, err := groth16.ReadVerifyingKey(r)
	if err != nil {
		return nil, p.VK, fmt.Errorf("ceremony: %s: %w", p.VK, err)
	}
	if r.Len() != 0 {
		return nil, p.VK, fmt.Errorf("ceremony: %s: %d bytes after the verifying key", p.VK, r.Len())
	}
	return vk, p.VK, nil
}
