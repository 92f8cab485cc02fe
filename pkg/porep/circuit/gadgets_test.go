package circuit

import (
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// insertCircuit checks insert(X, bits of Index, Elems) == Out.
type insertCircuit struct {
	X, Index frontend.Variable
	Elems    []frontend.Variable
	Out      []frontend.Variable
	k        int `gnark:"-"`
}

func (c *insertCircuit) Define(api frontend.API) error {
	got := insert(api, c.X, fieldBits(api, c.Index, c.k), c.Elems)
	for i := range got {
		api.AssertIsEqual(got[i], c.Out[i])
	}
	return nil
}

// TestInsert checks the insertion gadget at every position of every arity
// against the obvious slice insertion, that any other output is rejected,
// and its constraint count.
func TestInsert(t *testing.T) {
	t.Parallel()
	field := ecc.BLS12_381.ScalarField()
	wantCost := map[int]int{2: 1, 4: 6, 8: 17, 16: 40}
	for k := 1; k <= 4; k++ {
		m := 1 << k
		blank := &insertCircuit{Elems: make([]frontend.Variable, m-1), Out: make([]frontend.Variable, m), k: k}
		ccs, err := frontend.Compile(field, r1cs.NewBuilder, blank)
		require.NoError(t, err)
		// Index bits (k booleans + 1 packing, or 1 boolean for k = 1) and one
		// equality per output come on top of the gadget.
		bitsCost := k + 1
		if k == 1 {
			bitsCost = 1
		}
		require.Equal(t, wantCost[m], ccs.GetNbConstraints()-bitsCost-m, "arity %d", m)

		rng := rand.New(rand.NewPCG(uint64(m), 1))
		for idx := 0; idx < m; idx++ {
			a := &insertCircuit{X: rng.Uint64(), Index: idx, Elems: make([]frontend.Variable, m-1), Out: make([]frontend.Variable, m), k: k}
			elems := make([]frontend.Variable, m-1)
			for i := range elems {
				elems[i] = rng.Uint64()
			}
			copy(a.Elems, elems)
			want := append(append(append([]frontend.Variable{}, elems[:idx]...), a.X), elems[idx:]...)
			copy(a.Out, want)
			require.NoError(t, test.IsSolved(blank, a, field), "arity %d index %d", m, idx)
			w, err := frontend.NewWitness(a, field)
			require.NoError(t, err)
			_, err = ccs.Solve(w)
			require.NoError(t, err, "arity %d index %d", m, idx)

			a.Out[(idx+1)%m] = a.X // the element at another position
			w, err = frontend.NewWitness(a, field)
			require.NoError(t, err)
			_, err = ccs.Solve(w)
			require.Error(t, err, "arity %d index %d: wrong output accepted", m, idx)
		}
	}
}

// labelCircuit computes one label with the circuit's gadgets from field
// element inputs and checks it against Label.
type labelCircuit struct {
	ReplicaID, Node frontend.Variable
	Parents         []frontend.Variable
	Label           frontend.Variable
	layer           int    `gnark:"-"`
	p               Params `gnark:"-"`
}

func (c *labelCircuit) Define(api frontend.API) error {
	parents := make([][]frontend.Variable, len(c.Parents))
	for i := range parents {
		parents[i] = parentLabelBits(api, c.Parents[i])
	}
	got := label(api, replicaBits(api, c.ReplicaID), c.layer, challengeBits(api, c.Node), c.p.labelPreimageParents(parents))
	api.AssertIsEqual(got, c.Label)
	return nil
}

// TestLabelMatchesNative checks the label gadget against pkg/porep's native
// labeling hash (the sealer's, checked there against rust-fil-proofs) on
// random values, on layer 1 (DRG parents cycled) and a later layer (DRG then
// expander parents cycled).
func TestLabelMatchesNative(t *testing.T) {
	t.Parallel()
	field := ecc.BLS12_381.ScalarField()
	p := Params{Name: "label", Nodes: 1 << 20, Layers: 3, DRGDegree: 3, ExpDegree: 2, LabelParents: 7, Challenges: 1, Tree: TreeArity{Base: 2}}
	rng := rand.New(rand.NewPCG(3, 4))
	randDomain := func() porep.Domain {
		var d porep.Domain
		for i := range d {
			d[i] = byte(rng.Uint32())
		}
		d.TruncateTo254()
		return d
	}
	for _, layer := range []int{1, 3} {
		n := p.DRGDegree
		if layer > 1 {
			n += p.ExpDegree
		}
		blank := &labelCircuit{Parents: make([]frontend.Variable, n), layer: layer, p: p}
		replica, node := randDomain(), rng.Uint64N(p.Nodes)
		parents := make([]porep.Domain, n)
		a := &labelCircuit{ReplicaID: elem(t, replica), Node: node, Parents: make([]frontend.Variable, n), layer: layer, p: p}
		for i := range parents {
			parents[i] = randDomain()
			a.Parents[i] = elem(t, parents[i])
		}
		repeated := make([]porep.Domain, p.LabelParents)
		porep.RepeatParents(repeated, parents)
		want := porep.LabelHash(replica, uint32(layer), node, repeated)
		a.Label = elem(t, want)
		require.NoError(t, test.IsSolved(blank, a, field), "layer %d", layer)

		// The same preimage through crypto/sha256, as an independent check of
		// the preimage layout.
		pre := porep.LabelPrefix(replica, uint32(layer), node)
		h := sha256.New()
		h.Write(pre[:])
		for _, q := range repeated {
			h.Write(q[:])
		}
		var d porep.Domain
		h.Sum(d[:0])
		d.TruncateTo254()
		require.Equal(t, want, d)

		a.Label = elem(t, randDomain())
		require.Error(t, test.IsSolved(blank, a, field), "layer %d: wrong label accepted", layer)
	}
}

func elem(t testing.TB, d porep.Domain) fr.Element {
	t.Helper()
	e, err := d.Element()
	require.NoError(t, err)
	return e
}
