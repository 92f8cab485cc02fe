package r1cs

import (
	"encoding/binary"
	"hash"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/crypto/blake2s"
)

// Hasher computes bellpepper's TestConstraintSystem::hash, the digest the
// reference R1CS of Filecoin's circuits is identified by: blake2s-256 over
// the counts (inputs with ONE, aux, constraints: big-endian u64) and then,
// per constraint and per combination A, B, C, the number of its non-zero
// terms (u64) and each term as a tag byte 'I' or 'A', the index (u64) and
// the coefficient (32 bytes big-endian, canonical). Terms are in LC order
// (inputs first, each by index); zero coefficients are left out.
//
// Constraints are streamed in (Row), so a circuit too large to keep whole
// is hashed as it is replayed.
type Hasher struct {
	h    hash.Hash
	buf  []byte
	enc  coeffEncoding
	rows int
}

// coeffEncoding is a coefficient table's big-endian encodings and which
// coefficients are zero (left out).
type coeffEncoding struct {
	bytes [][fr.Bytes]byte
	zero  []bool
}

func encodeCoeffs(coeffs []fr.Element) coeffEncoding {
	e := coeffEncoding{bytes: make([][fr.Bytes]byte, len(coeffs)), zero: make([]bool, len(coeffs))}
	for i := range coeffs {
		e.bytes[i] = coeffs[i].Bytes()
		e.zero[i] = coeffs[i].IsZero()
	}
	return e
}

// NewHasher starts a hash of a system with these counts; coeffs is the
// table the streamed terms' K index.
func NewHasher(inputs, aux, constraints int, coeffs []fr.Element) *Hasher {
	h, _ := blake2s.New256(nil)
	x := &Hasher{h: h, enc: encodeCoeffs(coeffs)}
	var hdr [24]byte
	binary.BigEndian.PutUint64(hdr[0:], uint64(inputs))
	binary.BigEndian.PutUint64(hdr[8:], uint64(aux))
	binary.BigEndian.PutUint64(hdr[16:], uint64(constraints))
	h.Write(hdr[:])
	return x
}

// Row adds one constraint.
func (x *Hasher) Row(a, b, c []STerm) {
	x.buf = x.AppendRow(x.buf[:0], a, b, c)
	x.h.Write(x.buf)
	x.rows++
}

// AppendLC appends one combination's encoding (the hash's and the oracle's
// block hashes' unit) to dst.
func (x *Hasher) AppendLC(dst []byte, lc []STerm) []byte { return x.enc.appendLC(dst, lc) }

// AppendRow appends one constraint's encoding (its A, B and C) to dst.
func (x *Hasher) AppendRow(dst []byte, a, b, c []STerm) []byte {
	return x.enc.appendLC(x.enc.appendLC(x.enc.appendLC(dst, a), b), c)
}

// Write adds encoded constraints (AppendRow's output for rows rows).
func (x *Hasher) Write(encoded []byte, rows int) {
	x.h.Write(encoded)
	x.rows += rows
}

func (e *coeffEncoding) appendLC(dst []byte, lc []STerm) []byte {
	n := 0
	for _, t := range lc {
		if !e.zero[t.K] {
			n++
		}
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	for _, t := range lc {
		if e.zero[t.K] {
			continue
		}
		tag := byte('A')
		if t.V.IsInput() {
			tag = 'I'
		}
		dst = append(dst, tag)
		dst = binary.BigEndian.AppendUint64(dst, uint64(t.V.Index()))
		dst = append(dst, e.bytes[t.K][:]...)
	}
	return dst
}

// Rows is the number of constraints added.
func (x *Hasher) Rows() int { return x.rows }

// Sum returns the digest.
func (x *Hasher) Sum() [32]byte {
	var d [32]byte
	x.h.Sum(d[:0])
	return d
}

// Hash is the system's bellpepper TestConstraintSystem hash.
func (s *System) Hash() [32]byte {
	x := NewHasher(s.nIn, s.nAux, s.NumConstraints(), s.coeffs)
	for j := range s.NumConstraints() {
		x.Row(s.Row(j))
	}
	return x.Sum()
}
