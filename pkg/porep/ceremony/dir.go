package ceremony

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// EnvDir is the environment variable naming the parameter directory, the
// one rust-fil-proofs (settings parameter_cache), go-paramfetch, Lotus and
// Curio read.
const EnvDir = "FIL_PROOFS_PARAMETER_CACHE"

// DefaultDir is the parameter directory when EnvDir is unset or empty.
const DefaultDir = "/var/tmp/filecoin-proof-parameters"

// Dir returns $FIL_PROOFS_PARAMETER_CACHE, or DefaultDir.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return DefaultDir
}

// Paths are the locations of a shape's official files in a directory.
type Paths struct {
	Files
	Dir    string
	Params string
	VK     string
}

// PathsIn returns where a shape's official files lie in dir, without
// looking at the disk.
func PathsIn(dir string, s *porep.Shape) (Paths, error) {
	f, err := ForShape(s)
	if err != nil {
		return Paths{}, err
	}
	return Paths{Files: f, Dir: dir, Params: filepath.Join(dir, f.Params.Name), VK: filepath.Join(dir, f.VK.Name)}, nil
}

// MissingError is an official file that is not where it is looked for.
type MissingError struct {
	Shape string
	Path  string
	Err   error
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("ceremony: official %s parameter file %s: %v; fetch it with `%s=%s lotus fetch-params %s` (or curio fetch-params %s)",
		e.Shape, e.Path, e.Err, EnvDir, filepath.Dir(e.Path), e.Shape, e.Shape)
}

func (e *MissingError) Unwrap() error { return e.Err }

// Locate returns the paths of a shape's official files in dir and checks
// that both exist and are regular files. A missing one is a *MissingError
// (matching fs.ErrNotExist) naming the file and the fetch command.
func Locate(dir string, s *porep.Shape) (Paths, error) {
	p, err := PathsIn(dir, s)
	if err != nil {
		return Paths{}, err
	}
	for _, path := range []string{p.VK, p.Params} {
		st, err := os.Stat(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fs.ErrNotExist
			}
			return Paths{}, &MissingError{Shape: s.Name, Path: path, Err: err}
		}
		if !st.Mode().IsRegular() {
			return Paths{}, &MissingError{Shape: s.Name, Path: path, Err: fmt.Errorf("not a regular file (%s)", st.Mode().Type())}
		}
	}
	return p, nil
}
