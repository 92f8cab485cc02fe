package poseidon

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	native "github.com/c2cluster/c2cluster/pkg/poseidon"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// values receives the circuit's aux values in allocation order: into a
// Bulk CS's slots when it has them, else one Alloc each.
type values struct {
	cs   r1cs.CS
	bulk []fr.Element
	k    int
	last r1cs.Variable
}

func (w *values) put(v *fr.Element) {
	if w.bulk != nil {
		w.bulk[w.k] = *v
		w.k++
		return
	}
	w.last = w.cs.Alloc(nNum, *v)
}

// sbox writes x, x², x⁴ and x⁵ + key (the input only when withInput) and
// leaves x⁵ + key in x.
func (w *values) sbox(x *fr.Element, key *fr.Element, withInput bool) {
	if withInput {
		w.put(x)
	}
	var x2, x4 fr.Element
	x2.Square(x)
	w.put(&x2)
	x4.Square(&x2)
	w.put(&x4)
	x.Mul(x, &x4)
	if key != nil {
		x.Add(x, key)
	}
	w.put(x)
}

// hashWitness allocates the values hashCircuit allocates, computed
// natively, without combinations or constraints.
func hashWitness(cs r1cs.CS, c *native.Optimized, preimage []num.AllocatedNum) num.AllocatedNum {
	n := numAllocs(c)
	w := values{cs: cs}
	var first r1cs.Variable
	if b, ok := cs.(r1cs.Bulk); ok {
		first, w.bulk = b.AllocAux(n)
	}

	t, half := c.Width, c.FullRounds/2
	var stBuf, tmpBuf [native.MaxArity + 1]fr.Element
	st, tmp := stBuf[:t], tmpBuf[:t]
	st[0] = c.Tag
	for i, p := range preimage {
		st[i+1] = p.Val
	}
	keys := c.RoundKeys

	pre, post := keys[:t], keys[t:2*t]
	keys = keys[2*t:]
	st[0].Add(&st[0], &pre[0])
	pow5(&st[0])
	st[0].Add(&st[0], &post[0])
	for i := 1; i < t; i++ {
		st[i].Add(&st[i], &pre[i])
		w.sbox(&st[i], &post[i], false)
	}
	native.MulDense(st, tmp, c.MDS)

	for r := 1; r < half; r++ {
		for i := range st {
			w.sbox(&st[i], &keys[i], true)
		}
		keys = keys[t:]
		if r == half-1 {
			native.MulDense(st, tmp, c.PreSparse)
		} else {
			native.MulDense(st, tmp, c.MDS)
		}
	}

	var x, y fr.Element
	for j := range c.PartialRounds {
		w.sbox(&st[0], &keys[j], true)
		s := &c.Sparse[j]
		y.Mul(&s.W[0], &st[0])
		for i := 1; i < t; i++ {
			x.Mul(&s.W[i], &st[i])
			y.Add(&y, &x)
			x.Mul(&s.V[i-1], &st[0])
			st[i].Add(&st[i], &x)
		}
		st[0] = y
	}
	keys = keys[c.PartialRounds:]

	for r := range half {
		var ks []fr.Element
		if r < half-1 {
			ks, keys = keys[:t], keys[t:]
		}
		for i := range st {
			var k *fr.Element
			if ks != nil {
				k = &ks[i]
			}
			w.sbox(&st[i], k, true)
		}
		native.MulDense(st, tmp, c.MDS)
	}
	w.put(&st[1])

	out := num.AllocatedNum{V: w.last, Val: st[1]}
	if w.bulk != nil {
		out.V = r1cs.Aux(first.Index() + n - 1)
	}
	return out
}
