package uint64

import (
	"testing"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func TestAllocPackIntoInput(t *testing.T) {
	for _, v := range []uint64{0, 1, 0x8000_0000_0000_0001, 123456789, ^uint64(0)} {
		s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
		u := Alloc(s, v)
		u.PackIntoInput(s)
		if s.NumAux() != 64 || s.NumInputs() != 2 || s.NumConstraints() != 65 {
			t.Fatalf("%d aux, %d inputs, %d constraints; want 64, 2, 65", s.NumAux(), s.NumInputs(), s.NumConstraints())
		}
		if err := s.Satisfied(); err != nil {
			t.Fatal(err)
		}
		in, aux := s.Values()
		var want = r1cs.Coeff(0)
		want.SetUint64(v)
		if !in[1].Equal(&want) {
			t.Fatalf("input %s, want %d", in[1].String(), v)
		}
		if got := s.Name(0); got != "allocated bit 0/boolean constraint" {
			t.Fatalf("first constraint %q", got)
		}
		if got := s.Name(64); got != "packing constraint 0" {
			t.Fatalf("last constraint %q", got)
		}
		be := u.BitsBE()
		for i := range 64 {
			if be[i].Value() != (v>>(63-i)&1 == 1) {
				t.Fatalf("BE bit %d of %x wrong", i, v)
			}
		}
		if FromBitsBE(be).Value != v || FromBitsLE(u.BitsLE()).Value != v || Constant(v).Value != v {
			t.Fatal("round trip")
		}
		// Flipping a bit breaks the packing (or the bit's own constraint).
		aux[5].SetUint64(1 - aux[5].Uint64())
		if s.Satisfied() == nil {
			t.Fatal("a flipped bit satisfies the circuit")
		}
	}
}
