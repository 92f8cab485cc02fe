package constraint

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Equal enforces a · ONE = b under name.
func Equal(cs r1cs.CS, name r1cs.Name, a, b num.AllocatedNum) {
	if !cs.Constraints() {
		return
	}
	var la, lb, lc r1cs.LC
	la.Add(a.V)
	lb.Add(r1cs.One)
	lc.Add(b.V)
	cs.Enforce(name, &la, &lb, &lc)
}

// Sum enforces (a + b) · ONE = s under name.
func Sum(cs r1cs.CS, name r1cs.Name, a, b, s num.AllocatedNum) {
	if !cs.Constraints() {
		return
	}
	var la, lb, lc r1cs.LC
	la.Add(a.V).Add(b.V)
	lb.Add(r1cs.One)
	lc.Add(s.V)
	cs.Enforce(name, &la, &lb, &lc)
}

// Difference enforces (d + b) · ONE = a (d = a − b) under name.
func Difference(cs r1cs.CS, name r1cs.Name, a, b, d num.AllocatedNum) {
	if !cs.Constraints() {
		return
	}
	var la, lb, lc r1cs.LC
	la.Add(d.V).Add(b.V)
	lb.Add(r1cs.One)
	lc.Add(a.V)
	cs.Enforce(name, &la, &lb, &lc)
}

// Add allocates a + b ("add_num") and enforces it ("sum constraint").
func Add(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum {
	var v fr.Element
	v.Add(&a.Val, &b.Val)
	s := num.AllocatedNum{V: cs.Alloc(r1cs.N("add_num"), v), Val: v}
	Sum(cs, r1cs.N("sum constraint"), a, b, s)
	return s
}

// Sub allocates a − b ("sub_num") and enforces it ("subtraction
// constraint").
func Sub(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum {
	var v fr.Element
	v.Sub(&a.Val, &b.Val)
	d := num.AllocatedNum{V: cs.Alloc(r1cs.N("sub_num"), v), Val: v}
	Difference(cs, r1cs.N("subtraction constraint"), a, b, d)
	return d
}

// Encode is the replica node key + value, Add inside "encode_add".
func Encode(cs r1cs.CS, key, value num.AllocatedNum) num.AllocatedNum {
	cs.Push(r1cs.N("encode_add"))
	defer cs.Pop()
	return Add(cs, key, value)
}

// Decode is value − key, Sub inside "decode_sub".
func Decode(cs r1cs.CS, key, value num.AllocatedNum) num.AllocatedNum {
	cs.Push(r1cs.N("decode_sub"))
	defer cs.Pop()
	return Sub(cs, value, key)
}
