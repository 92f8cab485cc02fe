package circuit

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// toy is a circuit of Parts' form: a head with inputs and aux, and
// challenges that use the head's variables and their own, with
// coefficients of every kind (1, −1, others) and a cancelled term.
type toy struct {
	n    int
	seed uint64
	head []r1cs.Variable
	hv   []fr.Element
}

func (c *toy) Challenges() int { return c.n }

func (c *toy) val(i, k int) fr.Element {
	var e fr.Element
	e.SetUint64(c.seed*1000 + uint64(i)*37 + uint64(k)*11 + 3)
	return e
}

func (c *toy) Head(cs r1cs.CS) error {
	x := c.val(-1, 0)
	xi := cs.AllocInput(r1cs.N("x"), x)
	xa := cs.Alloc(r1cs.N("x aux"), x)
	var sq fr.Element
	sq.Square(&x)
	s := cs.Alloc(r1cs.N("sq"), sq)
	var a, b, cc r1cs.LC
	a.Add(xi)
	b.Add(r1cs.One)
	cc.Add(xa)
	cs.Enforce(r1cs.N("in"), &a, &b, &cc)
	a.Reset().Add(xa)
	b.Reset().Add(xa)
	cc.Reset().Add(s)
	cs.Enforce(r1cs.N("sq"), &a, &b, &cc)
	c.head, c.hv = []r1cs.Variable{xa, s}, []fr.Element{x, sq}
	return nil
}

func (c *toy) Challenge(cs r1cs.CS, i int) error {
	cs.Push(r1cs.Nf("challenge_%d", i))
	defer cs.Pop()
	y := c.val(i, 1)
	yi := cs.AllocInput(r1cs.N("y"), y)
	ya := cs.Alloc(r1cs.N("y aux"), y)
	// p = y · sq, q = 3·p − x (uses the head), bit b (0/1 shortcut).
	var p, q fr.Element
	p.Mul(&y, &c.hv[1])
	three := r1cs.Coeff(3)
	q.Mul(&p, &three).Sub(&q, &c.hv[0])
	pv := cs.Alloc(r1cs.N("p"), p)
	qv := cs.Alloc(r1cs.N("q"), q)
	bit := fr.NewElement(uint64(i % 2))
	bv := cs.Alloc(r1cs.N("bit"), bit)
	var a, b, cc r1cs.LC
	a.Add(yi)
	b.Add(r1cs.One)
	cc.Add(ya).Add(bv).Sub(bv) // a cancelled term stays, coefficient 0
	cs.Enforce(r1cs.N("in"), &a, &b, &cc)
	a.Reset().Add(ya)
	b.Reset().Add(c.head[1])
	cc.Reset().Add(pv)
	cs.Enforce(r1cs.N("p"), &a, &b, &cc)
	a.Reset().AddCoeff(&three, pv).Sub(c.head[0])
	b.Reset().Add(r1cs.One)
	cc.Reset().Add(qv)
	cs.Enforce(r1cs.N("q"), &a, &b, &cc)
	a.Reset().Add(r1cs.One).Sub(bv)
	b.Reset().Add(bv)
	cc.Reset()
	cs.Enforce(r1cs.N("bit"), &a, &b, &cc)
	return nil
}

func full(t *testing.T, p Parts) *r1cs.System {
	sys := r1cs.NewSystem(r1cs.WithValues())
	if err := p.Head(sys); err != nil {
		t.Fatal(err)
	}
	for i := range p.Challenges() {
		if err := p.Challenge(sys, i); err != nil {
			t.Fatal(err)
		}
	}
	return sys
}

