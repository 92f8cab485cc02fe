package poseidon

import (
	"math/big"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
)

// HashCircuit is Hash as a gnark circuit gadget over the BLS12-381 scalar
// field: the digest of inputs with arity len(inputs), as a linear expression
// (not a new wire). It emits plain R1CS: no commitments, no lookups, no hints;
// each S-box x^5 costs three multiplications and the linear layers and round
// constants are free, so a hash of non-constant inputs costs
// CircuitConstraints(arity) constraints; S-boxes on constant values fold away.
//
// It panics if the arity is outside 1..MaxArity (inside a circuit's Define,
// gnark's Compile turns that into an error).
func HashCircuit(api frontend.API, inputs []frontend.Variable) frontend.Variable {
	p, err := paramsFor(len(inputs))
	if err != nil {
		panic(err)
	}
	c := p.circuitConsts()
	t := p.width

	st := make([]frontend.Variable, t)
	st[0] = api.Add(c.tag, c.first[0])
	for i := 1; i < t; i++ {
		st[i] = api.Add(inputs[i-1], c.first[i])
	}

	half := p.full / 2
	for r := range half {
		for i := range st {
			st[i] = sboxCircuit(api, st[i])
		}
		m := c.mds
		if r == half-1 {
			m = c.pre
		}
		st = denseCircuit(api, m, st, c.post[r])
	}

	for j := range p.partial {
		x0 := api.Add(sboxCircuit(api, st[0]), c.partialKey[j])
		sp := &c.sparse[j]
		terms := make([]frontend.Variable, 0, t)
		terms = append(terms, api.Mul(x0, sp.col[0]))
		for i := 1; i < t; i++ {
			terms = append(terms, api.Mul(st[i], sp.row[i-1]))
			st[i] = api.Add(st[i], api.Mul(x0, sp.col[i]))
		}
		st[0] = sum(api, terms)
	}

	for r := range half {
		for i := range st {
			st[i] = sboxCircuit(api, st[i])
		}
		var post []*big.Int
		if r < half-1 {
			post = c.post[half+r]
		}
		st = denseCircuit(api, c.mds, st, post)
	}
	return st[1]
}

func sboxCircuit(api frontend.API, x frontend.Variable) frontend.Variable {
	x2 := api.Mul(x, x)
	x4 := api.Mul(x2, x2)
	return api.Mul(x4, x)
}

// denseCircuit returns M·st + post (post may be nil); m is row-major.
func denseCircuit(api frontend.API, m []*big.Int, st []frontend.Variable, post []*big.Int) []frontend.Variable {
	t := len(st)
	out := make([]frontend.Variable, t)
	terms := make([]frontend.Variable, 0, t+1)
	for i := range t {
		terms = terms[:0]
		for j := range t {
			terms = append(terms, api.Mul(st[j], m[i*t+j]))
		}
		if post != nil {
			terms = append(terms, post[i])
		}
		out[i] = sum(api, terms)
	}
	return out
}

func sum(api frontend.API, terms []frontend.Variable) frontend.Variable {
	switch len(terms) {
	case 1:
		return terms[0]
	case 2:
		return api.Add(terms[0], terms[1])
	default:
		return api.Add(terms[0], terms[1], terms[2:]...)
	}
}

// circuitParams are the optimised-form constants as big integers, the form
// gnark's frontend takes constants in.
type circuitParams struct {
	tag        *big.Int
	first      []*big.Int
	mds, pre   []*big.Int
	post       [][]*big.Int
	partialKey []*big.Int
	sparse     []struct{ col, row []*big.Int }
}

var circuitCache [MaxArity + 1]struct {
	once sync.Once
	c    *circuitParams
}

func (p *params) circuitConsts() *circuitParams {
	e := &circuitCache[p.arity]
	e.once.Do(func() {
		c := &circuitParams{
			tag:        bigOf(&p.tag),
			first:      bigsOf(p.first),
			mds:        bigsOf(p.mdsFlat),
			pre:        bigsOf(p.preFlat),
			partialKey: bigsOf(p.partialKey),
		}
		for _, v := range p.post {
			c.post = append(c.post, bigsOf(v))
		}
		for _, s := range p.sparse {
			c.sparse = append(c.sparse, struct{ col, row []*big.Int }{bigsOf(s.col), bigsOf(s.row)})
		}
		e.c = c
	})
	return e.c
}

func bigOf(e *fr.Element) *big.Int { return e.BigInt(new(big.Int)) }

func bigsOf(v []fr.Element) []*big.Int {
	out := make([]*big.Int, len(v))
	for i := range v {
		out[i] = bigOf(&v[i])
	}
	return out
}
