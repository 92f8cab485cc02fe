package circuit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"

	"github.com/consensys/gnark/constraint"
)

// ErrStaleParams marks Groth16 parameters made for a circuit other than the
// compiled one (its fingerprint file names another fingerprint): proofs made
// with them would not verify.
var ErrStaleParams = errors.New("circuit: parameters were made for another circuit")

// FingerprintPath is where Setup writes a shape's circuit fingerprint when
// asked (SetupConfig.FingerprintPath), beside its parameters:
// <dir>/<shape>.circuit.
func FingerprintPath(dir, shape string) string { return filepath.Join(dir, shape+".circuit") }

// Fingerprint identifies the compiled constraint system as Groth16
// parameters see it: a SHA-256 over the numbers of inputs, aux variables and
// constraints, the coefficient table and every R1C (A, B and C rows after
// B balancing, by coefficient and wire id). Parameters are a function of
// exactly these, so equal fingerprints mean parameters made for one circuit
// prove the other; any change of the circuit's layout (gadgets, wire order,
// balancing) changes it. It is computed on the first call (a pass over the
// calldata: 0.13 s for test-tiny, ~6 s at 32 GiB) and kept.
func (c *Compiled) Fingerprint() string {
	c.fingerprintOnce.Do(func() { c.fingerprint = fingerprint(c) })
	return c.fingerprint
}

func fingerprint(c *Compiled) string {
	r := c.circuit.R1CS()
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	flush := func(h hash.Hash) {
		h.Write(buf)
		buf = buf[:0]
	}
	buf = append(buf, "c2cluster partition R1CS v1\x00"...)
	for _, n := range []int{c.circuit.NumInputs(), c.circuit.NumAux(), c.circuit.NumConstraints(), len(r.Coefficients)} {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
	}
	for i := range r.Coefficients {
		for _, limb := range r.Coefficients[i] {
			buf = binary.LittleEndian.AppendUint64(buf, limb)
		}
		if len(buf) > cap(buf)-64 {
			flush(h)
		}
	}
	isR1C := make([]bool, len(r.Blueprints))
	for i, b := range r.Blueprints {
		_, isR1C[i] = b.(constraint.BlueprintR1C)
	}
	for _, pi := range r.Instructions {
		if !isR1C[pi.BlueprintID] {
			continue // hints: how the witness is solved, not what it satisfies
		}
		cd := r.CallData[pi.StartCallData:]
		cd = cd[:cd[0]] // R1C calldata starts with its own length
		if len(buf)+4*len(cd) > cap(buf) {
			flush(h)
		}
		for _, v := range cd {
			buf = binary.LittleEndian.AppendUint32(buf, v)
		}
	}
	flush(h)
	return hex.EncodeToString(h.Sum(nil))
}

// WriteFingerprint writes c's fingerprint to path (one line), through a
// temporary file renamed into place.
func (c *Compiled) WriteFingerprint(path string) (err error) {
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	defer discard(f, &err)
	return finish(f, path, func() error {
		_, err := fmt.Fprintf(f, "%s %s\n", c.Fingerprint(), c.params.Name)
		return err
	})
}

// CheckFingerprint reads the fingerprint file at path (written by Setup
// beside the parameters it made) and compares it with c's: nil when they
// agree, ErrStaleParams naming both when they differ, the os error (e.g.
// fs.ErrNotExist) when the file cannot be read.
func (c *Compiled) CheckFingerprint(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	got, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if want := c.Fingerprint(); got != want {
		return fmt.Errorf("%w: %s says %.16s…, the compiled %s circuit is %.16s… (regenerate the parameters)", ErrStaleParams, path, got, c.params.Name, want)
	}
	return nil
}
