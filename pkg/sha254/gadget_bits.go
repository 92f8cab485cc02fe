package sha254

import (
	"math/big"
	"reflect"

	"github.com/consensys/gnark/frontend"
)

// bit is one boolean of the SHA-256 gadget: a compile-time constant, or a
// linear expression whose value is 0 or 1 whenever the circuit is satisfied.
type bit struct {
	v     frontend.Variable
	c     int8 // -1 when variable, else the constant value 0 or 1
	terms int  // number of terms of v's linear expression (upper bound)
}

func cbit(b int) bit { return bit{v: b, c: int8(b)} }

func vbit(v frontend.Variable) bit { return bit{v: v, c: -1, terms: termsOf(v)} }

func (b bit) isConst() bool { return b.c >= 0 }

// termsOf estimates the length of v's linear expression. gnark's R1CS builder
// represents variables as slices of terms; any other representation (the
// test engine's values) counts as one term. The estimate only steers how
// equalities are packed into constraints (see packer); it never affects what
// is constrained.
func termsOf(v frontend.Variable) int {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return rv.Len()
	}
	return 1
}

// word is a 32-bit word; w[i] has weight 2^i. Words are handled by pointer:
// the pointer is the identity the packer uses to merge an operand that
// appears in two packed equalities.
type word struct {
	b   [32]bit
	val frontend.Variable // Σ 2^i·b[i], built on first use
}

func constWord(x uint32) *word {
	w := &word{}
	for i := range 32 {
		w.b[i] = cbit(int(x>>i) & 1)
	}
	return w
}

// constValue reports the word's value when all its bits are constants.
func (w *word) constValue() (uint32, bool) {
	var x uint32
	for i, b := range w.b {
		if !b.isConst() {
			return 0, false
		}
		x |= uint32(b.c) << i
	}
	return x, true
}

// maxValue is the largest value the word can take: every variable bit set.
func (w *word) maxValue() uint64 {
	var x uint64
	for i, b := range w.b {
		if !b.isConst() || b.c == 1 {
			x |= 1 << i
		}
	}
	return x
}

func rotr(w *word, k int) *word {
	out := &word{}
	for i := range 32 {
		out.b[i] = w.b[(i+k)%32]
	}
	return out
}

func shr(w *word, k int) *word {
	out := &word{}
	for i := range 32 {
		if i+k < 32 {
			out.b[i] = w.b[i+k]
		} else {
			out.b[i] = cbit(0)
		}
	}
	return out
}

// gadget builds one SHA-256 evaluation.
type gadget struct {
	api frontend.API
	eq  packer
}

// value returns the linear expression Σ 2^i·w[i].
func (g *gadget) value(w *word) frontend.Variable {
	if w.val == nil {
		terms := make([]frontend.Variable, 0, 33)
		var k uint64
		for i, b := range w.b {
			switch {
			case !b.isConst():
				terms = append(terms, g.api.Mul(b.v, uint64(1)<<i))
			case b.c == 1:
				k |= 1 << i
			}
		}
		if k != 0 {
			terms = append(terms, k)
		}
		w.val = sum(g.api, terms)
	}
	return w.val
}

func (g *gadget) not(a bit) bit {
	if a.isConst() {
		return cbit(1 - int(a.c))
	}
	return vbit(g.api.Sub(1, a.v))
}

// xor: a ⊕ b = a·(1 − 2b) + b, one constraint; b is the shorter expression
// so the result has 1 + terms(b) terms.
func (g *gadget) xor(a, b bit) bit {
	switch {
	case a.isConst() && b.isConst():
		return cbit(int(a.c ^ b.c))
	case a.isConst():
		if a.c == 0 {
			return b
		}
		return g.not(b)
	case b.isConst():
		if b.c == 0 {
			return a
		}
		return g.not(a)
	}
	if a.terms < b.terms {
		a, b = b, a
	}
	p := g.api.Mul(a.v, g.api.Sub(1, g.api.Mul(b.v, 2)))
	return vbit(g.api.Add(p, b.v))
}

func (g *gadget) xor3(a, b, c bit) bit {
	// XOR the two longest first so the last operand, which ends up in the
	// result's expression, is the shortest.
	if a.terms < c.terms {
		a, c = c, a
	}
	if b.terms < c.terms {
		b, c = c, b
	}
	return g.xor(g.xor(a, b), c)
}

// ch: e ? f : h = h + e·(f − h), one constraint.
func (g *gadget) ch(e, f, h bit) bit {
	if e.isConst() {
		if e.c == 1 {
			return f
		}
		return h
	}
	if f.isConst() && h.isConst() {
		switch {
		case f.c == h.c:
			return f
		case f.c == 1:
			return e
		default:
			return g.not(e)
		}
	}
	p := g.api.Mul(e.v, g.api.Sub(f.v, h.v))
	return vbit(g.api.Add(p, h.v))
}

// maj: majority of three bits. With no constant it is bellman's
// maj = bc + a·(b + c − 2bc), two constraints; a constant operand reduces it
// to an AND or an OR (one constraint), two constants to a constant or a
// copy.
func (g *gadget) maj(a, b, c bit) bit {
	var consts, vars []bit
	for _, x := range []bit{a, b, c} {
		if x.isConst() {
			consts = append(consts, x)
		} else {
			vars = append(vars, x)
		}
	}
	switch len(consts) {
	case 3:
		if int(a.c)+int(b.c)+int(c.c) >= 2 {
			return cbit(1)
		}
		return cbit(0)
	case 2:
		if consts[0].c == consts[1].c {
			return consts[0]
		}
		return vars[0]
	case 1:
		x, y := vars[0], vars[1]
		if consts[0].c == 0 { // x ∧ y
			return vbit(g.api.Mul(x.v, y.v))
		}
		// x ∨ y = 1 − (1 − x)(1 − y)
		return vbit(g.api.Sub(1, g.api.Mul(g.api.Sub(1, x.v), g.api.Sub(1, y.v))))
	}
	bc := g.api.Mul(b.v, c.v)
	p := g.api.Mul(a.v, g.api.Sub(g.api.Add(b.v, c.v), g.api.Mul(bc, 2)))
	return vbit(g.api.Add(bc, p))
}

func sum(api frontend.API, terms []frontend.Variable) frontend.Variable {
	switch len(terms) {
	case 0:
		return 0
	case 1:
		return terms[0]
	case 2:
		return api.Add(terms[0], terms[1])
	default:
		return api.Add(terms[0], terms[1], terms[2:]...)
	}
}

// pow2 returns 2^k as a big integer (coefficients beyond 64 bits).
func pow2(k int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(k)) }
