package num

import (
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

var coeffOne = fr.One()

// AllocMaybeInput allocates an input ("input num") when isInput, else an
// aux variable ("num").
func AllocMaybeInput(cs r1cs.CS, isInput bool, v fr.Element) AllocatedNum {
	if isInput {
		return AllocInput(cs, v)
	}
	return Alloc(cs, v)
}

// ToBitsLE allocates n's fr.Bits (255) bits, least significant first
// (boolean.FieldIntoAllocatedBitsLE: "bit i" in cs), and the constraint
// 0 · 0 = Σ 2^i·bit_i − n ("unpacking constraint"). The bits may be those
// of n + r (no check that they are below the modulus): ToBitsLEStrict
// is the strict form.
func (n AllocatedNum) ToBitsLE(cs r1cs.CS) []boolean.Boolean {
	bits := boolean.FieldIntoAllocatedBitsLE(cs, n.Val)
	if cs.Constraints() {
		var za, zb, c r1cs.LC
		coeff := fr.One()
		for _, b := range bits {
			c.AddCoeff(&coeff, b.V)
			coeff.Double(&coeff)
		}
		c.Sub(n.V)
		cs.Enforce(r1cs.N("unpacking constraint"), &za, &zb, &c)
	}
	out := make([]boolean.Boolean, len(bits))
	for i, b := range bits {
		out[i] = boolean.Is(b)
	}
	return out
}

// modMinusOneBits are the bits of r − 1 (the largest field element),
// least significant first.
var modMinusOneBits = func() [256]bool {
	var m fr.Element
	m.SetOne()
	m.Neg(&m)
	limbs := m.Bits()
	var out [256]bool
	for i := range out {
		out[i] = limbs[i/64]>>(i%64)&1 == 1
	}
	return out
}()

// ToBitsLEStrict allocates n's bits, least significant first, constrained
// to be the canonical representation (at most r − 1), and the
// "unpacking constraint" 0 · 0 = Σ 2^i·bit_i − n.
//
// Bits are allocated from the most significant down, named "bit 0" (the
// most significant) onwards. Walking r − 1 from its top bit: a bit where
// r − 1 has a one is allocated plainly and joins the current run of ones;
// at a bit where r − 1 has a zero, a pending run is first ANDed together
// with the previous run's result ("run ending at i", the ANDs "and j"),
// and the bit is then allocated with AllocBitConditionally against that
// result (it must be 0 while all higher one-bits of r − 1 are set).
func (n AllocatedNum) ToBitsLEStrict(cs r1cs.CS) []boolean.Boolean {
	return toBitsLEStrict(cs, n.V, n.Val.Bits())
}

// toBitsLEStrict is ToBitsLEStrict over the 256-bit integer a (limbs,
// least significant first), which tests set to a non-canonical value.
func toBitsLEStrict(cs r1cs.CS, v r1cs.Variable, a [4]uint64) []boolean.Boolean {
	var result []boolean.AllocatedBit
	var current []boolean.AllocatedBit
	var lastRun boolean.AllocatedBit
	haveLast := false
	found := false
	i := 0
	for k := 255; k >= 0; k-- {
		bBit := modMinusOneBits[k]
		aBit := a[k/64]>>(k%64)&1 == 1
		found = found || bBit
		if !found {
			continue
		}
		if bBit {
			cs.Push(r1cs.Nf("bit %d", i))
			x := boolean.AllocBit(cs, aBit)
			cs.Pop()
			current = append(current, x)
			result = append(result, x)
		} else {
			if len(current) > 0 {
				if haveLast {
					current = append(current, lastRun)
				}
				cs.Push(r1cs.Nf("run ending at %d", i))
				lastRun = karyAnd(cs, current)
				cs.Pop()
				haveLast = true
				current = current[:0]
			}
			cs.Push(r1cs.Nf("bit %d", i))
			x := boolean.AllocBitConditionally(cs, aBit, lastRun)
			cs.Pop()
			result = append(result, x)
		}
		i++
	}
	if cs.Constraints() {
		var za, zb, c r1cs.LC
		coeff := fr.One()
		for j := len(result) - 1; j >= 0; j-- {
			c.AddCoeff(&coeff, result[j].V)
			coeff.Double(&coeff)
		}
		c.Sub(v)
		cs.Enforce(r1cs.N("unpacking constraint"), &za, &zb, &c)
	}
	out := make([]boolean.Boolean, len(result))
	for j := range result {
		out[j] = boolean.Is(result[len(result)-1-j])
	}
	return out
}

// karyAnd ANDs v left to right, the j-th AND (j ≥ 1) in "and j".
func karyAnd(cs r1cs.CS, v []boolean.AllocatedBit) boolean.AllocatedBit {
	cur := v[0]
	for j := 1; j < len(v); j++ {
		cs.Push(r1cs.Nf("and %d", j))
		cur = boolean.AndBits(cs, cur, v[j])
		cs.Pop()
	}
	return cur
}

// ErrDivisionByZero is AssertNonzero's error for a zero value
// (bellperson's SynthesisError::DivisionByZero).
var ErrDivisionByZero = errors.New("num: division by zero")

// AssertNonzero allocates n's inverse ("ephemeral inverse") and the
// constraint n · inv = ONE ("nonzero assertion constraint"). For a zero
// value it still allocates (inverse 0) and constrains, so that a blank
// circuit keeps its shape, and returns ErrDivisionByZero.
func (n AllocatedNum) AssertNonzero(cs r1cs.CS) error {
	var inv fr.Element
	inv.Inverse(&n.Val)
	x := cs.Alloc(r1cs.N("ephemeral inverse"), inv)
	if cs.Constraints() {
		var a, b, c r1cs.LC
		a.Add(n.V)
		b.Add(x)
		c.Add(r1cs.One)
		cs.Enforce(r1cs.N("nonzero assertion constraint"), &a, &b, &c)
	}
	if n.Val.IsZero() {
		return ErrDivisionByZero
	}
	return nil
}

// ConditionallyReverse returns (b, a) when cond is true and (a, b)
// otherwise: it allocates c ("conditional reversal result 1"/"num") with
// (a − b) · cond = a − c ("first conditional reversal"), then d
// ("conditional reversal result 2") with (b − a) · cond = b − d ("second
// conditional reversal").
func ConditionallyReverse(cs r1cs.CS, a, b AllocatedNum, cond boolean.Boolean) (AllocatedNum, AllocatedNum) {
	swap := cond.Value()
	cv, dv := a.Val, b.Val
	if swap {
		cv, dv = b.Val, a.Val
	}
	cs.Push(r1cs.N("conditional reversal result 1"))
	c := Alloc(cs, cv)
	cs.Pop()
	if cs.Constraints() {
		var la, lc r1cs.LC
		la.Add(a.V).Sub(b.V)
		lc.Add(a.V).Sub(c.V)
		cs.Enforce(r1cs.N("first conditional reversal"), &la, cond.LC(&coeffOne), &lc)
	}
	cs.Push(r1cs.N("conditional reversal result 2"))
	d := Alloc(cs, dv)
	cs.Pop()
	if cs.Constraints() {
		var la, lc r1cs.LC
		la.Add(b.V).Sub(a.V)
		lc.Add(b.V).Sub(d.V)
		cs.Enforce(r1cs.N("second conditional reversal"), &la, cond.LC(&coeffOne), &lc)
	}
	return c, d
}

// AddBoolWithCoeff adds coeff·bit to x (bellperson's
// add_bool_with_coeff(one, bit, coeff)).
func (x *Num) AddBoolWithCoeff(bit boolean.Boolean, coeff *fr.Element) *Num {
	bit.AddTo(&x.LC, coeff)
	if bit.Value() {
		x.Val.Add(&x.Val, coeff)
	}
	return x
}
