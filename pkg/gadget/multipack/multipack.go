package multipack

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Capacity is the number of bits one field element packs (the field's
// CAPACITY, fr.Bits − 1).
const Capacity = fr.Bits - 1

var coeffOne = fr.One()

// PackIntoInputs exposes bits as public inputs, Capacity bits per input,
// least significant first: for chunk i it allocates the input "input i"
// and the constraint Σ 2^j·bit_j · ONE = input ("packing constraint i").
// It returns the inputs.
func PackIntoInputs(cs r1cs.CS, bits []boolean.Boolean) []r1cs.Variable {
	var out []r1cs.Variable
	for i := 0; len(bits) > 0; i++ {
		chunk := bits[:min(Capacity, len(bits))]
		bits = bits[len(chunk):]
		n := pack(chunk)
		in := cs.AllocInput(r1cs.Nf("input %d", i), n.Val)
		if cs.Constraints() {
			var b, c r1cs.LC
			b.Add(r1cs.One)
			c.Add(in)
			cs.Enforce(r1cs.Nf("packing constraint %d", i), n.Scaled(&coeffOne), &b, &c)
		}
		out = append(out, in)
	}
	return out
}

// PackBits packs the first Capacity bits (least significant first) into
// an allocated number (namespace "input") with the constraint
// Σ 2^j·bit_j · ONE = num ("packing constraint").
func PackBits(cs r1cs.CS, bits []boolean.Boolean) num.AllocatedNum {
	n := pack(bits[:min(Capacity, len(bits))])
	cs.Push(r1cs.N("input"))
	x := num.Alloc(cs, n.Val)
	cs.Pop()
	if cs.Constraints() {
		var b, c r1cs.LC
		b.Add(r1cs.One)
		c.Add(x.V)
		cs.Enforce(r1cs.N("packing constraint"), n.Scaled(&coeffOne), &b, &c)
	}
	return x
}

func pack(bits []boolean.Boolean) num.Num {
	var n num.Num
	coeff := fr.One()
	for _, b := range bits {
		n.AddBoolWithCoeff(b, &coeff)
		coeff.Double(&coeff)
	}
	return n
}

// BytesToBits is the bits of bytes, each byte most significant bit first.
func BytesToBits(bytes []byte) []bool {
	out := make([]bool, 0, 8*len(bytes))
	for _, v := range bytes {
		for i := 7; i >= 0; i-- {
			out = append(out, v>>i&1 == 1)
		}
	}
	return out
}

// BytesToBitsLE is the bits of bytes, each byte least significant bit
// first.
func BytesToBitsLE(bytes []byte) []bool {
	out := make([]bool, 0, 8*len(bytes))
	for _, v := range bytes {
		for i := range 8 {
			out = append(out, v>>i&1 == 1)
		}
	}
	return out
}

// ComputeMultipacking is the public inputs PackIntoInputs makes of bits:
// Capacity bits per element, least significant first.
func ComputeMultipacking(bits []bool) []fr.Element {
	var out []fr.Element
	for len(bits) > 0 {
		chunk := bits[:min(Capacity, len(bits))]
		bits = bits[len(chunk):]
		var cur fr.Element
		coeff := fr.One()
		for _, b := range chunk {
			if b {
				cur.Add(&cur, &coeff)
			}
			coeff.Double(&coeff)
		}
		out = append(out, cur)
	}
	return out
}
