package uint64

import (
	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/multipack"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// UInt64 is 64 Booleans, least significant first, and their value.
type UInt64 struct {
	Bits  []boolean.Boolean
	Value uint64
}

// Constant is v as constant bits.
func Constant(v uint64) UInt64 {
	bits := make([]boolean.Boolean, 64)
	for i := range bits {
		bits[i] = boolean.Constant(v>>i&1 == 1)
	}
	return UInt64{Bits: bits, Value: v}
}

// Alloc allocates the 64 bits of v, least significant first, bit i in the
// namespace "allocated bit i".
func Alloc(cs r1cs.CS, v uint64) UInt64 {
	bits := make([]boolean.Boolean, 64)
	for i := range bits {
		cs.Push(r1cs.Nf("allocated bit %d", i))
		bits[i] = boolean.Is(boolean.AllocBit(cs, v>>i&1 == 1))
		cs.Pop()
	}
	return UInt64{Bits: bits, Value: v}
}

// PackIntoInput exposes the bits as one public input
// (multipack.PackIntoInputs: "input 0", "packing constraint 0").
func (u UInt64) PackIntoInput(cs r1cs.CS) {
	multipack.PackIntoInputs(cs, u.Bits)
}

// BitsBE is the bits, most significant first (a new slice).
func (u UInt64) BitsBE() []boolean.Boolean {
	out := make([]boolean.Boolean, len(u.Bits))
	for i, b := range u.Bits {
		out[len(out)-1-i] = b
	}
	return out
}

// BitsLE is the bits, least significant first (shared).
func (u UInt64) BitsLE() []boolean.Boolean { return u.Bits }

// FromBitsBE reads 64 bits, most significant first.
func FromBitsBE(bits []boolean.Boolean) UInt64 {
	if len(bits) != 64 {
		panic("uint64: FromBitsBE needs 64 bits")
	}
	le := make([]boolean.Boolean, 64)
	for i, b := range bits {
		le[63-i] = b
	}
	return FromBitsLE(le)
}

// FromBitsLE reads 64 bits, least significant first (sharing them).
func FromBitsLE(bits []boolean.Boolean) UInt64 {
	if len(bits) != 64 {
		panic("uint64: FromBitsLE needs 64 bits")
	}
	var v uint64
	for i, b := range bits {
		if b.Value() {
			v |= 1 << i
		}
	}
	return UInt64{Bits: bits, Value: v}
}
