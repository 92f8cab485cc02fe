// Package groth16test holds the small pkg/r1cs circuit that the engine's
// tests and the CUDA backend's tests prove, and helpers for points off the
// subgroups: nothing here imports pkg/groth16, so its own internal tests
// can use it too.
package groth16test

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Chain is a square-and-add chain of N steps seeded by the 64 bits of a
// secret W, for the values X, W and Q. Its inputs are ONE, X, Y, Q (in
// that order) and its aux variables W, the bits of W (least significant
// first), the chain's inner values x_1 … x_{N−1} and P = Q·W; its
// constraints, in order:
//
//	(ONE − b_i) · b_i = 0                  64 bits of W (i = 0 … 63)
//	(Σ 2^i·b_i) · ONE = W
//	x_i · x_i = x_{i+1} − W − i·ONE        i = 0 … N−1, x_0 = X, x_N = Y
//	Q · W = P
//	W · Q = P
//
// So the public inputs are in A (X, Q), in B (X, and Q through its product
// with W) and in C (Y), the A and B densities are partial (P is in C only,
// Y in no B), every query of a proving key is non-trivial, and the rows
// (ChainConstraints + the 4 input rows) are not a power of two for the
// sizes the tests use.
type Chain struct {
	N       int
	X, W, Q uint64
	// Corrupt gives Y the chain's end plus one: an assignment that fails
	// the last step's constraint (and only that one).
	Corrupt bool
}

// ChainVars are a synthesized Chain's variables.
type ChainVars struct {
	X, Y, Q r1cs.Variable // inputs 1, 2, 3
	W       r1cs.Variable
	Bits    [64]r1cs.Variable
	Steps   []r1cs.Variable // x_1 … x_{N−1}
	P       r1cs.Variable
}

// ChainInputs is a Chain's number of public inputs without ONE (X, Y, Q).
const ChainInputs = 3

// ChainConstraints is the number of constraints of a chain of n steps.
func ChainConstraints(n int) int { return 64 + 1 + n + 2 }

// ChainAux is the number of aux variables of a chain of n steps.
func ChainAux(n int) int { return 1 + 64 + (n - 1) + 1 }

func el(v uint64) fr.Element {
	var e fr.Element
	e.SetUint64(v)
	return e
}

// Synthesize synthesizes the chain into cs, which has ONE allocated and
// nothing else, and returns its variables. It panics if N < 1.
func (c Chain) Synthesize(cs r1cs.CS) ChainVars {
	if c.N < 1 {
		panic(fmt.Sprintf("groth16test: chain of %d steps, want at least one", c.N))
	}
	fw, fq := el(c.W), el(c.Q)
	// The chain's values, x_0 = X … x_N.
	xs := make([]fr.Element, c.N+1)
	xs[0] = el(c.X)
	for i := range c.N {
		iv := el(uint64(i))
		xs[i+1].Square(&xs[i]).Add(&xs[i+1], &fw).Add(&xs[i+1], &iv)
	}
	fy := xs[c.N]
	if c.Corrupt {
		one := fr.One()
		fy.Add(&fy, &one)
	}

	var v ChainVars
	v.X = cs.AllocInput(r1cs.N("X"), xs[0])
	v.Y = cs.AllocInput(r1cs.N("Y"), fy)
	v.Q = cs.AllocInput(r1cs.N("Q"), fq)
	v.W = cs.Alloc(r1cs.N("W"), fw)

	var a, b, cc r1cs.LC
	enforce := func(name r1cs.Name) {
		cs.Enforce(name, &a, &b, &cc)
		a.Reset()
		b.Reset()
		cc.Reset()
	}
	r1cs.In(cs, r1cs.N("bits"), func() {
		for i := range v.Bits {
			v.Bits[i] = cs.Alloc(r1cs.N("bit"), el(c.W>>i&1))
			a.Add(r1cs.One).Sub(v.Bits[i])
			b.Add(v.Bits[i])
			enforce(r1cs.N("boolean"))
		}
		for i := range v.Bits {
			k := r1cs.PowerOfTwo(i)
			a.AddCoeff(&k, v.Bits[i])
		}
		b.Add(r1cs.One)
		cc.Add(v.W)
		enforce(r1cs.N("pack"))
	})
	r1cs.In(cs, r1cs.N("chain"), func() {
		x := v.X
		for i := range c.N {
			next := v.Y
			if i < c.N-1 {
				next = cs.Alloc(r1cs.N("x"), xs[i+1])
				v.Steps = append(v.Steps, next)
			}
			a.Add(x)
			b.Add(x)
			cc.Add(next).Sub(v.W)
			if i > 0 {
				k := el(uint64(i))
				cc.SubCoeff(&k, r1cs.One)
			}
			enforce(r1cs.N("step"))
			x = next
		}
	})
	var fp fr.Element
	fp.Mul(&fq, &fw)
	v.P = cs.Alloc(r1cs.N("P"), fp)
	a.Add(v.Q)
	b.Add(v.W)
	cc.Add(v.P)
	enforce(r1cs.N("QW"))
	a.Add(v.W)
	b.Add(v.Q)
	cc.Add(v.P)
	enforce(r1cs.N("WQ"))
	return v
}

// System records the chain in a new System made r1cs.WithValues (and
// opts).
func (c Chain) System(opts ...r1cs.SystemOption) *r1cs.System {
	sys := r1cs.NewSystem(append([]r1cs.SystemOption{r1cs.WithValues()}, opts...)...)
	c.Synthesize(sys)
	return sys
}

// Public is the chain's public inputs without ONE (X, Y, Q), computed in
// plain field arithmetic: an oracle independent of any constraint system.
// Y is the honest chain's end (Corrupt does not change it).
func (c Chain) Public() []fr.Element {
	var x, w, i fr.Element
	x.SetUint64(c.X)
	w.SetUint64(c.W)
	for k := 0; k < c.N; k++ {
		i.SetUint64(uint64(k))
		x.Mul(&x, &x)
		x.Add(&x, &w)
		x.Add(&x, &i)
	}
	return []fr.Element{el(c.X), x, el(c.Q)}
}

// ChainSystem is Chain{N: n, X: x, W: w, Q: q}.System().
func ChainSystem(n int, x, w, q uint64) *r1cs.System {
	return Chain{N: n, X: x, W: w, Q: q}.System()
}

// ChainPublic is Chain{N: n, X: x, W: w, Q: q}.Public().
func ChainPublic(n int, x, w, q uint64) []fr.Element {
	return Chain{N: n, X: x, W: w, Q: q}.Public()
}
