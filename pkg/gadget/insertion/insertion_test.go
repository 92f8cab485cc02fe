package insertion

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func randomNums(cs r1cs.CS, n int) []num.AllocatedNum {
	out := make([]num.AllocatedNum, n)
	for i := range out {
		var v fr.Element
		v.SetRandom()
		out[i] = num.Alloc(cs, v)
	}
	return out
}

func indexBits(cs r1cs.CS, index, n int) []boolean.Boolean {
	bits := make([]boolean.Boolean, n)
	for i := range bits {
		bits[i] = boolean.Is(boolean.AllocBit(cs, index>>i&1 == 1))
	}
	return bits
}

// TestInsert checks every position of every size against the plain
// insertion, the constraint counts (size·(size−1) for the general network,
// fewer for the hand-written sizes) and that the results are bound.
func TestInsert(t *testing.T) {
	wantConstraints := map[int]int{2: 2, 4: 8, 8: 22, 16: 240}
	for logSize := 1; logSize <= 4; logSize++ {
		size := 1 << logSize
		for index := range size {
			s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
			elements := randomNums(s, size-1)
			x := randomNums(s, 1)[0]
			bits := indexBits(s, index, logSize)
			before := s.NumConstraints()
			got := Insert(s, x, bits, elements)
			if n := s.NumConstraints() - before; n != wantConstraints[size] {
				t.Fatalf("size %d: %d constraints, want %d", size, n, wantConstraints[size])
			}
			want := append(append(append([]num.AllocatedNum{}, elements[:index]...), x), elements[index:]...)
			for i := range want {
				if !got[i].Val.Equal(&want[i].Val) || !s.Value(got[i].V).Equal(&want[i].Val) {
					t.Fatalf("size %d index %d: position %d wrong", size, index, i)
				}
			}
			if err := s.Satisfied(); err != nil {
				t.Fatalf("size %d index %d: %v", size, index, err)
			}
			_, aux := s.Values()
			for i := range got {
				saved := aux[got[i].V.Index()]
				aux[got[i].V.Index()] = want[(i+1)%size].Val
				if s.Satisfied() == nil {
					t.Fatalf("size %d index %d: position %d holding another element satisfies the circuit", size, index, i)
				}
				aux[got[i].V.Index()] = saved
			}
		}
	}
}

func TestSelect(t *testing.T) {
	for logSize := 1; logSize <= 4; logSize++ {
		size := 1 << logSize
		for index := range size {
			s := r1cs.NewSystem(r1cs.WithValues())
			from := randomNums(s, size)
			bits := indexBits(s, index, logSize)
			before := s.NumConstraints()
			got := Select(s, from, bits)
			if n := s.NumConstraints() - before; n != size-1 {
				t.Fatalf("%d constraints, want %d", n, size-1)
			}
			if !got.Val.Equal(&from[index].Val) {
				t.Fatalf("size %d: selected the wrong element for %d", size, index)
			}
			if err := s.Satisfied(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestWitnessAllocatesTheSame(t *testing.T) {
	s := r1cs.NewSystem(r1cs.WithValues())
	w := r1cs.NewWitness()
	for _, cs := range []r1cs.CS{s, w} {
		e := make([]num.AllocatedNum, 7)
		for i := range e {
			e[i] = num.Alloc(cs, r1cs.Coeff(int64(i+10)))
		}
		x := num.Alloc(cs, r1cs.Coeff(99))
		Insert(cs, x, indexBits(cs, 5, 3), e)
	}
	_, aux := s.Values()
	if len(aux) != len(w.Aux) {
		t.Fatalf("system %d aux, witness %d", len(aux), len(w.Aux))
	}
	for i := range aux {
		if !aux[i].Equal(&w.Aux[i]) {
			t.Fatalf("aux %d differs", i)
		}
	}
}
