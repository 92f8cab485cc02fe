package insertion

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

var coeffOne = fr.One()

// Pick allocates, in the namespace name, a when cond is true and b
// otherwise ("pick result"), with (b − a) · cond = b − c ("pick").
func Pick(cs r1cs.CS, name r1cs.Name, cond boolean.Boolean, a, b num.AllocatedNum) num.AllocatedNum {
	cs.Push(name)
	v := b.Val
	if cond.Value() {
		v = a.Val
	}
	c := num.AllocatedNum{V: cs.Alloc(r1cs.N("pick result"), v), Val: v}
	if cs.Constraints() {
		var la, lc r1cs.LC
		la.Add(b.V).Sub(a.V)
		lc.Add(b.V).Sub(c.V)
		cs.Enforce(r1cs.N("pick"), &la, cond.LC(&coeffOne), &lc)
	}
	cs.Pop()
	return c
}

// Insert returns elements with element inserted at the position the bits
// give (least significant first): len(elements)+1 must be 2^len(bits).
// Sizes 2, 4 and 8 use bellperson's hand-written selections (size 8 needs
// allocated, unnegated bits); other sizes select each position from every
// candidate ("choice at pos").
func Insert(cs r1cs.CS, element num.AllocatedNum, bits []boolean.Boolean, elements []num.AllocatedNum) []num.AllocatedNum {
	size := len(elements) + 1
	if len(bits) >= 31 || 1<<len(bits) != size {
		panic(fmt.Sprintf("insertion: %d bits for %d elements", len(bits), size))
	}
	switch size {
	case 2:
		return insert2(cs, element, bits, elements)
	case 4:
		return insert4(cs, element, bits, elements)
	case 8:
		return insert8(cs, element, bits, elements)
	}
	out := make([]num.AllocatedNum, size)
	choices := make([]num.AllocatedNum, size)
	for pos := range size {
		for index := range size {
			switch {
			case pos < index:
				choices[index] = elements[pos]
			case pos == index:
				choices[index] = element
			default:
				choices[index] = elements[pos-1]
			}
		}
		cs.Push(r1cs.Nf("choice at %d", pos))
		out[pos] = Select(cs, choices, bits)
		cs.Pop()
	}
	return out
}

func insert2(cs r1cs.CS, x num.AllocatedNum, bits []boolean.Boolean, e []num.AllocatedNum) []num.AllocatedNum {
	b0 := bits[0]
	return []num.AllocatedNum{
		Pick(cs, r1cs.N("binary insert 0"), b0, e[0], x),
		Pick(cs, r1cs.N("binary insert 1"), b0, x, e[0]),
	}
}

func insert4(cs r1cs.CS, a num.AllocatedNum, bits []boolean.Boolean, e []num.AllocatedNum) []num.AllocatedNum {
	b0, b1 := bits[0], bits[1]
	b, c, d := e[0], e[1], e[2]
	p0x0 := Pick(cs, r1cs.N("p0_x0"), b0, b, a)
	p0 := Pick(cs, r1cs.N("p0"), b1, b, p0x0)
	p1x0 := Pick(cs, r1cs.N("p1_x0"), b0, a, b)
	p1 := Pick(cs, r1cs.N("p1"), b1, c, p1x0)
	p2x1 := Pick(cs, r1cs.N("p2_x1"), b0, d, a)
	p2 := Pick(cs, r1cs.N("p2"), b1, p2x1, c)
	p3x1 := Pick(cs, r1cs.N("p3_x1"), b0, a, d)
	p3 := Pick(cs, r1cs.N("p3"), b1, p3x1, d)
	return []num.AllocatedNum{p0, p1, p2, p3}
}

func insert8(cs r1cs.CS, a num.AllocatedNum, bits []boolean.Boolean, e []num.AllocatedNum) []num.AllocatedNum {
	b0, b1, b2 := bits[0], bits[1], bits[2]
	if b0.Kind != boolean.KindIs || b1.Kind != boolean.KindIs {
		panic("insertion: bits must be allocated and unnegated")
	}
	b, c, d, ee, f, g, h := e[0], e[1], e[2], e[3], e[4], e[5], e[6]
	cs.Push(r1cs.N("b0 nor b1"))
	nor := boolean.Is(boolean.NorBits(cs, b0.Bit, b1.Bit))
	cs.Pop()
	cs.Push(r1cs.N("b0 and b1"))
	and := boolean.Is(boolean.AndBits(cs, b0.Bit, b1.Bit))
	cs.Pop()

	p0xx0 := Pick(cs, r1cs.N("p0_xx0"), nor, a, b)
	p0 := Pick(cs, r1cs.N("p0"), b2, b, p0xx0)

	p1x00 := Pick(cs, r1cs.N("p1_x00"), b0, a, b)
	p1xx0 := Pick(cs, r1cs.N("p1_xx0"), b1, c, p1x00)
	p1 := Pick(cs, r1cs.N("p1"), b2, c, p1xx0)

	p2x10 := Pick(cs, r1cs.N("p2_x10"), b0, d, a)
	p2xx0 := Pick(cs, r1cs.N("p2_xx0"), b1, p2x10, c)
	p2 := Pick(cs, r1cs.N("p2"), b2, d, p2xx0)

	p3xx0 := Pick(cs, r1cs.N("p3_xx0"), and, a, d)
	p3 := Pick(cs, r1cs.N("p3"), b2, ee, p3xx0)

	p4xx1 := Pick(cs, r1cs.N("p4_xx1"), nor, a, f)
	p4 := Pick(cs, r1cs.N("p4"), b2, p4xx1, ee)

	p5x01 := Pick(cs, r1cs.N("p5_x01"), b0, a, f)
	p5xx1 := Pick(cs, r1cs.N("p5_xx1"), b1, g, p5x01)
	p5 := Pick(cs, r1cs.N("p5"), b2, p5xx1, f)

	p6x11 := Pick(cs, r1cs.N("p6_x11"), b0, h, a)
	p6xx1 := Pick(cs, r1cs.N("p6_xx1"), b1, p6x11, g)
	p6 := Pick(cs, r1cs.N("p6"), b2, p6xx1, g)

	p7xx1 := Pick(cs, r1cs.N("p7_xx1"), and, a, h)
	p7 := Pick(cs, r1cs.N("p7"), b2, p7xx1, h)

	return []num.AllocatedNum{p0, p1, p2, p3, p4, p5, p6, p7}
}

// Select returns from[n] where the bits give n (least significant first):
// len(from) must be 2^len(bits). It halves the candidates once per bit,
// the most significant first, pick j of round i in "pick i, j".
func Select(cs r1cs.CS, from []num.AllocatedNum, bits []boolean.Boolean) num.AllocatedNum {
	if len(bits) >= 31 || 1<<len(bits) != len(from) {
		panic(fmt.Sprintf("insertion: %d bits to select among %d", len(bits), len(from)))
	}
	state := append([]num.AllocatedNum(nil), from...)
	half := len(from) / 2
	for i := range bits {
		bit := bits[len(bits)-1-i]
		next := make([]num.AllocatedNum, half)
		for j := range half {
			next[j] = Pick(cs, r1cs.Nf2("pick %d, %d", i, j), bit, state[half+j], state[j])
		}
		state = next
		half /= 2
	}
	return state[0]
}
