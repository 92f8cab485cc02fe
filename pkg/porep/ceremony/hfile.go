package ceremony

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// HFileSuffix ends the name of a .params file's H file (its key's H query
// converted to coset-Lagrange form, groth16.WriteHFile): <file
// name>.c2hfile.
const HFileSuffix = ".c2hfile"

// HFilePaths are the places of the H file of the .params file at
// paramsPath, in lookup order: beside it, then in stateDir (if not empty).
func HFilePaths(paramsPath, stateDir string) []string {
	out := []string{paramsPath + HFileSuffix}
	if stateDir != "" {
		out = append(out, filepath.Join(stateDir, filepath.Base(paramsPath)+HFileSuffix))
	}
	return out
}

// ErrNoHFile: no H file at any of the places HFilePaths names.
var ErrNoHFile = errors.New("ceremony: no h file")

// ErrHFileStale: an H file converted from another source file (another
// digest or size) or for another circuit (other counts).
var ErrHFileStale = errors.New("ceremony: the h file is not of this parameter file")

// HFileError is an H file that is present and cannot be used: stale
// (ErrHFileStale) or damaged (groth16.ErrFileDigest, a *groth16.FormatError).
type HFileError struct {
	Path string
	Err  error
}

func (e *HFileError) Error() string {
	return fmt.Sprintf("ceremony: h file %s: %v (ignored; make it again with c2-params -convert-h)", e.Path, e.Err)
}

func (e *HFileError) Unwrap() error { return e.Err }

// ConvertOptions configure ConvertH.
type ConvertOptions struct {
	// StateDir takes the H file when the .params file's folder is not
	// writable (created if needed). Empty: beside the file only.
	StateDir string
	// DFT runs the two group transforms (nil: groth16.CPUDFTG1).
	DFT groth16.G1DFT
	// Progress receives the reading's and the conversion's progress.
	Progress groth16.Progress
}

// ConvertH converts the monomial key of the .params file at paramsPath to
// coset-Lagrange form (groth16.ConvertHCosetLagrange, with sys, the circuit
// the file belongs to) and writes its H file bound to the source (its size
// and sourceDigest: parameters.json's digest for Filecoin's files, which
// the caller has checked) beside it or, when that fails, in
// opts.StateDir. The file's points are decoded with their coordinates and
// the curve equation checked, not the subgroup (the caller checked the
// file). It returns where the H file went and its digest.
func ConvertH(ctx context.Context, paramsPath, sourceDigest string, sys groth16.R1CS, opts ConvertOptions) (path, digest string, err error) {
	st, err := os.Stat(paramsPath)
	if err != nil {
		return "", "", fmt.Errorf("ceremony: convert h: %w", err)
	}
	pf, err := groth16.OpenParams(paramsPath, groth16.SkipSubgroupCheck(), groth16.ParamsProgress(opts.Progress))
	if err != nil {
		return "", "", fmt.Errorf("ceremony: convert h: %w", err)
	}
	defer pf.Close()
	vk, err := pf.VerifyingKey()
	if err != nil {
		return "", "", fmt.Errorf("ceremony: convert h: %w", err)
	}
	pk := &groth16.ProvingKey{VK: *vk}
	if pk.H, err = pf.G1Section(ctx, groth16.SectionH); err != nil {
		return "", "", fmt.Errorf("ceremony: convert h: %w", err)
	}
	if pk.L, err = pf.G1Section(ctx, groth16.SectionL); err != nil {
		return "", "", fmt.Errorf("ceremony: convert h: %w", err)
	}
	conv, err := groth16.ConvertHCosetLagrangeInPlace(ctx, pk, sys, opts.DFT, opts.Progress)
	if err != nil {
		return "", "", fmt.Errorf("ceremony: convert h of %s: %w", paramsPath, err)
	}
	var errs []error
	for i, p := range HFilePaths(paramsPath, opts.StateDir) {
		if i > 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		d, err := groth16.WriteHFile(p, conv, st.Size(), sourceDigest)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return p, d, nil
	}
	return "", "", fmt.Errorf("ceremony: convert h of %s: no h file written (give a writable state directory): %w", paramsPath, errors.Join(errs...))
}

// LoadHFile finds the H file of the .params file at paramsPath
// (HFilePaths) and reads the first usable one: its header must name the
// source (the file's current size and sourceDigest) and fit the circuit's
// counts c (h of the domain, l of aux, l_input of inputs), and its digest
// must match its content (groth16.ReadHFile). It returns the file and its
// path. When none is present the error wraps ErrNoHFile and
// fs.ErrNotExist; present files that cannot be used are *HFileError
// values (joined), stale or damaged: never used.
func LoadHFile(ctx context.Context, paramsPath, sourceDigest string, c Counts, stateDir string, opts ...groth16.ParamsOption) (*groth16.HFile, string, error) {
	st, err := os.Stat(paramsPath)
	if err != nil {
		return nil, "", fmt.Errorf("ceremony: h file: %w", err)
	}
	var errs []error
	for _, p := range HFilePaths(paramsPath, stateDir) {
		h, err := groth16.ReadHFileHeader(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, &HFileError{Path: p, Err: err})
			continue
		}
		if err := hFileFits(h, st.Size(), sourceDigest, c); err != nil {
			errs = append(errs, &HFileError{Path: p, Err: err})
			continue
		}
		hf, err := groth16.ReadHFile(ctx, p, opts...)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", err
			}
			errs = append(errs, &HFileError{Path: p, Err: err})
			continue
		}
		// The header read twice is the same bytes unless the file was
		// replaced between the reads: check the decoded one too.
		if err := hFileFits(&hf.HFileHeader, st.Size(), sourceDigest, c); err != nil {
			errs = append(errs, &HFileError{Path: p, Err: err})
			continue
		}
		return hf, p, nil
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("%w for %s (looked for %v): %w", ErrNoHFile, paramsPath, HFilePaths(paramsPath, stateDir), fs.ErrNotExist)
	}
	return nil, "", errors.Join(errs...)
}

// hFileFits checks an H file's header against its source and circuit.
func hFileFits(h *groth16.HFileHeader, sourceSize int64, sourceDigest string, c Counts) error {
	if h.SourceDigest != sourceDigest || h.SourceSize != sourceSize {
		return fmt.Errorf("%w: converted from a source of digest %s and %d bytes, the parameter file has digest %s and %d bytes",
			ErrHFileStale, h.SourceDigest, h.SourceSize, sourceDigest, sourceSize)
	}
	for _, x := range []struct {
		what      string
		got, want int
	}{
		{"h (domain)", h.Domain, c.Domain},
		{"l (aux)", h.Aux, c.Aux},
		{"l_input (inputs)", h.Inputs, c.Inputs},
	} {
		if x.got != x.want {
			return fmt.Errorf("%w: section %s has %d points, the circuit needs %d", ErrHFileStale, x.what, x.got, x.want)
		}
	}
	return nil
}
