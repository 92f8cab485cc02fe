package partition

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
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

// Evaluate computes every constraint's A, B and C over the assignment
// (inputs with ONE first, aux) and checks A·B = C, the head and the
// challenges concurrently on up to nw goroutines (0: GOMAXPROCS). It
// returns the lowest unsatisfied constraint as *Unsatisfied (every row is
// still written), or ctx's error.
func (t *Template) Evaluate(ctx context.Context, inputs, aux []fr.Element, out Eval, nw int) error {
	if len(inputs) < t.NumInputs() || len(aux) < t.NumAux() {
		return fmt.Errorf("partition: assignment of %d inputs and %d aux, the circuit has %d and %d", len(inputs), len(aux), t.NumInputs(), t.NumAux())
	}
	if len(out.A) < t.NumConstraints() || len(out.B) < t.NumConstraints() || len(out.C) < t.NumConstraints() {
		return fmt.Errorf("partition: A, B, C shorter than the %d constraints", t.NumConstraints())
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
				bad := t.evalUnit(u, inputs, aux, &out)
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

// evalUnit evaluates the head (u = −1) or challenge u.
func (t *Template) evalUnit(u int, inputs, aux []fr.Element, out *Eval) *Unsatisfied {
	var bases [4][]fr.Element
	bases[classInput], bases[classAux] = inputs, aux
	from, to, dst := 0, t.headRows, 0
	if u >= 0 {
		in0, aux0, row0 := t.ChallengeStart(u)
		bases[classChalInput], bases[classChalAux] = inputs[in0:], aux[aux0:]
		from, to, dst = t.headRows, t.headRows+t.chalRows, row0
	}
	coeffs := t.sys.Coeffs()
	var bad *Unsatisfied
	for r := from; r < to; r++ {
		o := t.offs[3*r : 3*r+4]
		a := evalLC(t.prog[o[0]:o[1]], &bases, coeffs)
		b := evalLC(t.prog[o[1]:o[2]], &bases, coeffs)
		c := evalLC(t.prog[o[2]:o[3]], &bases, coeffs)
		j := dst + r - from
		out.A[j], out.B[j], out.C[j] = a, b, c
		if out.ACodes != nil {
			out.ACodes[j], out.BCodes[j], out.CCodes[j] = out.Code(&a), out.Code(&b), out.Code(&c)
		}
		if bad == nil && !productIs(&a, &b, &c) {
			bad = &Unsatisfied{Row: j, Challenge: u, Local: r - from, Recorded: r}
		}
	}
	return bad
}

func evalLC(ts []eterm, bases *[4][]fr.Element, coeffs []fr.Element) fr.Element {
	var acc, t fr.Element
	for _, x := range ts {
		v := &bases[x.meta>>2&3][x.idx]
		switch x.meta & 3 {
		case kindOne:
			acc.Add(&acc, v)
		case kindMinusOne:
			acc.Sub(&acc, v)
		default:
			switch {
			case v.IsZero():
			case v.IsOne():
				acc.Add(&acc, &coeffs[x.meta>>4])
			default:
				t.Mul(v, &coeffs[x.meta>>4])
				acc.Add(&acc, &t)
			}
		}
	}
	return acc
}

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
