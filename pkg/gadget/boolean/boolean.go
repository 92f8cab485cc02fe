package boolean

import (
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Kind is what a Boolean is: a constant, an allocated bit, or its
// negation.
type Kind uint8

const (
	// KindConstant is a constant (no variable).
	KindConstant Kind = iota
	// KindIs is an allocated bit.
	KindIs
	// KindNot is the negation of an allocated bit.
	KindNot
)

// Boolean is bellpepper's Boolean: Is(bit), Not(bit) or Constant(v). For
// a constant, Bit.Val is the value and Bit.V is unused. The zero value is
// Constant(false).
type Boolean struct {
	Bit  AllocatedBit
	Kind Kind
}

// Is is the bit itself.
func Is(b AllocatedBit) Boolean { return Boolean{Bit: b, Kind: KindIs} }

// Constant is the constant v.
func Constant(v bool) Boolean { return Boolean{Bit: AllocatedBit{Val: v}, Kind: KindConstant} }

// Not is the negation of x (no constraint).
func (x Boolean) Not() Boolean {
	switch x.Kind {
	case KindIs:
		x.Kind = KindNot
	case KindNot:
		x.Kind = KindIs
	default:
		x.Bit.Val = !x.Bit.Val
	}
	return x
}

// Value is x's value.
func (x Boolean) Value() bool {
	if x.Kind == KindNot {
		return !x.Bit.Val
	}
	return x.Bit.Val
}

// IsConstant reports whether x is a constant.
func (x Boolean) IsConstant() bool { return x.Kind == KindConstant }

func (x Boolean) isConst(v bool) bool { return x.Kind == KindConstant && x.Bit.Val == v }

// LC is coeff·x as a new combination (bellperson's lc(one, coeff)):
// coeff·ONE for true, nothing for false, coeff·v for Is(v), and
// coeff·ONE − coeff·v for Not(v).
func (x Boolean) LC(coeff *fr.Element) *r1cs.LC {
	var l r1cs.LC
	x.AddTo(&l, coeff)
	return &l
}

// AddTo adds coeff·x to l (l + x.LC(coeff), without the intermediate
// combination).
func (x Boolean) AddTo(l *r1cs.LC, coeff *fr.Element) {
	switch x.Kind {
	case KindConstant:
		if x.Bit.Val {
			l.AddCoeff(coeff, r1cs.One)
		}
	case KindIs:
		l.AddCoeff(coeff, x.Bit.V)
	case KindNot:
		l.AddCoeff(coeff, r1cs.One)
		l.SubCoeff(coeff, x.Bit.V)
	}
}

// SubFrom subtracts coeff·x from l (l − x.LC(coeff)).
func (x Boolean) SubFrom(l *r1cs.LC, coeff *fr.Element) {
	switch x.Kind {
	case KindConstant:
		if x.Bit.Val {
			l.SubCoeff(coeff, r1cs.One)
		}
	case KindIs:
		l.SubCoeff(coeff, x.Bit.V)
	case KindNot:
		l.SubCoeff(coeff, r1cs.One)
		l.AddCoeff(coeff, x.Bit.V)
	}
}

// ErrUnsatisfiable is EnforceEqual's error for two different constants
// (bellperson's SynthesisError::Unsatisfiable).
var ErrUnsatisfiable = errors.New("boolean: constraint is unsatisfiable")

// EnforceEqual constrains a = b: nothing for two constants (an error if
// they differ), 0 · 0 = 1 − x ("enforce equal to one") against true,
// 0 · 0 = x ("enforce equal to zero") against false, otherwise
// 0 · 0 = a − b ("enforce equal").
func EnforceEqual(cs r1cs.CS, a, b Boolean) error {
	if a.IsConstant() && b.IsConstant() {
		if a.Bit.Val != b.Bit.Val {
			return ErrUnsatisfiable
		}
		return nil
	}
	if !cs.Constraints() {
		return nil
	}
	s := scratch()
	switch {
	case a.isConst(true) || b.isConst(true):
		x := a
		if a.IsConstant() {
			x = b
		}
		s.c.Add(r1cs.One)
		x.SubFrom(&s.c, &coeffOne)
		s.enforce(cs, r1cs.N("enforce equal to one"))
	case a.isConst(false) || b.isConst(false):
		x := a
		if a.IsConstant() {
			x = b
		}
		x.AddTo(&s.c, &coeffOne)
		s.enforce(cs, r1cs.N("enforce equal to zero"))
	default:
		a.AddTo(&s.c, &coeffOne)
		b.SubFrom(&s.c, &coeffOne)
		s.enforce(cs, r1cs.N("enforce equal"))
	}
	return nil
}

// Xor is a ⊕ b: constants fold (x ⊕ false = x, x ⊕ true = ¬x); Is ⊕ Not is
// ¬(is ⊕ bit of not), the Is operand first; Is ⊕ Is and Not ⊕ Not
// allocate the xor of the two bits (XorBits).
func Xor(cs r1cs.CS, a, b Boolean) Boolean {
	switch {
	case a.isConst(false):
		return b
	case b.isConst(false):
		return a
	case a.isConst(true):
		return b.Not()
	case b.isConst(true):
		return a.Not()
	case a.Kind == b.Kind:
		return Is(XorBits(cs, a.Bit, b.Bit))
	case a.Kind == KindIs:
		return Is(XorBits(cs, a.Bit, b.Bit)).Not()
	default:
		return Is(XorBits(cs, b.Bit, a.Bit)).Not()
	}
}

// And is a ∧ b: false ∧ x = false, true ∧ x = x; Is ∧ Not allocates
// is ∧ ¬not (AndNotBits, the Is operand first), Not ∧ Not their nor, Is ∧
// Is their and.
func And(cs r1cs.CS, a, b Boolean) Boolean {
	switch {
	case a.isConst(false), b.isConst(false):
		return Constant(false)
	case a.isConst(true):
		return b
	case b.isConst(true):
		return a
	case a.Kind == KindIs && b.Kind == KindNot:
		return Is(AndNotBits(cs, a.Bit, b.Bit))
	case a.Kind == KindNot && b.Kind == KindIs:
		return Is(AndNotBits(cs, b.Bit, a.Bit))
	case a.Kind == KindNot:
		return Is(NorBits(cs, a.Bit, b.Bit))
	default:
		return Is(AndBits(cs, a.Bit, b.Bit))
	}
}

// Or is a ∨ b = ¬(¬a ∧ ¬b), the And in the namespace
// "not and (not a) (not b)".
func Or(cs r1cs.CS, a, b Boolean) Boolean {
	cs.Push(r1cs.N("not and (not a) (not b)"))
	r := And(cs, a.Not(), b.Not())
	cs.Pop()
	return r.Not()
}

// Sha256Ch is (a ∧ b) ⊕ (¬a ∧ c). With constants it folds as bellperson
// does (to a constant, to c, or to one And); otherwise it allocates "ch"
// with (b − c) · a = ch − c ("ch computation").
func Sha256Ch(cs r1cs.CS, a, b, c Boolean) Boolean {
	av, bv, cv := a.Value(), b.Value(), c.Value()
	v := (av && bv) != (!av && cv)
	switch {
	case a.IsConstant() && b.IsConstant() && c.IsConstant():
		return Constant(v)
	case a.isConst(false):
		return c
	case b.isConst(false):
		return And(cs, a.Not(), c)
	case c.isConst(false):
		return And(cs, a, b)
	case c.isConst(true):
		return And(cs, a, b.Not()).Not()
	case b.isConst(true):
		return And(cs, a.Not(), c.Not()).Not()
	}
	// a is an allocated bit or true; b and c are allocated bits.
	ch := cs.Alloc(r1cs.N("ch"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		b.AddTo(&s.a, &coeffOne)
		c.SubFrom(&s.a, &coeffOne)
		a.AddTo(&s.b, &coeffOne)
		s.c.Add(ch)
		c.SubFrom(&s.c, &coeffOne)
		s.enforce(cs, r1cs.N("ch computation"))
	}
	return Is(AllocatedBit{V: ch, Val: v})
}

// Sha256Maj is (a ∧ b) ⊕ (a ∧ c) ⊕ (b ∧ c). With constants it folds as
// bellperson does; otherwise it allocates "maj", then b ∧ c (namespace "b
// and c"), with (2bc − b − c) · a = bc − maj ("maj computation").
func Sha256Maj(cs r1cs.CS, a, b, c Boolean) Boolean {
	av, bv, cv := a.Value(), b.Value(), c.Value()
	v := (av && bv) != (av && cv) != (bv && cv)
	switch {
	case a.IsConstant() && b.IsConstant() && c.IsConstant():
		return Constant(v)
	case a.isConst(false):
		return And(cs, b, c)
	case b.isConst(false):
		return And(cs, a, c)
	case c.isConst(false):
		return And(cs, a, b)
	case c.isConst(true):
		return And(cs, a.Not(), b.Not()).Not()
	case b.isConst(true):
		return And(cs, a.Not(), c.Not()).Not()
	case a.isConst(true):
		return And(cs, b.Not(), c.Not()).Not()
	}
	maj := cs.Alloc(r1cs.N("maj"), FieldElement(v))
	cs.Push(r1cs.N("b and c"))
	bc := And(cs, b, c)
	cs.Pop()
	if cs.Constraints() {
		s := scratch()
		bc.AddTo(&s.a, &coeffOne)
		bc.AddTo(&s.a, &coeffOne)
		b.SubFrom(&s.a, &coeffOne)
		c.SubFrom(&s.a, &coeffOne)
		a.AddTo(&s.b, &coeffOne)
		bc.AddTo(&s.c, &coeffOne)
		s.c.Sub(maj)
		s.enforce(cs, r1cs.N("maj computation"))
	}
	return Is(AllocatedBit{V: maj, Val: v})
}
