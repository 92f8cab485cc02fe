package sha254

import (
	"crypto/sha256"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Size is the digest size in bytes.
const Size = 32

// Sum returns SHA-256(data) truncated to 254 bits: the digest bytes in
// SHA-256's order with the two top bits of byte 31 cleared, which is the
// little-endian encoding of a field element.
func Sum(data []byte) [Size]byte {
	d := sha256.Sum256(data)
	Truncate(&d)
	return d
}

// Truncate clears the two most significant bits of d[31], turning a SHA-256
// digest into a SHA-254 one.
func Truncate(d *[Size]byte) {
	d[31] &= 0x3f
}

// ToElement reads a truncated digest as the little-endian encoding of a field
// element. The top two bits are ignored, so the result is the same as for
// Truncate(d) and always canonical.
func ToElement(d [Size]byte) fr.Element {
	Truncate(&d)
	var e fr.Element
	// A 254-bit value is below the modulus, so this cannot fail.
	be := reversed(d)
	_ = e.SetBytesCanonical(be[:])
	return e
}

// FromElement is the 32-byte little-endian encoding of e, the form
// rust-fil-proofs hashes field elements in (Fr::to_repr).
func FromElement(e *fr.Element) [Size]byte {
	be := e.Bytes()
	return reversed(be)
}

// SumElement is ToElement(Sum(data)).
func SumElement(data []byte) fr.Element {
	return ToElement(Sum(data))
}

func reversed(b [Size]byte) [Size]byte {
	var out [Size]byte
	for i := range b {
		out[Size-1-i] = b[i]
	}
	return out
}
