// Package groth16test holds the small gnark circuit that the engine's tests
// and the CUDA backend's tests prove: nothing here imports pkg/groth16, so
// its own internal tests can use it too.
package groth16test

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
)

// Chain is a square-and-add chain seeded by the bits of a secret: N
// constraints of random-looking wires (the chain), 64 boolean wires (the
// bits of W) and public inputs in A, B and C (Q enters B through a product
// with W), so the A and B densities are partial and every query of a proving
// key is non-trivial. Rows are not a power of two.
type Chain struct {
	X frontend.Variable `gnark:",public"`
	Y frontend.Variable `gnark:",public"`
	Q frontend.Variable `gnark:",public"`
	W frontend.Variable
	N int `gnark:"-"`
}

// Define implements frontend.Circuit.
func (c *Chain) Define(api frontend.API) error {
	bits := api.ToBinary(c.W, 64)
	s := api.FromBinary(bits...)
	x := c.X
	for i := 0; i < c.N; i++ {
		x = api.Add(api.Mul(x, x), s, i)
	}
	api.AssertIsEqual(x, c.Y)
	api.AssertIsEqual(api.Mul(c.Q, c.W), api.Mul(c.W, c.Q))
	return nil
}

// ChainAssignment is a satisfying assignment of a chain of n steps,
// computed in plain field arithmetic (an oracle independent of the solver).
func ChainAssignment(n int, x, w, q uint64) *Chain {
	var fx, fs fr.Element
	fx.SetUint64(x)
	fs.SetUint64(w)
	for i := 0; i < n; i++ {
		var iv fr.Element
		iv.SetUint64(uint64(i))
		fx.Square(&fx).Add(&fx, &fs).Add(&fx, &iv)
	}
	return &Chain{X: x, Y: fx.String(), Q: q, W: w}
}
