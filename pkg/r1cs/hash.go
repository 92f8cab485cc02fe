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
	h     hash.Hash
	buf   []byte
	enc   map[uint32][fr.Bytes]byte
	table []fr.Element
	rows  int
}

// NewHasher starts a hash of a system with these counts; coeffs is the
// table the streamed terms' K index.
func NewHasher(inputs, aux, constraints int, coeffs []fr.Element) *Hasher {
	h, _ := blake2s.New256(nil)
	x := &Hasher{h: h, enc: map[uint32][fr.Bytes]byte{}, table: coeffs}
	var hdr [24]byte
	binary.BigEndian.PutUint64(hdr[0:], uint64(inputs))
	binary.BigEndian.PutUint64(hdr[8:], uint64(aux))
	binary.BigEndian.PutUint64(hdr[16:], uint64(constraints))
	h.Write(hdr[:])
	return x
}

// Row adds one constraint.
func (x *Hasher) Row(a, b, c []STerm) {
	x.buf = x.buf[:0]
	for _, lc := range [3][]STerm{a, b, c} {
		x.buf = x.AppendLC(x.buf, lc)
	}
	x.h.Write(x.buf)
	x.rows++
}

// AppendLC appends one combination's encoding (the hash's and the oracle's
// block hashes' unit) to dst.
func (x *Hasher) AppendLC(dst []byte, lc []STerm) []byte {
	n := 0
	for _, t := range lc {
		if !x.table[t.K].IsZero() {
			n++
		}
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	for _, t := range lc {
		if x.table[t.K].IsZero() {
			continue
		}
		if t.V.IsInput() {
			dst = append(dst, 'I')
		} else {
			dst = append(dst, 'A')
		}
		dst = binary.BigEndian.AppendUint64(dst, uint64(t.V.Index()))
		e, ok := x.enc[t.K]
		if !ok {
			e = x.table[t.K].Bytes()
			x.enc[t.K] = e
		}
		dst = append(dst, e[:]...)
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
