package porep

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// NodeSize is the size in bytes of one sector node (and of every Domain).
const NodeSize = 32

// Domain is a 32-byte node value as rust-fil-proofs stores it: the
// little-endian canonical encoding of a BLS12-381 scalar (PoseidonDomain,
// Sha256Domain, Commitment, Ticket all share this layout). Its JSON form is the
// serde form of [u8; 32]: an array of 32 integers in 0..255.
type Domain [32]byte

// ErrNotCanonical is returned when a Domain does not encode a field element
// smaller than the BLS12-381 scalar modulus.
var ErrNotCanonical = errors.New("porep: domain is not a canonical field element")

// DomainFromElement encodes e little-endian.
func DomainFromElement(e *fr.Element) Domain {
	var d Domain
	fr.LittleEndian.PutElement((*[32]byte)(&d), *e)
	return d
}

// Element decodes d as a field element; it fails with ErrNotCanonical when d
// is not smaller than the modulus.
func (d Domain) Element() (fr.Element, error) {
	e, err := fr.LittleEndian.Element((*[32]byte)(&d))
	if err != nil {
		return fr.Element{}, fmt.Errorf("%w: %s", ErrNotCanonical, d)
	}
	return e, nil
}

// TruncateTo254 clears the two top bits of the last byte, as rust-fil-proofs'
// bytes_into_fr_repr_safe does to make a SHA-256 digest a field element.
func (d *Domain) TruncateTo254() { d[31] &= 0x3f }

// String returns the hex of the bytes (little-endian order, as stored).
func (d Domain) String() string { return hex.EncodeToString(d[:]) }

// MarshalJSON writes the serde form of [u8; 32]: [b0,b1,...,b31].
func (d Domain) MarshalJSON() ([]byte, error) {
	return d.AppendJSON(make([]byte, 0, 32*4+2)), nil
}

// AppendJSON appends the JSON form of d to b.
func (d Domain) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, v := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return append(b, ']')
}

var domainType = reflect.TypeFor[Domain]()

// UnmarshalJSON reads exactly 32 integers in 0..255. Errors are
// *json.UnmarshalTypeError-compatible messages wrapped by the decoder with the
// JSON field path.
func (d *Domain) UnmarshalJSON(b []byte) error {
	i := 0
	skip := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	fail := func(what string) error { return domainTypeError(what) }
	skip()
	if i >= len(b) || b[i] != '[' {
		return fail("non-array value")
	}
	i++
	n := 0
	for {
		skip()
		if i < len(b) && b[i] == ']' {
			if n == 0 {
				return fail("array of 0 bytes")
			}
			return fail("array of " + strconv.Itoa(n) + " bytes")
		}
		if n == 32 {
			return fail("array of more than 32 bytes")
		}
		v, used := 0, 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			v = v*10 + int(b[i]-'0')
			i++
			used++
			if v > 255 || used > 3 {
				return fail("byte value out of range")
			}
		}
		if used == 0 {
			return fail("array element that is not a byte")
		}
		if used > 1 && b[i-used] == '0' {
			return fail("byte with leading zero")
		}
		d[n] = byte(v)
		n++
		skip()
		if i >= len(b) {
			return fail("truncated array")
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] == ']' {
			i++
			break
		}
		return fail("array element that is not a byte")
	}
	if n != 32 {
		return fail("array of " + strconv.Itoa(n) + " bytes")
	}
	skip()
	if i != len(b) {
		return fail("trailing data")
	}
	return nil
}
