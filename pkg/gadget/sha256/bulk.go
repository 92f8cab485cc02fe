package sha256

import (
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	u32 "github.com/c2cluster/c2cluster/pkg/gadget/uint32"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// The native witness path: the compression on words that carry, besides
// their value, which bits are constants, which are negated allocated bits,
// and each allocated bit's variable. Every operation allocates what the
// gadget path allocates for it, in the same order and with the same
// values, through r1cs.Bulk.

// feBit is 0 and 1 as field elements.
var feBit = [2]fr.Element{{}, fr.One()}

type word struct {
	val  uint32 // the value
	cnst uint32 // constant bits
	neg  uint32 // bits that are a negated variable (never constant bits)
	v    [32]r1cs.Variable
}

// raw is the allocated variables' own values (a negated bit's variable
// holds the opposite of the bit).
func (w *word) raw() uint32 { return w.val ^ w.neg }

func constWord(v uint32) word { return word{val: v, cnst: ^uint32(0)} }

func wordFromBits(get func(i int) boolean.Boolean) word {
	var w word
	for i := range 32 {
		b := get(i)
		if b.Value() {
			w.val |= 1 << i
		}
		switch b.Kind {
		case boolean.KindConstant:
			w.cnst |= 1 << i
		case boolean.KindNot:
			w.neg |= 1 << i
			w.v[i] = b.Bit.V
		default:
			w.v[i] = b.Bit.V
		}
	}
	return w
}

func (w *word) bit(i int) boolean.Boolean {
	m := uint32(1) << i
	switch {
	case w.cnst&m != 0:
		return boolean.Constant(w.val&m != 0)
	case w.neg&m != 0:
		return boolean.Is(boolean.AllocatedBit{V: w.v[i], Val: w.val&m == 0}).Not()
	}
	return boolean.Is(boolean.AllocatedBit{V: w.v[i], Val: w.val&m != 0})
}

func (w *word) setBit(i int, b boolean.Boolean) {
	m := uint32(1) << i
	w.val &^= m
	w.cnst &^= m
	w.neg &^= m
	w.v[i] = 0
	if b.Value() {
		w.val |= m
	}
	switch b.Kind {
	case boolean.KindConstant:
		w.cnst |= m
	case boolean.KindNot:
		w.neg |= m
		w.v[i] = b.Bit.V
	default:
		w.v[i] = b.Bit.V
	}
}

func (w *word) uint32() u32.UInt32 {
	x := u32.UInt32{Val: w.val}
	for i := range x.Bits {
		x.Bits[i] = w.bit(i)
	}
	return x
}

func (w *word) rotr(by int) word {
	r := word{
		val:  bits.RotateLeft32(w.val, -by),
		cnst: bits.RotateLeft32(w.cnst, -by),
		neg:  bits.RotateLeft32(w.neg, -by),
	}
	copy(r.v[:], w.v[by:])
	copy(r.v[32-by:], w.v[:by])
	return r
}

func (w *word) shr(by int) word {
	r := word{val: w.val >> by, cnst: w.cnst>>by | ^uint32(0)<<(32-by), neg: w.neg >> by}
	copy(r.v[:], w.v[by:])
	return r
}

// bulk allocates through r1cs.Bulk; as an r1cs.CS (Constraints false) it
// lets the boolean gadgets allocate through it too.
type bulk struct {
	b r1cs.Bulk
}

func (c *bulk) Alloc(_ r1cs.Name, v fr.Element) r1cs.Variable {
	first, vals := c.b.AllocAux(1)
	vals[0] = v
	return first
}

func (c *bulk) AllocInput(r1cs.Name, fr.Element) r1cs.Variable {
	panic("sha256: the compression allocates no input")
}
func (c *bulk) Enforce(r1cs.Name, *r1cs.LC, *r1cs.LC, *r1cs.LC) {}
func (c *bulk) Push(r1cs.Name)                                  {}
func (c *bulk) Pop()                                            {}
func (c *bulk) Constraints() bool                               { return false }

// xor is the word gadget's Xor: a bit with a constant side folds, the
// others each allocate the xor of the two variables' values.
func (c *bulk) xor(a, b *word) word {
	onlyA := a.cnst &^ b.cnst // a constant, b a variable: b or ¬b
	onlyB := b.cnst &^ a.cnst
	both := ^(a.cnst | b.cnst)
	r := word{
		val:  a.val ^ b.val,
		cnst: a.cnst & b.cnst,
		neg:  onlyA&(b.neg^a.val) | onlyB&(a.neg^b.val) | both&(a.neg^b.neg),
	}
	if both == ^uint32(0) {
		first, vals := c.b.AllocAux(32)
		vals = vals[:32]
		raw := a.raw() ^ b.raw()
		for i := range 32 {
			vals[i] = feBit[raw>>i&1]
			r.v[i] = first + r1cs.Variable(i)
		}
		return r
	}
	var first r1cs.Variable
	var vals []fr.Element
	if n := bits.OnesCount32(both); n > 0 {
		first, vals = c.b.AllocAux(n)
	}
	raw := a.raw() ^ b.raw()
	k := 0
	for i := range 32 {
		m := uint32(1) << i
		switch {
		case both&m != 0:
			vals[k] = feBit[raw>>i&1]
			r.v[i] = first + r1cs.Variable(k)
			k++
		case onlyA&m != 0:
			r.v[i] = b.v[i]
		case onlyB&m != 0:
			r.v[i] = a.v[i]
		}
	}
	return r
}

// addMany is uint32.AddMany: a constant when every bit is, else the
// allocated bits of the whole sum.
func (c *bulk) addMany(ops ...*word) word {
	var sum uint64
	cnst := ^uint32(0)
	for _, o := range ops {
		sum += uint64(o.val)
		cnst &= o.cnst
	}
	if cnst == ^uint32(0) {
		return constWord(uint32(sum))
	}
	n := u32.SumBits(len(ops))
	first, vals := c.b.AllocAux(n)
	for i := range n {
		vals[i] = feBit[sum>>i&1]
	}
	r := word{val: uint32(sum)}
	for i := range 32 {
		r.v[i] = first + r1cs.Variable(i)
	}
	return r
}

// ch is uint32.Sha256Ch: with no constant operand bit every bit allocates
// its value; otherwise the bits go through boolean.Sha256Ch one by one.
func (c *bulk) ch(e, f, g *word) word {
	val := e.val&f.val ^ ^e.val&g.val
	if e.cnst|f.cnst|g.cnst == 0 {
		first, vals := c.b.AllocAux(32)
		vals = vals[:32]
		r := word{val: val}
		for i := range 32 {
			vals[i] = feBit[val>>i&1]
			r.v[i] = first + r1cs.Variable(i)
		}
		return r
	}
	var r word
	for i := range 32 {
		r.setBit(i, boolean.Sha256Ch(c, e.bit(i), f.bit(i), g.bit(i)))
	}
	return r
}

// maj is uint32.Sha256Maj: with no constant operand bit every bit
// allocates maj, then b ∧ c; otherwise the bits go through
// boolean.Sha256Maj one by one.
func (c *bulk) maj(a, b, cc *word) word {
	val := a.val&b.val ^ a.val&cc.val ^ b.val&cc.val
	if a.cnst|b.cnst|cc.cnst == 0 {
		first, vals := c.b.AllocAux(64)
		vals = vals[:64]
		bc := b.val & cc.val
		r := word{val: val}
		for i := range 32 {
			vals[2*i] = feBit[val>>i&1]
			vals[2*i+1] = feBit[bc>>i&1]
			r.v[i] = first + r1cs.Variable(2*i)
		}
		return r
	}
	var r word
	for i := range 32 {
		r.setBit(i, boolean.Sha256Maj(c, a.bit(i), b.bit(i), cc.bit(i)))
	}
	return r
}

func (c *bulk) sigma(x *word, r1, r2, r3 int, shift bool) word {
	p, q := x.rotr(r1), x.rotr(r2)
	s := c.xor(&p, &q)
	if shift {
		q = x.shr(r3)
	} else {
		q = x.rotr(r3)
	}
	return c.xor(&s, &q)
}

func compressBulk(b r1cs.Bulk, input []boolean.Boolean, state []u32.UInt32) []u32.UInt32 {
	c := &bulk{b: b}
	var w [64]word
	for i := range 16 {
		blk := input[32*i : 32*i+32]
		w[i] = wordFromBits(func(j int) boolean.Boolean { return blk[31-j] })
	}
	for i := 16; i < 64; i++ {
		s0 := c.sigma(&w[i-15], 7, 18, 3, true)
		s1 := c.sigma(&w[i-2], 17, 19, 10, true)
		w[i] = c.addMany(&w[i-16], &s0, &w[i-7], &s1)
	}

	var st [8]word
	for i := range st {
		x := &state[i]
		st[i] = wordFromBits(func(j int) boolean.Boolean { return x.Bits[j] })
	}
	// e and a are deferred sums: e = temp1 + d, a = temp1 + s0 + maj, with
	// temp1 = h + S1 + ch + k + w; the first round's are the state's.
	a, b0, cw, d := st[0], st[1], st[2], st[3]
	e, f, g, h := st[4], st[5], st[6], st[7]
	var eOps [6]word
	var aOps [7]word
	for i := range 64 {
		newE := e
		if i > 0 {
			newE = c.addMany(&eOps[0], &eOps[1], &eOps[2], &eOps[3], &eOps[4], &eOps[5])
		}
		s1 := c.sigma(&newE, 6, 11, 25, false)
		ch := c.ch(&newE, &f, &g)
		k := constWord(roundConstants[i])

		newA := a
		if i > 0 {
			newA = c.addMany(&aOps[0], &aOps[1], &aOps[2], &aOps[3], &aOps[4], &aOps[5], &aOps[6])
		}
		s0 := c.sigma(&newA, 2, 13, 22, false)
		maj := c.maj(&newA, &b0, &cw)

		eOps = [6]word{h, s1, ch, k, w[i], d}
		aOps = [7]word{h, s1, ch, k, w[i], s0, maj}
		h, g, f = g, f, newE
		d, cw, b0 = cw, b0, newA
	}

	out := make([]u32.UInt32, 8)
	h0 := c.addMany(&aOps[0], &aOps[1], &aOps[2], &aOps[3], &aOps[4], &aOps[5], &aOps[6], &st[0])
	out[0] = h0.uint32()
	for j, x := range []*word{&b0, &cw, &d} {
		r := c.addMany(&st[1+j], x)
		out[1+j] = r.uint32()
	}
	h4 := c.addMany(&eOps[0], &eOps[1], &eOps[2], &eOps[3], &eOps[4], &eOps[5], &st[4])
	out[4] = h4.uint32()
	for j, x := range []*word{&f, &g, &h} {
		r := c.addMany(&st[5+j], x)
		out[5+j] = r.uint32()
	}
	return out
}