func TestTemplateReplaysTheWholeCircuit(t *testing.T) {
	c := &toy{n: 5, seed: 1}
	tp, err := Record(c)
	if err != nil {
		t.Fatal(err)
	}
	sys := full(t, &toy{n: 5, seed: 1})
	if tp.NumInputs() != sys.NumInputs() || tp.NumAux() != sys.NumAux() || tp.NumConstraints() != sys.NumConstraints() {
		t.Fatalf("template counts %d/%d/%d, whole circuit %d/%d/%d", tp.NumInputs(), tp.NumAux(), tp.NumConstraints(), sys.NumInputs(), sys.NumAux(), sys.NumConstraints())
	}
	var row [3][]r1cs.STerm
	for j := range sys.NumConstraints() {
		tp.Row(j, &row)
		a, b, cc := sys.Row(j)
		for k, want := range [3][]r1cs.STerm{a, b, cc} {
			got := r1cs.FormatTerms(row[k], tp.Recording().Coeffs())
			if w := r1cs.FormatTerms(want, sys.Coeffs()); got != w || len(row[k]) != len(want) {
				t.Fatalf("row %d matrix %d: replay %s (%d terms), whole %s (%d terms)", j, k, got, len(row[k]), w, len(want))
			}
		}
	}
	h, err := tp.Hash(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if h != sys.Hash() {
		t.Fatalf("replayed hash %x, whole circuit %x", h, sys.Hash())
	}
	// Densities against a direct scan of the whole circuit.
	d := tp.Densities()
	aAux, bIn, bAux := make([]bool, sys.NumAux()), make([]bool, sys.NumInputs()), make([]bool, sys.NumAux())
	for j := range sys.NumConstraints() {
		a, b, _ := sys.Row(j)
		for _, x := range a {
			if !x.V.IsInput() && !sys.Coeffs()[x.K].IsZero() {
				aAux[x.V.Index()] = true
			}
		}
		for _, x := range b {
			if sys.Coeffs()[x.K].IsZero() {
				continue
			}
			if x.V.IsInput() {
				bIn[x.V.Index()] = true
			} else {
				bAux[x.V.Index()] = true
			}
		}
	}
	for i := range aAux {
		if d.AAux[i] != aAux[i] || d.BAux[i] != bAux[i] {
			t.Fatalf("aux %d densities A %v B %v, scan %v %v", i, d.AAux[i], d.BAux[i], aAux[i], bAux[i])
		}
	}
	for i := range bIn {
		if d.BInput[i] != bIn[i] {
			t.Fatalf("input %d B density %v, scan %v", i, d.BInput[i], bIn[i])
		}
	}
	// The cancelled term (challenge 0's bit, in C only) marks no density.
	// Evaluate against the whole system's own evaluation.
	in, aux := sys.Values()
	m := sys.NumConstraints()
	out := Eval{A: make([]fr.Element, m), B: make([]fr.Element, m), C: make([]fr.Element, m)}
	if err := tp.Evaluate(context.Background(), NewAssignment(in, aux), out, 3); err != nil {
		t.Fatal(err)
	}
	for j := range m {
		a, b, cc := sys.Row(j)
		for k, x := range [3]fr.Element{sys.Eval(a), sys.Eval(b), sys.Eval(cc)} {
			if got := [3]fr.Element{out.A[j], out.B[j], out.C[j]}[k]; !got.Equal(&x) {
				t.Fatalf("row %d matrix %d: %s, want %s", j, k, got.String(), x.String())
			}
		}
	}
}

func TestEvaluateFindsTheLowestUnsatisfiedRow(t *testing.T) {
	c := &toy{n: 4, seed: 2}
	tp, err := Record(c)
	if err != nil {
		t.Fatal(err)
	}
	sys := full(t, &toy{n: 4, seed: 2})
	in, aux := sys.Values()
	_, aux0, row0 := tp.ChallengeStart(2)
	// Break challenge 2's and 3's bits (aux 4 of a challenge: y, p, q, bit).
	aux[aux0+3] = fr.NewElement(5)
	_, aux3, _ := tp.ChallengeStart(3)
	aux[aux3+3] = fr.NewElement(7)
	m := tp.NumConstraints()
	out := Eval{A: make([]fr.Element, m), B: make([]fr.Element, m), C: make([]fr.Element, m)}
	for range 5 { // the work order varies; the answer may not
		err = tp.Evaluate(context.Background(), NewAssignment(in, aux), out, 1+rand.IntN(4))
		var u *Unsatisfied
		if !errors.As(err, &u) {
			t.Fatalf("got %v, want *Unsatisfied", err)
		}
		if u.Challenge != 2 || u.Row != row0+3 || u.Local != 3 {
			t.Fatalf("got %+v, want challenge 2 row %d (local 3)", u, row0+3)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tp.Evaluate(ctx, NewAssignment(in, aux), out, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
