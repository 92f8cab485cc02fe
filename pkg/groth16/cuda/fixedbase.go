//go:build cgo

package cuda

import (
	"fmt"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// FixedBase returns the device's fixed-base scalar multiplication for
// groth16.SetupR1CS (groth16.SetupFixedBase).
func (b *Backend) FixedBase() groth16.FixedBase { return fixedBase{lib: b.lib, dev: b.cfg.Device} }

type fixedBase struct {
	lib *Library
	dev int
}

func (f fixedBase) MulG1(table []curve.G1Affine, c, windows int, scalars []fr.Element, out []curve.G1Affine) error {
	return f.lib.FixedBaseG1(f.dev, table, c, windows, scalars, out)
}

func (f fixedBase) MulG2(table []curve.G2Affine, c, windows int, scalars []fr.Element, out []curve.G2Affine) error {
	return f.lib.FixedBaseG2(f.dev, table, c, windows, scalars, out)
}

// FixedBaseG1 sets out[i] = scalars[i]·G on device dev from the comb table
// of groth16.FixedBase (table[w·2^(c−1) + j] = (j+1)·2^(c·w)·G).
func (l *Library) FixedBaseG1(dev int, table []curve.G1Affine, c, windows int, scalars []fr.Element, out []curve.G1Affine) error {
	if err := checkFixedBase(len(table), c, windows, len(scalars), len(out)); err != nil || len(scalars) == 0 {
		return err
	}
	return l.a.fixedBase(dev, 1, unsafe.Pointer(&table[0]), c, windows, unsafe.Pointer(&scalars[0]), int64(len(scalars)),
		unsafe.Pointer(&out[0]))
}

// FixedBaseG2 is FixedBaseG1 in G2.
func (l *Library) FixedBaseG2(dev int, table []curve.G2Affine, c, windows int, scalars []fr.Element, out []curve.G2Affine) error {
	if err := checkFixedBase(len(table), c, windows, len(scalars), len(out)); err != nil || len(scalars) == 0 {
		return err
	}
	return l.a.fixedBase(dev, 2, unsafe.Pointer(&table[0]), c, windows, unsafe.Pointer(&scalars[0]), int64(len(scalars)),
		unsafe.Pointer(&out[0]))
}

func checkFixedBase(tableLen, c, windows, n, outLen int) error {
	switch {
	case c < 2 || c > 24:
		return fmt.Errorf("%w: fixed base: window of %d bits (2 to 24)", ErrInvalid, c)
	case windows*c < 256:
		return fmt.Errorf("%w: fixed base: %d windows of %d bits do not cover 256 bits", ErrInvalid, windows, c)
	case tableLen != windows<<(c-1):
		return fmt.Errorf("%w: fixed base: table of %d points, want %d windows × 2^%d", ErrInvalid, tableLen, windows, c-1)
	case outLen != n:
		return fmt.Errorf("%w: fixed base: %d scalars but room for %d points", ErrInvalid, n, outLen)
	}
	return nil
}
