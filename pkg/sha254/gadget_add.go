package sha254

import (
	"cmp"
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
)

func init() {
	solver.RegisterHint(sumBitsHint)
}

// sumBitsHint returns the little-endian bits of Σ inputs (inputs are small
// non-negative integers: a constant and the values of 32-bit words).
func sumBitsHint(_ *big.Int, inputs []*big.Int, outputs []*big.Int) error {
	s := new(big.Int)
	for _, in := range inputs {
		s.Add(s, in)
	}
	if s.BitLen() > len(outputs) {
		return fmt.Errorf("sha254: sum has %d bits, %d allocated", s.BitLen(), len(outputs))
	}
	for i, o := range outputs {
		o.SetUint64(uint64(s.Bit(i)))
	}
	return nil
}

// add returns the sum of the words modulo 2^32. The sum's bits, carries
// included, are allocated as booleans (one constraint each) and the equality
// Σ operands = Σ 2^i·bit_i is handed to the packer. Constant operands are
// folded; an all-constant sum is a constant word.
func (g *gadget) add(ops ...*word) *word {
	var (
		konst  uint64
		vars   []*word
		maxSum uint64
	)
	for _, w := range ops {
		if x, ok := w.constValue(); ok {
			konst += uint64(x)
			continue
		}
		vars = append(vars, w)
		maxSum += w.maxValue()
	}
	if len(vars) == 0 {
		return constWord(uint32(konst))
	}
	if len(vars) == 1 && konst == 0 {
		return vars[0]
	}
	maxSum += konst
	n := bits.Len64(maxSum)

	ins := make([]frontend.Variable, 0, len(vars)+1)
	ins = append(ins, konst)
	for _, w := range vars {
		ins = append(ins, g.value(w))
	}
	outs, err := g.api.Compiler().NewHint(sumBitsHint, n, ins...)
	if err != nil {
		panic(fmt.Errorf("sha254: addition hint: %w", err))
	}
	res := &word{}
	for i := range n {
		g.api.AssertIsBoolean(outs[i])
		if i < 32 {
			res.b[i] = vbit(outs[i])
		}
	}
	for i := n; i < 32; i++ {
		res.b[i] = cbit(0)
	}

	sumTerms := make([]frontend.Variable, n)
	for i := range n {
		sumTerms[i] = g.api.Mul(outs[i], pow2(i))
	}
	g.eq.add(g.api, equality{
		operands: vars,
		values:   ins[1:],
		konst:    konst,
		sum:      sum(g.api, sumTerms),
		nbits:    n,
	})
	return res
}

// equality is Σ operands + konst = sum, all sides below 2^nbits.
type equality struct {
	operands []*word
	values   []frontend.Variable // linear expressions of the operands
	konst    uint64
	sum      frontend.Variable
	nbits    int
}

// packer packs several equalities into one R1CS constraint, bellman's MultiEq:
// with each E_k = L_k − R_k an integer of absolute value below 2^{n_k},
//
//	Σ_k 2^{o_k}·E_k = 0,  o_k = n_0 + … + n_{k−1},  Σ n_k ≤ packBits,
//
// holds in the field only if it holds over the integers (its magnitude stays
// below 2^253 < r), and then each E_k = 0 by uniqueness of the base-2^{n_k}
// digits. The terms are spread over both sides of one AssertIsEqual (X = Y)
// so that neither side reaches gnark's default CompressThreshold of 300 terms,
// past which the builder would spend a constraint on an intermediate
// variable. An operand that already sits on a side (the round's shared
// h + Σ1 + Ch + K + W of SHA-256's two additions) merges there at no cost.
type packer struct {
	side    [2]packSide
	placed  []placedTerm
	konst   *big.Int // constant part, on side 0
	bitsUse int
}

type packSide struct {
	terms int
	ids   map[*word]bool
}

type placedTerm struct {
	v     frontend.Variable
	coeff *big.Int // signed: +2^o for operands, −2^o for the sum, times −1 on side 1
	side  int
}

const (
	packBits   = 253 // bellman uses Fr::CAPACITY = 254; one bit of margin
	packBudget = 296 // < 300 terms per side, one left for the constant
)

type packGroup struct {
	id    *word // nil for the sum
	v     frontend.Variable
	terms int
	sign  int
}

func (p *packer) add(api frontend.API, e equality) {
	groups := make([]packGroup, 0, len(e.operands)+1)
	for i, w := range e.operands {
		groups = append(groups, packGroup{id: w, v: e.values[i], terms: termsOf(e.values[i]), sign: 1})
	}
	groups = append(groups, packGroup{v: e.sum, terms: termsOf(e.sum), sign: -1})
	slices.SortStableFunc(groups, func(a, b packGroup) int { return cmp.Compare(b.terms, a.terms) })

	if p.bitsUse+e.nbits > packBits {
		p.flush(api)
	}
	if !p.place(groups, e, false) {
		p.flush(api)
		p.place(groups, e, true)
		dbgForced++
	}
}

// place assigns each group to a side; unless force is set it gives up when a
// side would exceed the term budget.
func (p *packer) place(groups []packGroup, e equality, force bool) bool {
	count := [2]int{p.side[0].terms, p.side[1].terms}
	sides := make([]int, len(groups))
	for i, g := range groups {
		switch {
		case g.id != nil && p.side[0].ids[g.id]:
			sides[i] = 0
		case g.id != nil && p.side[1].ids[g.id]:
			sides[i] = 1
		case count[0] <= count[1]:
			sides[i] = 0
			count[0] += g.terms
		default:
			sides[i] = 1
			count[1] += g.terms
		}
	}
	if !force && (count[0] > packBudget || count[1] > packBudget) {
		return false
	}
	shift := pow2(p.bitsUse)
	for i, g := range groups {
		s := sides[i]
		c := new(big.Int).Set(shift)
		if g.sign < 0 {
			c.Neg(c)
		}
		if s == 1 {
			c.Neg(c)
		}
		p.placed = append(p.placed, placedTerm{v: g.v, coeff: c, side: s})
		if g.id != nil {
			if p.side[s].ids == nil {
				p.side[s].ids = make(map[*word]bool)
			}
			p.side[s].ids[g.id] = true
		}
	}
	p.side[0].terms, p.side[1].terms = count[0], count[1]
	if e.konst != 0 {
		if p.konst == nil {
			p.konst = new(big.Int)
		}
		p.konst.Add(p.konst, new(big.Int).Mul(new(big.Int).SetUint64(e.konst), shift))
	}
	p.bitsUse += e.nbits
	return true
}

// flush emits the pending equalities as one constraint.
func (p *packer) flush(api frontend.API) {
	if len(p.placed) == 0 {
		return
	}
	modulus := fr.Modulus()
	var xs, ys []frontend.Variable
	for _, t := range p.placed {
		c := t.coeff.Mod(t.coeff, modulus)
		term := api.Mul(t.v, c)
		if t.side == 0 {
			xs = append(xs, term)
		} else {
			ys = append(ys, term)
		}
	}
	if p.konst != nil && p.konst.Sign() != 0 {
		xs = append(xs, p.konst)
	}
	dbgFlushes++
	dbgSides = append(dbgSides, [2]int{termsOf(sum(api, xs)), termsOf(sum(api, ys))})
	api.AssertIsEqual(sum(api, xs), sum(api, ys))
	*p = packer{}
}

var dbgFlushes, dbgForced int
var dbgSides [][2]int
