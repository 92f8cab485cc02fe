package r1cs

import (
	"sort"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Term is one variable of a linear combination and its coefficient.
type Term struct {
	V Variable
	C fr.Element
}

// LC is a linear combination with bellpepper-core's semantics: one term per
// variable, sorted (inputs first, each by index), adding a variable already
// present adds to its coefficient, and a term whose coefficient sums to zero
// is kept (as bellpepper's; the prover's densities and the hash skip it).
// The zero value is the empty
// combination.
//
// Methods change the receiver and return it, for chaining; Clone before
// deriving two combinations from one.
type LC struct {
	terms []Term
}

var (
	coeffOne      = fr.One()
	coeffMinusOne = func() fr.Element { var m fr.Element; m.Neg(&coeffOne); return m }()
)

// Terms are the combination's terms, in order (read only).
func (l *LC) Terms() []Term { return l.terms }

// Len is the number of terms (zero coefficients included).
func (l *LC) Len() int { return len(l.terms) }

// Reset empties l, keeping its storage.
func (l *LC) Reset() *LC { l.terms = l.terms[:0]; return l }

// Clone returns a copy sharing nothing with l.
func (l *LC) Clone() *LC {
	return &LC{terms: append([]Term(nil), l.terms...)}
}

// AddCoeff adds c·v.
func (l *LC) AddCoeff(c *fr.Element, v Variable) *LC {
	n := len(l.terms)
	if n == 0 || l.terms[n-1].V < v {
		l.terms = append(l.terms, Term{V: v, C: *c})
		return l
	}
	if l.terms[n-1].V == v {
		l.terms[n-1].C.Add(&l.terms[n-1].C, c)
		return l
	}
	i := sort.Search(n, func(i int) bool { return l.terms[i].V >= v })
	if l.terms[i].V == v {
		l.terms[i].C.Add(&l.terms[i].C, c)
		return l
	}
	l.terms = append(l.terms, Term{})
	copy(l.terms[i+1:], l.terms[i:n])
	l.terms[i] = Term{V: v, C: *c}
	return l
}

// SubCoeff adds −c·v.
func (l *LC) SubCoeff(c *fr.Element, v Variable) *LC {
	var m fr.Element
	m.Neg(c)
	return l.AddCoeff(&m, v)
}

// Add adds 1·v.
func (l *LC) Add(v Variable) *LC { return l.AddCoeff(&coeffOne, v) }

// Sub adds −1·v.
func (l *LC) Sub(v Variable) *LC { return l.AddCoeff(&coeffMinusOne, v) }

// AddLC adds every term of o.
func (l *LC) AddLC(o *LC) *LC {
	for i := range o.terms {
		l.AddCoeff(&o.terms[i].C, o.terms[i].V)
	}
	return l
}

// SubLC subtracts every term of o.
func (l *LC) SubLC(o *LC) *LC {
	for i := range o.terms {
		l.SubCoeff(&o.terms[i].C, o.terms[i].V)
	}
	return l
}

// AddScaled adds c·o.
func (l *LC) AddScaled(c *fr.Element, o *LC) *LC {
	var t fr.Element
	for i := range o.terms {
		t.Mul(&o.terms[i].C, c)
		l.AddCoeff(&t, o.terms[i].V)
	}
	return l
}

// SubScaled adds −c·o.
func (l *LC) SubScaled(c *fr.Element, o *LC) *LC {
	var t fr.Element
	for i := range o.terms {
		t.Mul(&o.terms[i].C, c)
		l.SubCoeff(&t, o.terms[i].V)
	}
	return l
}

// Scale multiplies every coefficient by c.
func (l *LC) Scale(c *fr.Element) *LC {
	for i := range l.terms {
		l.terms[i].C.Mul(&l.terms[i].C, c)
	}
	return l
}

// Eval is Σ c·value(v).
func (l *LC) Eval(value func(Variable) *fr.Element) fr.Element {
	var acc, t fr.Element
	for i := range l.terms {
		t.Mul(&l.terms[i].C, value(l.terms[i].V))
		acc.Add(&acc, &t)
	}
	return acc
}

// String writes l in the oracle dump's form (zero terms dropped).
func (l *LC) String() string {
	var b strings.Builder
	n := 0
	for i := range l.terms {
		if l.terms[i].C.IsZero() {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(FormatCoeff(&l.terms[i].C))
		b.WriteByte('*')
		b.WriteString(l.terms[i].V.String())
		n++
	}
	if n == 0 {
		return "0"
	}
	return b.String()
}

// Coeff returns c as a field element (negative values allowed).
func Coeff(c int64) fr.Element {
	var e fr.Element
	if c < 0 {
		e.SetUint64(uint64(-c))
		e.Neg(&e)
	} else {
		e.SetUint64(uint64(c))
	}
	return e
}

// PowerOfTwo returns 2^k.
func PowerOfTwo(k int) fr.Element {
	var e fr.Element
	e.SetOne()
	for range k {
		e.Double(&e)
	}
	return e
}
