package num

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// AllocatedNum is a variable and its value (bellpepper's AllocatedNum).
type AllocatedNum struct {
	V   r1cs.Variable
	Val fr.Element
}

// Alloc allocates an aux variable named "num".
func Alloc(cs r1cs.CS, v fr.Element) AllocatedNum {
	return AllocatedNum{V: cs.Alloc(r1cs.N("num"), v), Val: v}
}

// AllocInput allocates an input variable named "input num".
func AllocInput(cs r1cs.CS, v fr.Element) AllocatedNum {
	return AllocatedNum{V: cs.AllocInput(r1cs.N("input num"), v), Val: v}
}

// Inputize allocates an input ("input variable") equal to n and the
// constraint input · ONE = n ("enforce input is correct").
func (n AllocatedNum) Inputize(cs r1cs.CS) r1cs.Variable {
	in := cs.AllocInput(r1cs.N("input variable"), n.Val)
	if cs.Constraints() {
		var a, b, c r1cs.LC
		a.Add(in)
		b.Add(r1cs.One)
		c.Add(n.V)
		cs.Enforce(r1cs.N("enforce input is correct"), &a, &b, &c)
	}
	return in
}

// Mul allocates "product num" = n·o and constrains it ("multiplication
// constraint").
func (n AllocatedNum) Mul(cs r1cs.CS, o AllocatedNum) AllocatedNum {
	var v fr.Element
	v.Mul(&n.Val, &o.Val)
	p := AllocatedNum{V: cs.Alloc(r1cs.N("product num"), v), Val: v}
	if cs.Constraints() {
		var a, b, c r1cs.LC
		a.Add(n.V)
		b.Add(o.V)
		c.Add(p.V)
		cs.Enforce(r1cs.N("multiplication constraint"), &a, &b, &c)
	}
	return p
}

// Square allocates "squared num" = n² and constrains it ("squaring
// constraint").
func (n AllocatedNum) Square(cs r1cs.CS) AllocatedNum {
	var v fr.Element
	v.Square(&n.Val)
	p := AllocatedNum{V: cs.Alloc(r1cs.N("squared num"), v), Val: v}
	if cs.Constraints() {
		var a, b, c r1cs.LC
		a.Add(n.V)
		b.Add(n.V)
		c.Add(p.V)
		cs.Enforce(r1cs.N("squaring constraint"), &a, &b, &c)
	}
	return p
}

// Add allocates "sum num" = n + o and constrains it ("addition
// constraint": (n + o) · ONE = sum).
func (n AllocatedNum) Add(cs r1cs.CS, o AllocatedNum) AllocatedNum {
	var v fr.Element
	v.Add(&n.Val, &o.Val)
	s := AllocatedNum{V: cs.Alloc(r1cs.N("sum num"), v), Val: v}
	if cs.Constraints() {
		var a, b, c r1cs.LC
		a.Add(n.V).Add(o.V)
		b.Add(r1cs.One)
		c.Add(s.V)
		cs.Enforce(r1cs.N("addition constraint"), &a, &b, &c)
	}
	return s
}

// Num is a linear combination and its value (bellpepper's Num).
type Num struct {
	LC  r1cs.LC
	Val fr.Element
}

// FromAllocated is 1·n.
func FromAllocated(n AllocatedNum) Num {
	var x Num
	x.LC.Add(n.V)
	x.Val = n.Val
	return x
}

// Scaled is c·x, as a new combination (bellpepper's Num::lc(coeff)).
func (x *Num) Scaled(c *fr.Element) *r1cs.LC {
	var l r1cs.LC
	return l.AddScaled(c, &x.LC)
}

// AddNum adds o to x.
func (x *Num) AddNum(o *Num) *Num {
	x.LC.AddLC(&o.LC)
	x.Val.Add(&x.Val, &o.Val)
	return x
}

// Scale multiplies x by c, every coefficient and the value.
func (x *Num) Scale(c *fr.Element) *Num {
	x.LC.Scale(c)
	x.Val.Mul(&x.Val, c)
	return x
}
