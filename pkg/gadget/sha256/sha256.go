package sha256

import (
	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	u32 "github.com/c2cluster/c2cluster/pkg/gadget/uint32"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

var roundConstants = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var iv = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// IV is SHA-256's initial state as constant words.
func IV() []u32.UInt32 {
	out := make([]u32.UInt32, 8)
	for i, v := range iv {
		out[i] = u32.Constant(v)
	}
	return out
}

// Hash is SHA-256 of input (a whole number of bytes, each most
// significant bit first), padded with constants: block i is compressed in
// the namespace "block i". The digest is 256 Booleans, most significant
// bit of each byte first.
func Hash(cs r1cs.CS, input []boolean.Boolean) []boolean.Boolean {
	if len(input)%8 != 0 {
		panic("sha256: input is not a whole number of bytes")
	}
	padded := Pad(input)
	cur := IV()
	for i := 0; i < len(padded); i += 512 {
		cs.Push(r1cs.Nf("block %d", i/512))
		cur = Compress(cs, padded[i:i+512], cur)
		cs.Pop()
	}
	return digest(cur)
}

// Pad is input followed by SHA-256's padding as constants: a one, zeros,
// and the input's length in bits as a 64-bit big-endian number.
func Pad(input []boolean.Boolean) []boolean.Boolean {
	n := len(input)
	total := (n + 1 + 64 + 511) / 512 * 512
	padded := make([]boolean.Boolean, total)
	copy(padded, input)
	padded[n] = boolean.Constant(true)
	for i := range 64 {
		padded[total-1-i] = boolean.Constant(uint64(n)>>i&1 == 1)
	}
	return padded
}

// BlockNoPadding is the compression of one 512-bit block from the IV,
// with no padding and no namespace of its own.
func BlockNoPadding(cs r1cs.CS, input []boolean.Boolean) []boolean.Boolean {
	if len(input) != 512 {
		panic("sha256: BlockNoPadding needs 512 bits")
	}
	return digest(Compress(cs, input, IV()))
}

func digest(state []u32.UInt32) []boolean.Boolean {
	out := make([]boolean.Boolean, 0, 256)
	for _, w := range state {
		for i := 31; i >= 0; i-- {
			out = append(out, w.Bits[i])
		}
	}
	return out
}

// Compress is SHA-256's compression function of a 512-bit block (most
// significant bit of each word first) on state (8 words), with the
// additions' equalities batched in one MultiEq, flushed at its end in the
// caller's namespace. Under namespaces "w extension i" (16 ≤ i < 64) and
// "compression round i", the additions that produce e and a are deferred
// to where the next round uses them ("deferred e computation", "deferred
// a computation"), and the final state's h0 and h4 join them ("deferred
// h0/h4 computation"); the others are "new h1" … "new h7".
//
// On a CS with Constraints() false that implements r1cs.Bulk, the values
// are computed natively (the same variables, values and results).
func Compress(cs r1cs.CS, input []boolean.Boolean, state []u32.UInt32) []u32.UInt32 {
	if len(input) != 512 || len(state) != 8 {
		panic("sha256: Compress needs 512 bits and 8 state words")
	}
	if b, ok := cs.(r1cs.Bulk); ok && !cs.Constraints() {
		return compressBulk(b, input, state)
	}
	var w [64]u32.UInt32
	for i := range 16 {
		w[i] = u32.FromBitsBE(input[32*i : 32*i+32])
	}
	m := u32.NewMultiEq(cs)
	for i := 16; i < 64; i++ {
		m.Push(r1cs.Nf("w extension %d", i))
		s0 := w[i-15].Rotr(7)
		s0 = xorIn(m, "first xor for s0", s0, w[i-15].Rotr(18))
		s0 = xorIn(m, "second xor for s0", s0, w[i-15].Shr(3))
		s1 := w[i-2].Rotr(17)
		s1 = xorIn(m, "first xor for s1", s1, w[i-2].Rotr(19))
		s1 = xorIn(m, "second xor for s1", s1, w[i-2].Shr(10))
		m.Push(r1cs.N("computation of w[i]"))
		w[i] = u32.AddMany(m, []u32.UInt32{w[i-16], s0, w[i-7], s1})
		m.Pop()
		m.Pop()
	}

	a := deferred{v: state[0]}
	b, c, d := state[1], state[2], state[3]
	e := deferred{v: state[4]}
	f, g, h := state[5], state[6], state[7]
	for i := range 64 {
		m.Push(r1cs.Nf("compression round %d", i))
		newE := e.compute(m, "deferred e computation")
		s1 := newE.Rotr(6)
		s1 = xorIn(m, "first xor for s1", s1, newE.Rotr(11))
		s1 = xorIn(m, "second xor for s1", s1, newE.Rotr(25))
		m.Push(r1cs.N("ch"))
		ch := u32.Sha256Ch(m, newE, f, g)
		m.Pop()
		temp1 := []u32.UInt32{h, s1, ch, u32.Constant(roundConstants[i]), w[i]}

		newA := a.compute(m, "deferred a computation")
		s0 := newA.Rotr(2)
		s0 = xorIn(m, "first xor for s0", s0, newA.Rotr(13))
		s0 = xorIn(m, "second xor for s0", s0, newA.Rotr(22))
		m.Push(r1cs.N("maj"))
		maj := u32.Sha256Maj(m, newA, b, c)
		m.Pop()

		h, g, f = g, f, newE
		e = deferred{ops: append(append(make([]u32.UInt32, 0, 7), temp1...), d)}
		d, c, b = c, b, newA
		a = deferred{ops: append(append(make([]u32.UInt32, 0, 8), temp1...), s0, maj)}
		m.Pop()
	}

	out := make([]u32.UInt32, 8)
	out[0] = a.computeWith(m, "deferred h0 computation", state[0])
	out[1] = addIn(m, "new h1", state[1], b)
	out[2] = addIn(m, "new h2", state[2], c)
	out[3] = addIn(m, "new h3", state[3], d)
	out[4] = e.computeWith(m, "deferred h4 computation", state[4])
	out[5] = addIn(m, "new h5", state[5], f)
	out[6] = addIn(m, "new h6", state[6], g)
	out[7] = addIn(m, "new h7", state[7], h)
	m.Close()
	return out
}

func xorIn(m *u32.MultiEq, ns string, a, b u32.UInt32) u32.UInt32 {
	m.Push(r1cs.N(ns))
	r := a.Xor(m, b)
	m.Pop()
	return r
}

func addIn(m *u32.MultiEq, ns string, a, b u32.UInt32) u32.UInt32 {
	m.Push(r1cs.N(ns))
	r := u32.AddMany(m, []u32.UInt32{a, b})
	m.Pop()
	return r
}

// deferred is a word known (v) or still the sum of ops.
type deferred struct {
	v   u32.UInt32
	ops []u32.UInt32
}

func (x deferred) compute(m *u32.MultiEq, ns string) u32.UInt32 {
	if x.ops == nil {
		return x.v
	}
	m.Push(r1cs.N(ns))
	r := u32.AddMany(m, x.ops)
	m.Pop()
	return r
}

func (x deferred) computeWith(m *u32.MultiEq, ns string, extra u32.UInt32) u32.UInt32 {
	if x.ops == nil {
		return x.v
	}
	return deferred{ops: append(x.ops, extra)}.compute(m, ns)
}
