package groth16test

import (
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// The chain's System: its counts, its values (the inputs equal the plain
// arithmetic oracle and satisfy every constraint; Corrupt fails the last
// step only), and the places of its variables that the engine's tests rely
// on (inputs in A, B and C; partial A and B densities).
func TestChain(t *testing.T) {
	for _, n := range []int{1, 2, 10, 200} {
		c := Chain{N: n, X: 3, W: 0xdeadbeefcafe, Q: 7}
		sys := c.System()
		require.NoError(t, sys.Satisfied(), "n=%d", n)
		require.Equal(t, 1+ChainInputs, sys.NumInputs())
		require.Equal(t, ChainAux(n), sys.NumAux())
		require.Equal(t, ChainConstraints(n), sys.NumConstraints())
		inputs, _ := sys.Values()
		one := fr.One()
		require.Equal(t, append([]fr.Element{one}, c.Public()...), inputs, "n=%d", n)

		bad := c
		bad.Corrupt = true
		var u *r1cs.Unsatisfied
		require.True(t, errors.As(bad.System().Satisfied(), &u))
		require.Equal(t, 64+1+n-1, u.Index, "the last step fails")
		require.Equal(t, c.Public(), bad.Public(), "the oracle is the honest chain")
	}

	// Where the variables are: (matrix, input) and (matrix, aux) present.
	sys := r1cs.NewSystem()
	v := Chain{N: 5, X: 1, W: 2, Q: 3}.Synthesize(sys)
	in := [3]map[int]bool{{}, {}, {}}
	aux := [3]map[int]bool{{}, {}, {}}
	for m := range 3 {
		require.NoError(t, sys.Terms(m, func(_ int, x r1cs.Variable, c *fr.Element) error {
			if c.IsZero() {
				return nil
			}
			if x.IsInput() {
				in[m][x.Index()] = true
			} else {
				aux[m][x.Index()] = true
			}
			return nil
		}))
	}
	const A, B, C = 0, 1, 2
	require.True(t, in[A][v.X.Index()] && in[A][v.Q.Index()], "X and Q in A")
	require.True(t, in[B][v.X.Index()] && in[B][v.Q.Index()] && in[B][0], "X, Q and ONE in B")
	require.False(t, in[B][v.Y.Index()], "Y not in B")
	require.True(t, in[C][v.Y.Index()], "Y in C")
	for _, b := range v.Bits {
		require.True(t, aux[A][b.Index()] && aux[B][b.Index()], "bits in A and B")
	}
	require.True(t, aux[A][v.W.Index()] && aux[B][v.W.Index()], "W in A and B")
	require.False(t, aux[A][v.P.Index()] || aux[B][v.P.Index()], "P in C only")
	require.True(t, aux[C][v.P.Index()])
	require.Len(t, v.Steps, 4)
	for _, s := range v.Steps {
		require.True(t, aux[A][s.Index()] && aux[B][s.Index()] && aux[C][s.Index()])
	}
	require.Panics(t, func() { Chain{}.Synthesize(r1cs.NewSystem()) })
}
