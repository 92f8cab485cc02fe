package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Hash returns the Poseidon digest of inputs with arity len(inputs), in
// neptune's Merkle-tree mode. It panics if the arity is outside 1..MaxArity:
// arities are fixed by the proof shape, so that is a programming error.
// Callers hashing data of unchecked length use a Hasher, which returns an
// error instead.
func Hash(inputs []fr.Element) fr.Element {
	p, err := paramsFor(len(inputs))
	if err != nil {
		panic(err)
	}
	var out fr.Element
	p.permute(&out, inputs)
	return out
}

// Hasher hashes inputs of one arity. It holds only the cached constants, so it
// allocates nothing per hash and is safe for concurrent use.
type Hasher struct {
	p *params
}

// NewHasher returns a Hasher for arity (1..MaxArity), deriving the constants
// on first use.
func NewHasher(arity int) (*Hasher, error) {
	p, err := paramsFor(arity)
	if err != nil {
		return nil, err
	}
	return &Hasher{p: p}, nil
}

// Arity is the number of inputs the hasher takes.
func (h *Hasher) Arity() int { return h.p.arity }

// Hash returns the digest of inputs, which must hold exactly Arity elements.
func (h *Hasher) Hash(inputs []fr.Element) (fr.Element, error) {
	var out fr.Element
	if len(inputs) != h.p.arity {
		return out, fmt.Errorf("%w: got %d inputs for an arity-%d hasher", ErrArity, len(inputs), h.p.arity)
	}
	h.p.permute(&out, inputs)
	return out, nil
}

// HashTo writes the digest of inputs to dst. inputs must hold exactly Arity
// elements; it panics otherwise (use Hash for a checked call).
func (h *Hasher) HashTo(dst *fr.Element, inputs []fr.Element) {
	if len(inputs) != h.p.arity {
		panic(fmt.Errorf("%w: got %d inputs for an arity-%d hasher", ErrArity, len(inputs), h.p.arity))
	}
	h.p.permute(dst, inputs)
}

// permute runs the optimised permutation on [tag, inputs...] and stores
// element 1 in out.
func (p *params) permute(out *fr.Element, inputs []fr.Element) {
	var s, tmp [MaxArity + 1]fr.Element
	t := p.width
	st := s[:t]
	st[0] = p.tag
	copy(st[1:], inputs)
	for i := range st {
		st[i].Add(&st[i], &p.first[i])
	}

	half := p.full / 2
	for r := range half {
		for i := range st {
			sbox(&st[i])
		}
		m := p.mdsFlat
		if r == half-1 {
			m = p.preFlat
		}
		MulDense(st, tmp[:t], m)
		addVec(st, p.post[r])
	}

	var acc, x fr.Element
	for j := range p.partial {
		sbox(&st[0])
		st[0].Add(&st[0], &p.partialKey[j])
		sp := &p.sparse[j]
		s0 := st[0]
		acc.Mul(&sp.col[0], &s0)
		for i := 1; i < t; i++ {
			x.Mul(&sp.row[i-1], &st[i])
			acc.Add(&acc, &x)
			x.Mul(&sp.col[i], &s0)
			st[i].Add(&st[i], &x)
		}
		st[0] = acc
	}

	for r := range half {
		for i := range st {
			sbox(&st[i])
		}
		MulDense(st, tmp[:t], p.mdsFlat)
		if r < half-1 {
			addVec(st, p.post[half+r])
		}
	}
	*out = st[1]
}

func sbox(x *fr.Element) {
	var x2 fr.Element
	x2.Square(x)
	x2.Square(&x2)
	x.Mul(x, &x2)
}

// MulDense sets st = M·st using tmp as scratch; m is row-major t×t (a
// matrix of Optimized, for a witness computed outside this package).
func MulDense(st, tmp []fr.Element, m []fr.Element) {
	t := len(st)
	var x fr.Element
	for i := range t {
		row := m[i*t : (i+1)*t]
		tmp[i].Mul(&row[0], &st[0])
		for j := 1; j < t; j++ {
			x.Mul(&row[j], &st[j])
			tmp[i].Add(&tmp[i], &x)
		}
	}
	copy(st, tmp)
}

func addVec(st, c []fr.Element) {
	for i := range st {
		st[i].Add(&st[i], &c[i])
	}
}
