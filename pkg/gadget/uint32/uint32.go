package uint32

import (
	"math/bits"
	"sync"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// UInt32 is bellpepper's UInt32: 32 Booleans, least significant first,
// and the word's value.
type UInt32 struct {
	Bits [32]boolean.Boolean
	Val  uint32
}

// Constant is the constant word v (no variables).
func Constant(v uint32) UInt32 {
	x := UInt32{Val: v}
	for i := range x.Bits {
		x.Bits[i] = boolean.Constant(v>>i&1 == 1)
	}
	return x
}

// Alloc allocates the 32 bits of v, least significant first, each in the
// namespace "allocated bit i".
func Alloc(cs r1cs.CS, v uint32) UInt32 {
	x := UInt32{Val: v}
	for i := range x.Bits {
		cs.Push(r1cs.Nf("allocated bit %d", i))
		x.Bits[i] = boolean.Is(boolean.AllocBit(cs, v>>i&1 == 1))
		cs.Pop()
	}
	return x
}

// FromBits is the word of 32 bits given least significant first.
func FromBits(b []boolean.Boolean) UInt32 {
	if len(b) != 32 {
		panic("uint32: FromBits needs 32 bits")
	}
	var x UInt32
	copy(x.Bits[:], b)
	x.Val = x.value()
	return x
}

// FromBitsBE is the word of 32 bits given most significant first.
func FromBitsBE(b []boolean.Boolean) UInt32 {
	if len(b) != 32 {
		panic("uint32: FromBitsBE needs 32 bits")
	}
	var x UInt32
	for i := range x.Bits {
		x.Bits[i] = b[31-i]
	}
	x.Val = x.value()
	return x
}

func (x *UInt32) value() uint32 {
	var v uint32
	for i := range x.Bits {
		if x.Bits[i].Value() {
			v |= 1 << i
		}
	}
	return v
}

// IntoBits is x's bits, least significant first.
func (x UInt32) IntoBits() []boolean.Boolean {
	out := make([]boolean.Boolean, 32)
	copy(out, x.Bits[:])
	return out
}

// IntoBitsBE is x's bits, most significant first.
func (x UInt32) IntoBitsBE() []boolean.Boolean {
	out := make([]boolean.Boolean, 32)
	for i := range out {
		out[i] = x.Bits[31-i]
	}
	return out
}

// Rotr is x rotated right by `by` bits (modulo 32); no constraints.
func (x UInt32) Rotr(by int) UInt32 {
	by %= 32
	r := UInt32{Val: bits.RotateLeft32(x.Val, -by)}
	for i := range r.Bits {
		r.Bits[i] = x.Bits[(i+by)%32]
	}
	return r
}

// Shr is x shifted right by `by` bits (modulo 32), constant zeros shifted
// in; no constraints.
func (x UInt32) Shr(by int) UInt32 {
	by %= 32
	r := UInt32{Val: x.Val >> by}
	for i := range 32 - by {
		r.Bits[i] = x.Bits[i+by]
	}
	return r
}

// Xor is x ⊕ o, bit i in the namespace "xor of bit i" (boolean.Xor).
func (x UInt32) Xor(cs r1cs.CS, o UInt32) UInt32 {
	r := UInt32{Val: x.Val ^ o.Val}
	for i := range r.Bits {
		cs.Push(r1cs.Nf("xor of bit %d", i))
		r.Bits[i] = boolean.Xor(cs, x.Bits[i], o.Bits[i])
		cs.Pop()
	}
	return r
}

// Sha256Ch is (a ∧ b) ⊕ (¬a ∧ c), bit i in the namespace "ch i"
// (boolean.Sha256Ch).
func Sha256Ch(cs r1cs.CS, a, b, c UInt32) UInt32 {
	r := UInt32{Val: a.Val&b.Val ^ ^a.Val&c.Val}
	for i := range r.Bits {
		cs.Push(r1cs.Nf("ch %d", i))
		r.Bits[i] = boolean.Sha256Ch(cs, a.Bits[i], b.Bits[i], c.Bits[i])
		cs.Pop()
	}
	return r
}

// Sha256Maj is (a ∧ b) ⊕ (a ∧ c) ⊕ (b ∧ c), bit i in the namespace
// "maj i" (boolean.Sha256Maj).
func Sha256Maj(cs r1cs.CS, a, b, c UInt32) UInt32 {
	r := UInt32{Val: a.Val&b.Val ^ a.Val&c.Val ^ b.Val&c.Val}
	for i := range r.Bits {
		cs.Push(r1cs.Nf("maj %d", i))
		r.Bits[i] = boolean.Sha256Maj(cs, a.Bits[i], b.Bits[i], c.Bits[i])
		cs.Pop()
	}
	return r
}

// SumBits is the number of result bits AddMany allocates for n operands:
// the bit length of n·(2^32 − 1).
func SumBits(n int) int { return bits.Len64(uint64(n) * (1<<32 - 1)) }

// sumLCs is AddMany's scratch (MultiEq adds copies of the terms).
type sumLCs struct{ lhs, rhs r1cs.LC }

var sumPool = sync.Pool{New: func() any { return new(sumLCs) }}

// AddMany is the sum of 2 to 10 words modulo 2^32. When every bit of
// every operand is constant the result is a constant. Otherwise it
// allocates the SumBits(len(ops)) bits of the full sum ("result bit i",
// least significant first), hands Σ operands = Σ 2^i·result_i to m's
// batch (MultiEq.EnforceEqual), and returns the low 32 bits.
func AddMany(m *MultiEq, ops []UInt32) UInt32 {
	if len(ops) < 2 || len(ops) > 10 {
		panic("uint32: AddMany takes 2 to 10 operands")
	}
	var sum uint64
	allConst := true
	for i := range ops {
		sum += uint64(ops[i].Val)
		for j := range ops[i].Bits {
			allConst = allConst && ops[i].Bits[j].IsConstant()
		}
	}
	if allConst {
		return Constant(uint32(sum))
	}
	n := SumBits(len(ops))
	var res [64]boolean.AllocatedBit
	for i := range n {
		m.Push(r1cs.Nf("result bit %d", i))
		res[i] = boolean.AllocBit(m, sum>>i&1 == 1)
		m.Pop()
	}
	if m.Constraints() {
		sc := sumPool.Get().(*sumLCs)
		sc.lhs.Reset()
		sc.rhs.Reset()
		for i := range ops {
			for j := range ops[i].Bits {
				ops[i].Bits[j].AddTo(&sc.lhs, &pow2[j])
			}
		}
		for i := range n {
			sc.rhs.AddCoeff(&pow2[i], res[i].V)
		}
		m.EnforceEqual(n, &sc.lhs, &sc.rhs)
		sumPool.Put(sc)
	} else {
		m.EnforceEqual(n, nil, nil)
	}
	r := UInt32{Val: uint32(sum)}
	for i := range r.Bits {
		r.Bits[i] = boolean.Is(res[i])
	}
	return r
}
