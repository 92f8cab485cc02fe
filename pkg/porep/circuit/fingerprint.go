package circuit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrStaleParams marks Groth16 parameters made for a circuit other than the
// compiled one (its fingerprint file names another circuit): proofs made
// with them would not verify.
var ErrStaleParams = errors.New("circuit: parameters were made for another circuit")

// FingerprintPath is where Setup writes a shape's circuit fingerprint when
// asked (SetupConfig.FingerprintPath), beside its parameters:
// <dir>/<shape>.circuit.
func FingerprintPath(dir, shape string) string { return filepath.Join(dir, shape+".circuit") }

// WriteFingerprint writes c's fingerprint, its bellpepper R1CS hash
// (Hash), to path (one line: hash and shape), through a temporary file
// renamed into place. Parameters are a function of exactly the R1CS, so
// equal hashes mean parameters made for one circuit prove the other.
func (c *Compiled) WriteFingerprint(ctx context.Context, path string) (err error) {
	h, err := c.Hash(ctx, nil)
	if err != nil {
		return err
	}
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	defer discard(f, &err)
	return finish(f, path, func() error {
		_, err := fmt.Fprintf(f, "%s %s\n", h, c.shape.Name)
		return err
	})
}

// CheckFingerprint reads the fingerprint file at path (written by Setup
// beside the parameters it made) and compares it with c's R1CS hash: nil
// when they agree, ErrStaleParams naming both when they differ, the os
// error (e.g. fs.ErrNotExist) when the file cannot be read.
func (c *Compiled) CheckFingerprint(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	want, err := c.Hash(ctx, nil)
	if err != nil {
		return err
	}
	if got, _, _ := strings.Cut(strings.TrimSpace(string(b)), " "); got != want {
		return fmt.Errorf("%w: %s says %.16s…, the %s circuit is %.16s… (make the parameters again)", ErrStaleParams, path, got, c.shape.Name, want)
	}
	return nil
}
