package boolean

import (
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// AllocatedBit is a variable constrained to be 0 or 1, and its value
// (bellpepper's AllocatedBit).
type AllocatedBit struct {
	V   r1cs.Variable
	Val bool
}

var (
	feZero fr.Element
	feOne  = fr.One()
	// coeffOne is the coefficient 1.
	coeffOne = fr.One()
)

// lcs is scratch for one constraint's combinations (the CS copies what
// it keeps), pooled: recording a circuit enforces millions of them.
type lcs struct{ a, b, c r1cs.LC }

var lcPool = sync.Pool{New: func() any { return new(lcs) }}

func scratch() *lcs {
	s := lcPool.Get().(*lcs)
	s.a.Reset()
	s.b.Reset()
	s.c.Reset()
	return s
}

func (s *lcs) enforce(cs r1cs.CS, name r1cs.Name) {
	cs.Enforce(name, &s.a, &s.b, &s.c)
	lcPool.Put(s)
}

// FieldElement is 1 or 0 as a field element.
func FieldElement(b bool) fr.Element {
	if b {
		return feOne
	}
	return feZero
}

// AllocBit allocates a bit ("boolean") and the constraint
// (1 − a) · a = 0 ("boolean constraint").
func AllocBit(cs r1cs.CS, v bool) AllocatedBit {
	x := cs.Alloc(r1cs.N("boolean"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		s.a.Add(r1cs.One).Sub(x)
		s.b.Add(x)
		s.enforce(cs, r1cs.N("boolean constraint"))
	}
	return AllocatedBit{V: x, Val: v}
}

// AllocBitConditionally allocates a bit ("boolean") that must be 0 when
// mustBeFalse is 1: (1 − mustBeFalse − a) · a = 0 ("boolean constraint").
func AllocBitConditionally(cs r1cs.CS, v bool, mustBeFalse AllocatedBit) AllocatedBit {
	x := cs.Alloc(r1cs.N("boolean"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		s.a.Add(r1cs.One).Sub(mustBeFalse.V).Sub(x)
		s.b.Add(x)
		s.enforce(cs, r1cs.N("boolean constraint"))
	}
	return AllocatedBit{V: x, Val: v}
}

// XorBits allocates a ⊕ b ("xor result") with (a + a) · b = a + b − c
// ("xor constraint").
func XorBits(cs r1cs.CS, a, b AllocatedBit) AllocatedBit {
	v := a.Val != b.Val
	x := cs.Alloc(r1cs.N("xor result"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		s.a.Add(a.V).Add(a.V)
		s.b.Add(b.V)
		s.c.Add(a.V).Add(b.V).Sub(x)
		s.enforce(cs, r1cs.N("xor constraint"))
	}
	return AllocatedBit{V: x, Val: v}
}

// AndBits allocates a ∧ b ("and result") with a · b = c ("and
// constraint").
func AndBits(cs r1cs.CS, a, b AllocatedBit) AllocatedBit {
	v := a.Val && b.Val
	x := cs.Alloc(r1cs.N("and result"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		s.a.Add(a.V)
		s.b.Add(b.V)
		s.c.Add(x)
		s.enforce(cs, r1cs.N("and constraint"))
	}
	return AllocatedBit{V: x, Val: v}
}

// AndNotBits allocates a ∧ ¬b ("and not result") with a · (1 − b) = c
// ("and not constraint").
func AndNotBits(cs r1cs.CS, a, b AllocatedBit) AllocatedBit {
	v := a.Val && !b.Val
	x := cs.Alloc(r1cs.N("and not result"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		s.a.Add(a.V)
		s.b.Add(r1cs.One).Sub(b.V)
		s.c.Add(x)
		s.enforce(cs, r1cs.N("and not constraint"))
	}
	return AllocatedBit{V: x, Val: v}
}

// NorBits allocates ¬a ∧ ¬b ("nor result") with (1 − a) · (1 − b) = c
// ("nor constraint").
func NorBits(cs r1cs.CS, a, b AllocatedBit) AllocatedBit {
	v := !a.Val && !b.Val
	x := cs.Alloc(r1cs.N("nor result"), FieldElement(v))
	if cs.Constraints() {
		s := scratch()
		s.a.Add(r1cs.One).Sub(a.V)
		s.b.Add(r1cs.One).Sub(b.V)
		s.c.Add(x)
		s.enforce(cs, r1cs.N("nor constraint"))
	}
	return AllocatedBit{V: x, Val: v}
}

// U64IntoBooleanVecLE allocates the 64 bits of v, least significant
// first, each in the namespace "bit i".
func U64IntoBooleanVecLE(cs r1cs.CS, v uint64) []Boolean {
	out := make([]Boolean, 64)
	for i := range out {
		cs.Push(r1cs.Nf("bit %d", i))
		out[i] = Is(AllocBit(cs, v>>i&1 == 1))
		cs.Pop()
	}
	return out
}

// FieldIntoAllocatedBitsLE allocates the fr.Bits (255) bits of v, least
// significant first, each in the namespace "bit i". Nothing ties them to v
// (num.AllocatedNum.ToBitsLE does).
func FieldIntoAllocatedBitsLE(cs r1cs.CS, v fr.Element) []AllocatedBit {
	limbs := v.Bits()
	out := make([]AllocatedBit, fr.Bits)
	for i := range out {
		cs.Push(r1cs.Nf("bit %d", i))
		out[i] = AllocBit(cs, limbs[i/64]>>(i%64)&1 == 1)
		cs.Pop()
	}
	return out
}

// FieldIntoBooleanVecLE is FieldIntoAllocatedBitsLE as Booleans.
func FieldIntoBooleanVecLE(cs r1cs.CS, v fr.Element) []Boolean {
	bits := FieldIntoAllocatedBitsLE(cs, v)
	out := make([]Boolean, len(bits))
	for i, b := range bits {
		out[i] = Is(b)
	}
	return out
}
