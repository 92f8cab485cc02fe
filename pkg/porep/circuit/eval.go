package circuit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Unsatisfied says which constraint an assignment does not satisfy.
type Unsatisfied struct {
	Row       int // in the partition's numbering
	Challenge int // −1 for the head
	Local     int // the row within the head or the challenge
	Recorded  int // the same row in the template's recording (Template.Recording)
}

func (u *Unsatisfied) Error() string {
	if u.Challenge < 0 {
		return fmt.Sprintf("constraint %d (head row %d) is not satisfied", u.Row, u.Local)
	}
	return fmt.Sprintf("constraint %d (challenge %d, row %d of the challenge) is not satisfied", u.Row, u.Challenge, u.Local)
}

// Eval is where Evaluate writes: A, B, C have NumConstraints elements
// (the caller appends the input rows); the codes, when not nil, get each
// value's groth16 value code alongside.
type Eval struct {
	A, B, C                []fr.Element
	ACodes, BCodes, CCodes []uint8
	// Code maps a value to its code (groth16.CodeOf); needed with codes.
	Code func(*fr.Element) uint8
}

// Assignment is the values of a partition's variables and their groth16
// value codes (groth16.CodeOf), which the evaluation reads first: most
// values are 0, 1 or −1, and a byte per variable is read where a 32-byte
// value would be.
type Assignment struct {
	Inputs, Aux          []fr.Element // inputs with ONE first
	InputCodes, AuxCodes []uint8
}

// NewAssignment wraps values, with their codes computed.
func NewAssignment(inputs, aux []fr.Element) Assignment {
	a := Assignment{Inputs: inputs, Aux: aux, InputCodes: make([]uint8, len(inputs)), AuxCodes: make([]uint8, len(aux))}
	groth16.EncodeCodes(a.InputCodes, inputs)
	groth16.EncodeCodes(a.AuxCodes, aux)
	return a
}

