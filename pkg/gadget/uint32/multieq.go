package uint32

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Capacity is the number of bits a field element holds without
// wrapping (the field's CAPACITY, fr.Bits − 1).
const Capacity = fr.Bits - 1

// pow2[k] is 2^k.
var pow2 = func() (p [Capacity]fr.Element) {
	p[0].SetOne()
	for k := 1; k < Capacity; k++ {
		p[k].Double(&p[k-1])
	}
	return
}()

// MultiEq is bellpepper's MultiEq: a CS wrapper that batches equalities
// lhs = rhs of small values (EnforceEqual, num bits each) into one
// constraint Σ 2^offset·lhs · ONE = Σ 2^offset·rhs, starting a new batch
// when the next equality would reach Capacity bits. A batch is enforced
// as "multieq k" (k counting from 0) in the namespace current when it is
// flushed: when an equality does not fit, or at Close. Everything else is
// passed to the wrapped CS.
type MultiEq struct {
	cs       r1cs.CS
	ops      int
	bitsUsed int
	lhs, rhs r1cs.LC
	spare    r1cs.LC
}

// NewMultiEq wraps cs.
func NewMultiEq(cs r1cs.CS) *MultiEq { return &MultiEq{cs: cs} }

// Alloc implements r1cs.CS.
func (m *MultiEq) Alloc(name r1cs.Name, v fr.Element) r1cs.Variable { return m.cs.Alloc(name, v) }

// AllocInput implements r1cs.CS.
func (m *MultiEq) AllocInput(name r1cs.Name, v fr.Element) r1cs.Variable {
	return m.cs.AllocInput(name, v)
}

// Enforce implements r1cs.CS.
func (m *MultiEq) Enforce(name r1cs.Name, a, b, c *r1cs.LC) { m.cs.Enforce(name, a, b, c) }

// Push implements r1cs.CS.
func (m *MultiEq) Push(name r1cs.Name) { m.cs.Push(name) }

// Pop implements r1cs.CS.
func (m *MultiEq) Pop() { m.cs.Pop() }

// Constraints implements r1cs.CS.
func (m *MultiEq) Constraints() bool { return m.cs.Constraints() }

// EnforceEqual adds lhs = rhs, both below 2^numBits, to the batch.
func (m *MultiEq) EnforceEqual(numBits int, lhs, rhs *r1cs.LC) {
	if m.bitsUsed+numBits >= Capacity {
		m.flush()
	}
	if m.bitsUsed+numBits >= Capacity {
		panic("uint32: MultiEq equality wider than the field's capacity")
	}
	if m.cs.Constraints() {
		m.addScaled(&m.lhs, &pow2[m.bitsUsed], lhs)
		m.addScaled(&m.rhs, &pow2[m.bitsUsed], rhs)
	}
	m.bitsUsed += numBits
}

// addScaled sets *acc to acc + coeff·o (LC.AddScaled) by merging the two
// sorted combinations: a batch grows to thousands of terms, and inserting
// the older variables of each new equality one by one moves most of them.
func (m *MultiEq) addScaled(acc *r1cs.LC, coeff *fr.Element, o *r1cs.LC) {
	a, b := acc.Terms(), o.Terms()
	out := m.spare.Reset()
	var t fr.Element
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].V <= b[j].V {
			out.AddCoeff(&a[i].C, a[i].V)
			i++
			continue
		}
		t.Mul(&b[j].C, coeff)
		out.AddCoeff(&t, b[j].V)
		j++
	}
	*acc, m.spare = *out, *acc
}

// Close enforces the pending batch, if any (bellpepper's drop of the
// MultiEq): call it where the reference's MultiEq goes out of scope.
func (m *MultiEq) Close() {
	if m.bitsUsed > 0 {
		m.flush()
	}
}

func (m *MultiEq) flush() {
	if m.cs.Constraints() {
		var one r1cs.LC
		one.Add(r1cs.One)
		m.cs.Enforce(r1cs.Nf("multieq %d", m.ops), &m.lhs, &one, &m.rhs)
	}
	m.lhs.Reset()
	m.rhs.Reset()
	m.bitsUsed = 0
	m.ops++
}
