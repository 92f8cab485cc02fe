package r1cs

import "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

// CS is a constraint system a circuit is synthesized into, bellperson's
// ConstraintSystem: variables are numbered in allocation order and
// constraints kept in Enforce order.
type CS interface {
	// Alloc allocates the next aux variable with value v.
	Alloc(name Name, v fr.Element) Variable
	// AllocInput allocates the next input variable with value v.
	AllocInput(name Name, v fr.Element) Variable
	// Enforce appends the constraint a · b = c. The CS takes copies of
	// what it keeps: the caller may reuse the combinations.
	Enforce(name Name, a, b, c *LC)
	// Push enters a namespace, Pop leaves it.
	Push(name Name)
	Pop()
	// Constraints reports whether Enforce records anything. A witness
	// generator says false: gadgets may then skip building the linear
	// combinations they would only pass to Enforce.
	Constraints() bool
}

// In runs f inside the namespace name.
func In(cs CS, name Name, f func()) {
	cs.Push(name)
	defer cs.Pop()
	f()
}
