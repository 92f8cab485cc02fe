package poseidon

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	native "github.com/c2cluster/c2cluster/pkg/poseidon"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Hash allocates the Poseidon digest of preimage (arity len(preimage),
// 1..pkg/poseidon's MaxArity) with neptune's circuit and returns it. The
// only error is an unsupported arity.
func Hash(cs r1cs.CS, preimage []num.AllocatedNum) (num.AllocatedNum, error) {
	c, err := native.OptimizedConstants(len(preimage))
	if err != nil {
		return num.AllocatedNum{}, err
	}
	if !cs.Constraints() {
		return hashWitness(cs, c, preimage), nil
	}
	return hashCircuit(cs, c, preimage), nil
}

// Hash2 is filecoin-hashers' PoseidonFunction::hash2_circuit: the arity-2
// hash of a and b.
func Hash2(cs r1cs.CS, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	return Hash(cs, []num.AllocatedNum{a, b})
}

// HashMultiLeaf is filecoin-hashers' hash_multi_leaf_circuit: the hash of
// leaves with arity len(leaves) (the tree height it also takes changes
// nothing).
func HashMultiLeaf(cs r1cs.CS, leaves []num.AllocatedNum) (num.AllocatedNum, error) {
	return Hash(cs, leaves)
}

// NumConstraints is the number of constraints (and of aux variables) Hash
// makes for arity.
func NumConstraints(arity int) (int, error) {
	c, err := native.OptimizedConstants(arity)
	if err != nil {
		return 0, err
	}
	return numAllocs(c), nil
}

func numAllocs(c *native.Optimized) int {
	return 3*c.Arity + 4*(c.FullRounds-1)*c.Width + 4*c.PartialRounds + 1
}

// elt is a state element: an allocated variable, or a linear combination
// of earlier ones (ONE included), with its value.
type elt struct {
	allocated bool
	v         r1cs.Variable
	lc        r1cs.LC
	val       fr.Element
}

func allocatedElt(n num.AllocatedNum) elt { return elt{allocated: true, v: n.V, val: n.Val} }

// addScaled adds c·e to acc.
func (acc *elt) addScaled(c *fr.Element, e *elt) {
	if e.allocated {
		acc.lc.AddCoeff(c, e.v)
	} else {
		acc.lc.AddScaled(c, &e.lc)
	}
	var t fr.Element
	t.Mul(c, &e.val)
	acc.val.Add(&acc.val, &t)
}

var (
	nSboxInput  = r1cs.N("S-box input")
	nEltAlloc   = r1cs.N("allocate for Elt::Num")
	nNum        = r1cs.N("num")
	nPreserves  = r1cs.N("enforce num allocation preserves lc")
	nSquare2    = r1cs.N("l^2")
	nSquare4    = r1cs.N("l^4")
	nSquareSum  = r1cs.N("(l+rk)^2")
	nSquaredSum = r1cs.N("squared sum")
	nMulSumPre  = r1cs.N("l4 * (l + rk)")
	nMulSumPost = r1cs.N("(l4 * l) + rk)")
	nMulSum     = r1cs.N("mul_sum")
)

// ensureAllocated returns e as a variable: an allocated one as it is, a
// combination allocated and constrained equal to it.
func ensureAllocated(cs r1cs.CS, e *elt) num.AllocatedNum {
	if e.allocated {
		return num.AllocatedNum{V: e.v, Val: e.val}
	}
	cs.Push(nEltAlloc)
	v := cs.Alloc(nNum, e.val)
	cs.Pop()
	var b, c r1cs.LC
	b.Add(r1cs.One)
	c.Add(v)
	cs.Enforce(nPreserves, &e.lc, &b, &c)
	return num.AllocatedNum{V: v, Val: e.val}
}

// mulSum allocates (b + pre)·a + post and constrains it; pre and post may
// be nil.
func mulSum(cs r1cs.CS, a, b num.AllocatedNum, pre, post *fr.Element) num.AllocatedNum {
	var val fr.Element
	val = b.Val
	if pre != nil {
		val.Add(&val, pre)
	}
	val.Mul(&val, &a.Val)
	if post != nil {
		val.Add(&val, post)
	}
	cs.Push(nMulSum)
	res := num.AllocatedNum{V: cs.Alloc(nNum, val), Val: val}
	cs.Pop()

	var la, lb, lc r1cs.LC
	la.Add(b.V)
	if pre != nil {
		la.AddCoeff(pre, r1cs.One)
	}
	lb.Add(a.V)
	lc.Add(res.V)
	if post != nil {
		lc.SubCoeff(post, r1cs.One)
	}
	name := "mul sum constraint"
	switch {
	case pre != nil && post != nil:
		name = "mul sum constraint pre-post-add"
	case post != nil:
		name = "mul sum constraint post-add"
	case pre != nil:
		name = "mul sum constraint pre-add"
	}
	cs.Enforce(r1cs.N(name), &la, &lb, &lc)
	return res
}

// squareSum allocates (x + k)² and constrains it.
func squareSum(cs r1cs.CS, x num.AllocatedNum, k *fr.Element) num.AllocatedNum {
	var val fr.Element
	val.Add(&x.Val, k)
	val.Square(&val)
	cs.Push(nSquaredSum)
	res := num.AllocatedNum{V: cs.Alloc(nNum, val), Val: val}
	cs.Pop()
	var l, c r1cs.LC
	l.Add(x.V).AddCoeff(k, r1cs.One)
	c.Add(res.V)
	cs.Enforce(r1cs.N("squared sum constraint"), &l, &l, &c)
	return res
}

// sbox replaces e by e⁵ + key (key may be nil), allocated.
func sbox(cs r1cs.CS, e *elt, key *fr.Element) {
	cs.Push(nSboxInput)
	l := ensureAllocated(cs, e)
	cs.Pop()
	cs.Push(nSquare2)
	l2 := l.Square(cs)
	cs.Pop()
	cs.Push(nSquare4)
	l4 := l2.Square(cs)
	cs.Pop()
	cs.Push(nMulSumPost)
	l5 := mulSum(cs, l4, l, nil, key)
	cs.Pop()
	*e = allocatedElt(l5)
}

// sboxPreAdd replaces the allocated e by (e + pre)⁵ + post.
func sboxPreAdd(cs r1cs.CS, e *elt, pre, post *fr.Element) {
	l := num.AllocatedNum{V: e.v, Val: e.val}
	cs.Push(nSquareSum)
	l2 := squareSum(cs, l, pre)
	cs.Pop()
	cs.Push(nSquare4)
	l4 := l2.Square(cs)
	cs.Pop()
	cs.Push(nMulSumPre)
	l5 := mulSum(cs, l4, l, pre, post)
	cs.Pop()
	*e = allocatedElt(l5)
}

// hashCircuit builds the circuit, neptune's PoseidonCircuit::hash.
func hashCircuit(cs r1cs.CS, c *native.Optimized, preimage []num.AllocatedNum) num.AllocatedNum {
	t, half := c.Width, c.FullRounds/2
	st := make([]elt, t)
	for i, p := range preimage {
		st[i+1] = allocatedElt(p)
	}
	keys := c.RoundKeys

	// The first round: the domain tag's S-box is a constant (a combination
	// c·ONE); the inputs' S-boxes add the first round keys before squaring.
	cs.Push(r1cs.N("first round"))
	pre, post := keys[:t], keys[t:2*t]
	keys = keys[2*t:]
	tag := c.Tag
	tag.Add(&tag, &pre[0])
	pow5(&tag)
	tag.Add(&tag, &post[0])
	st[0] = elt{val: tag}
	st[0].lc.AddCoeff(&tag, r1cs.One)
	for i := 1; i < t; i++ {
		cs.Push(r1cs.Nf("quintic s-box %d", i))
		sboxPreAdd(cs, &st[i], &pre[i], &post[i])
		cs.Pop()
	}
	cs.Pop()
	st = dense(st, c.MDS)

	fullRound := func(name r1cs.Name, m []fr.Element, last bool) {
		cs.Push(name)
		var ks []fr.Element
		if !last {
			ks, keys = keys[:t], keys[t:]
		}
		for i := range st {
			cs.Push(r1cs.Nf("quintic s-box %d", i))
			var k *fr.Element
			if !last {
				k = &ks[i]
			}
			sbox(cs, &st[i], k)
			cs.Pop()
		}
		cs.Pop()
		st = dense(st, m)
	}

	for r := 1; r < half; r++ {
		m := c.MDS
		if r == half-1 {
			m = c.PreSparse
		}
		fullRound(r1cs.Nf("initial full round %d", r), m, false)
	}

	for j := range c.PartialRounds {
		cs.Push(r1cs.Nf("partial round %d", j))
		cs.Push(r1cs.N("solitary quintic s-box"))
		sbox(cs, &st[0], &keys[0])
		keys = keys[1:]
		cs.Pop()
		cs.Pop()
		sparse(st, &c.Sparse[j])
	}

	for r := range half - 1 {
		fullRound(r1cs.Nf("final full round %d", r), c.MDS, false)
	}
	fullRound(r1cs.N("terminal full round"), c.MDS, true)

	cs.Push(r1cs.N("hash result"))
	out := ensureAllocated(cs, &st[1])
	cs.Pop()
	return out
}

// dense returns m·st (m row-major) as combinations.
func dense(st []elt, m []fr.Element) []elt {
	t := len(st)
	out := make([]elt, t)
	for j := range out {
		row := m[j*t : (j+1)*t]
		for i := range st {
			out[j].addScaled(&row[i], &st[i])
		}
	}
	return out
}

// sparse applies a partial round's matrix in place; st[0] is allocated,
// the others are combinations.
func sparse(st []elt, s *native.SparseMatrix) {
	var y elt
	for i := range st {
		y.addScaled(&s.W[i], &st[i])
	}
	for j := 1; j < len(st); j++ {
		st[j].addScaled(&s.V[j-1], &st[0])
	}
	st[0] = y
}

func pow5(x *fr.Element) {
	var x4 fr.Element
	x4.Square(x)
	x4.Square(&x4)
	x.Mul(x, &x4)
}
