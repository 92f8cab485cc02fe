package constraint

import (
	"testing"

	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func TestRelations(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b int64
		// build allocates the result (or a wrong one) and returns the
		// expected value of the result.
		build func(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum
		want  int64
	}{
		{"add", 7, 5, func(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum { return Add(cs, a, b) }, 12},
		{"sub", 7, 5, func(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum { return Sub(cs, a, b) }, 2},
		{"sub negative", 5, 7, func(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum { return Sub(cs, a, b) }, -2},
		{"encode", 7, 5, func(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum { return Encode(cs, a, b) }, 12},
		{"decode", 5, 12, func(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum { return Decode(cs, a, b) }, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
			a := num.Alloc(s, r1cs.Coeff(tc.a))
			b := num.Alloc(s, r1cs.Coeff(tc.b))
			r := tc.build(s, a, b)
			want := r1cs.Coeff(tc.want)
			if !r.Val.Equal(&want) || !s.Value(r.V).Equal(&want) {
				t.Fatalf("result %s, want %d", r.Val.String(), tc.want)
			}
			if s.NumConstraints() != 1 || s.NumAux() != 3 {
				t.Fatalf("%d constraints, %d aux; want 1 and 3", s.NumConstraints(), s.NumAux())
			}
			if err := s.Satisfied(); err != nil {
				t.Fatal(err)
			}
			_, aux := s.Values()
			aux[r.V.Index()].SetUint64(99)
			if s.Satisfied() == nil {
				t.Fatal("a wrong result satisfies the constraint")
			}
		})
	}
}

func TestEqual(t *testing.T) {
	s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
	a := num.Alloc(s, r1cs.Coeff(3))
	b := num.Alloc(s, r1cs.Coeff(3))
	c := num.Alloc(s, r1cs.Coeff(4))
	Equal(s, r1cs.N("a = b"), a, b)
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	Equal(s, r1cs.N("a = c"), a, c)
	err := s.Satisfied()
	if u, ok := err.(*r1cs.Unsatisfied); !ok || u.Name != "a = c" {
		t.Fatalf("got %v, want constraint \"a = c\" unsatisfied", err)
	}
	w := r1cs.NewWitness()
	Equal(w, r1cs.N("x"), a, c)
	Add(w, a, c)
	if w.NumAux() != 1 {
		t.Fatalf("witness allocated %d aux, want 1", w.NumAux())
	}
}