// Evaluate computes every constraint's A, B and C over the assignment
// and checks A·B = C, the head and the challenges concurrently on up to nw
// goroutines (0: GOMAXPROCS). It returns the lowest unsatisfied constraint
// as *Unsatisfied (every row is still written), or ctx's error.
func (t *Template) Evaluate(ctx context.Context, z Assignment, out Eval, nw int) error {
	if len(z.Inputs) < t.NumInputs() || len(z.Aux) < t.NumAux() || len(z.InputCodes) < t.NumInputs() || len(z.AuxCodes) < t.NumAux() {
		return fmt.Errorf("circuit: assignment of %d inputs and %d aux (%d and %d codes), the circuit has %d and %d",
			len(z.Inputs), len(z.Aux), len(z.InputCodes), len(z.AuxCodes), t.NumInputs(), t.NumAux())
	}
	if len(out.A) < t.NumConstraints() || len(out.B) < t.NumConstraints() || len(out.C) < t.NumConstraints() {
		return fmt.Errorf("circuit: A, B, C shorter than the %d constraints", t.NumConstraints())
	}
	if nw <= 0 {
		nw = workers()
	}
	// Units of work: the head, then each challenge.
	var next atomic.Int64
	var mu sync.Mutex
	var first *Unsatisfied
	var wg sync.WaitGroup
	for range min(nw, t.n+1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				u := int(next.Add(1)) - 2 // −1: the head
				if u >= t.n || ctx.Err() != nil {
					return
				}
				bad := t.evalUnit(u, &z, &out)
				if bad != nil {
					mu.Lock()
					if first == nil || bad.Row < first.Row {
						first = bad
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if first != nil {
		return first
	}
	return nil
}

// EvaluateUnit evaluates the rows of the head (u = −1) or of challenge u
// alone (they read only the head's variables and the unit's own, whose
// values and codes must be set), as Evaluate does, and returns the unit's
// first unsatisfied row or nil.
func (t *Template) EvaluateUnit(u int, z *Assignment, out *Eval) *Unsatisfied {
	return t.evalUnit(u, z, out)
}

// bases are where each variable class's values and codes start.
type bases struct {
	vals  [4][]fr.Element
	codes [4][]uint8
}

// evalUnit evaluates the head (u = −1) or challenge u.
func (t *Template) evalUnit(u int, z *Assignment, out *Eval) *Unsatisfied {
	var bs bases
	bs.vals[classInput], bs.vals[classAux] = z.Inputs, z.Aux
	bs.codes[classInput], bs.codes[classAux] = z.InputCodes, z.AuxCodes
	from, to, dst := 0, t.headRows, 0
	if u >= 0 {
		in0, aux0, row0 := t.ChallengeStart(u)
		bs.vals[classChalInput], bs.vals[classChalAux] = z.Inputs[in0:], z.Aux[aux0:]
		bs.codes[classChalInput], bs.codes[classChalAux] = z.InputCodes[in0:], z.AuxCodes[aux0:]
		from, to, dst = t.headRows, t.headRows+t.chalRows, row0
	}
	coeffs := t.sys.Coeffs()
	var bad *Unsatisfied
	for r := from; r < to; r++ {
		o := t.offs[3*r : 3*r+4]
		j := dst + r - from
		a, b, c := &out.A[j], &out.B[j], &out.C[j]
		evalLC(a, t.prog[o[0]:o[1]], &bs, coeffs)
		evalLC(b, t.prog[o[1]:o[2]], &bs, coeffs)
		evalLC(c, t.prog[o[2]:o[3]], &bs, coeffs)
		if out.ACodes != nil {
			out.ACodes[j], out.BCodes[j], out.CCodes[j] = out.Code(a), out.Code(b), out.Code(c)
		}
		if bad == nil && !productIs(a, b, c) {
			bad = &Unsatisfied{Row: j, Challenge: u, Local: r - from, Recorded: r}
		}
	}
	return bad
}

// evalLC sets acc to the combination's value. A term reads its variable's
// code first: 0 adds nothing, ±1 adds ±coefficient (terms of coefficient
// ±1 with values ±1 are counted in an integer and added once), and only
// other values are read and multiplied.
func evalLC(acc *fr.Element, ts []eterm, bs *bases, coeffs []fr.Element) {
	acc.SetZero()
	var t fr.Element
	units := int64(0)
	for _, x := range ts {
		class := x.meta >> 2 & 3
		code := bs.codes[class][x.idx]
		if code == groth16.CodeZero {
			continue
		}
		kind := x.meta & 3
		switch code {
		case groth16.CodeOne:
			switch kind {
			case kindOne:
				units++
			case kindMinusOne:
				units--
			default:
				acc.Add(acc, &coeffs[x.meta>>4])
			}
		case groth16.CodeMinusOne:
			switch kind {
			case kindOne:
				units--
			case kindMinusOne:
				units++
			default:
				acc.Sub(acc, &coeffs[x.meta>>4])
			}
		default:
			v := &bs.vals[class][x.idx]
			switch kind {
			case kindOne:
				acc.Add(acc, v)
			case kindMinusOne:
				acc.Sub(acc, v)
			default:
				t.Mul(v, &coeffs[x.meta>>4])
				acc.Add(acc, &t)
			}
		}
	}
	switch {
	case units == 0:
	case units > -smallInts && units < smallInts:
		acc.Add(acc, &smallInt[units+smallInts])
	default:
		t.SetInt64(units)
		acc.Add(acc, &t)
	}
}

// smallInt[i] is i − smallInts as a field element.
const smallInts = 64

var smallInt = func() (t [2 * smallInts]fr.Element) {
	for i := range t {
		t[i].SetInt64(int64(i - smallInts))
	}
	return t
}()

// productIs reports a·b = c, without a multiplication when a or b is 0 or 1.
func productIs(a, b, c *fr.Element) bool {
	switch {
	case a.IsZero() || b.IsZero():
		return c.IsZero()
	case a.IsOne():
		return b.Equal(c)
	case b.IsOne():
		return a.Equal(c)
	}
	var p fr.Element
	p.Mul(a, b)
	return p.Equal(c)
}
