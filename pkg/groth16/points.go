package groth16

import (
	"bytes"
	"fmt"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// Sizes of the zcash/IETF point encodings.
const (
	g1Uncompressed = curve.SizeOfG1AffineUncompressed // 96
	g2Uncompressed = curve.SizeOfG2AffineUncompressed // 192
	g1Compressed   = curve.SizeOfG1AffineCompressed   // 48
	g2Compressed   = curve.SizeOfG2AffineCompressed   // 96
)

// The three most significant bits of the first byte of an encoding.
const (
	flagMask       = 0b111 << 5
	flagCompressed = 0b100 << 5
	flagInfinity   = 0b010 << 5
	flagLargest    = 0b001 << 5
)

// readFp reads a big-endian base-field element and rejects values ≥ p.
func readFp(e *fp.Element, b []byte) error {
	v, err := fp.BigEndian.Element((*[fp.Bytes]byte)(b))
	if err != nil {
		return ErrNonCanonical
	}
	*e = v
	return nil
}

// checkUncompressedFlags validates the flag bits of the uncompressed encoding
// b (all of it: infinity must have every other bit zero) and reports whether
// it encodes the point at infinity.
func checkUncompressedFlags(b []byte) (infinity bool, err error) {
	switch b[0] & flagMask {
	case 0:
		return false, nil
	case flagInfinity:
		if b[0]&^flagMask != 0 || !allZero(b[1:]) {
			return true, fmt.Errorf("%w: infinity with non-zero bits", ErrNonCanonical)
		}
		return true, nil
	default:
		return false, fmt.Errorf("%w: 0x%02x in an uncompressed point", ErrBadFlags, b[0]&flagMask)
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// decodeG1Uncompressed decodes a 96-byte uncompressed G1 point, checking
// canonical coordinates, the curve equation and, if subgroup is set,
// subgroup membership.
func decodeG1Uncompressed(p *curve.G1Affine, b []byte, subgroup bool) error {
	inf, err := checkUncompressedFlags(b[:g1Uncompressed])
	if err != nil {
		return err
	}
	if inf {
		p.X.SetZero()
		p.Y.SetZero()
		return nil
	}
	if err := readFp(&p.X, b[0:48]); err != nil {
		return err
	}
	if err := readFp(&p.Y, b[48:96]); err != nil {
		return err
	}
	// (0,0) is how gnark-crypto stores infinity; it is not on the curve, so
	// an encoding of it without the infinity flag is invalid.
	if p.IsInfinity() || !p.IsOnCurve() {
		return ErrNotOnCurve
	}
	if subgroup && !p.IsInSubGroup() {
		return ErrNotInSubgroup
	}
	return nil
}

// decodeG2Uncompressed decodes a 192-byte uncompressed G2 point (x.c1 ‖ x.c0
// ‖ y.c1 ‖ y.c0), with the same checks as decodeG1Uncompressed.
func decodeG2Uncompressed(p *curve.G2Affine, b []byte, subgroup bool) error {
	inf, err := checkUncompressedFlags(b[:g2Uncompressed])
	if err != nil {
		return err
	}
	if inf {
		p.X.SetZero()
		p.Y.SetZero()
		return nil
	}
	if err := readFp(&p.X.A1, b[0:48]); err != nil {
		return err
	}
	if err := readFp(&p.X.A0, b[48:96]); err != nil {
		return err
	}
	if err := readFp(&p.Y.A1, b[96:144]); err != nil {
		return err
	}
	if err := readFp(&p.Y.A0, b[144:192]); err != nil {
		return err
	}
	if p.IsInfinity() || !p.IsOnCurve() {
		return ErrNotOnCurve
	}
	if subgroup && !p.IsInSubGroup() {
		return ErrNotInSubgroup
	}
	return nil
}

// checkCompressedFlags validates the flags of a compressed proof element:
// compressed bit set, not infinity, no invalid combination.
func checkCompressedFlags(b0 byte) error {
	f := b0 & flagMask
	switch {
	case f&flagCompressed == 0:
		return fmt.Errorf("%w: 0x%02x, compressed bit not set", ErrBadFlags, f)
	case f == flagCompressed|flagInfinity:
		return ErrInfinity
	case f == flagCompressed|flagInfinity|flagLargest:
		return fmt.Errorf("%w: infinity and sort bits both set", ErrBadFlags)
	}
	return nil
}

// decodeG1Compressed decodes a 48-byte compressed G1 proof element, rejecting
// infinity, non-canonical x, x without a curve point and points outside the
// subgroup.
func decodeG1Compressed(p *curve.G1Affine, b []byte) error {
	if err := checkCompressedFlags(b[0]); err != nil {
		return err
	}
	var x [48]byte
	copy(x[:], b[:48])
	x[0] &^= flagMask
	var e fp.Element
	if err := readFp(&e, x[:]); err != nil {
		return err
	}
	if _, err := p.SetBytes(b[:48]); err != nil {
		return classifyCompressed(b[:48], false)
	}
	if enc := p.Bytes(); !bytes.Equal(enc[:], b[:48]) {
		return ErrNonCanonical
	}
	return nil
}

// decodeG2Compressed is decodeG1Compressed for a 96-byte G2 element.
func decodeG2Compressed(p *curve.G2Affine, b []byte) error {
	if err := checkCompressedFlags(b[0]); err != nil {
		return err
	}
	var x [96]byte
	copy(x[:], b[:96])
	x[0] &^= flagMask
	var e fp.Element
	if err := readFp(&e, x[0:48]); err != nil {
		return err
	}
	if err := readFp(&e, x[48:96]); err != nil {
		return err
	}
	if _, err := p.SetBytes(b[:96]); err != nil {
		return classifyCompressed(b[:96], true)
	}
	if enc := p.Bytes(); !bytes.Equal(enc[:], b[:96]) {
		return ErrNonCanonical
	}
	return nil
}

// classifyCompressed tells apart "no curve point with this x" from "not in
// the subgroup" for an encoding that gnark-crypto rejected.
func classifyCompressed(b []byte, g2 bool) error {
	dec := curve.NewDecoder(bytes.NewReader(b), curve.NoSubgroupChecks())
	var err error
	if g2 {
		var p curve.G2Affine
		err = dec.Decode(&p)
	} else {
		var p curve.G1Affine
		err = dec.Decode(&p)
	}
	if err != nil {
		return ErrNotOnCurve
	}
	return ErrNotInSubgroup
}
