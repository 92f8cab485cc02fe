package multipack

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
	"github.com/c2cluster/c2cluster/pkg/r1cs/r1cstest"
)

func TestPackIntoInputsMatchesComputeMultipacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 253, 254, 255, 508, 509, 1000} {
		s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
		bools := make([]bool, n)
		bits := make([]boolean.Boolean, n)
		for i := range bools {
			bools[i] = rng.IntN(2) == 1
			s.Push(r1cs.Nf("bit %d", i))
			bits[i] = boolean.Is(boolean.AllocBit(s, bools[i]))
			s.Pop()
			// Negated and constant bits pack the same.
			switch i % 5 {
			case 3:
				bits[i] = boolean.Is(boolean.AllocBit(s, !bools[i])).Not()
			case 4:
				bits[i] = boolean.Constant(bools[i])
			}
		}
		ins := PackIntoInputs(s, bits)
		want := ComputeMultipacking(bools)
		if len(ins) != len(want) || len(want) != (n+Capacity-1)/Capacity {
			t.Fatalf("%d bits: %d inputs, %d expected", n, len(ins), len(want))
		}
		inputs, _ := s.Values()
		for i, v := range ins {
			if v != r1cs.Input(i+1) || !inputs[i+1].Equal(&want[i]) {
				t.Fatalf("%d bits: input %d is %v = %s, want %s", n, i, v, inputs[i+1].String(), want[i].String())
			}
		}
		if err := s.Satisfied(); err != nil {
			t.Fatalf("%d bits: %v", n, err)
		}
		if len(ins) > 0 {
			p := s.Value(ins[0])
			one := fr.One()
			p.Add(p, &one)
			if s.Satisfied() == nil {
				t.Fatalf("%d bits: a wrong input accepted", n)
			}
		}
	}
}

func TestComputeMultipacking(t *testing.T) {
	bits := BytesToBitsLE([]byte{0x05, 0x80})
	got := ComputeMultipacking(bits)
	want := r1cs.Coeff(0x8005)
	if len(got) != 1 || !got[0].Equal(&want) {
		t.Fatalf("got %v", got)
	}
	// 254 ones, then a one: 2^254 − 1 and 1.
	ones := make([]bool, 255)
	for i := range ones {
		ones[i] = true
	}
	got = ComputeMultipacking(ones)
	top := r1cs.PowerOfTwo(254)
	one := fr.One()
	top.Sub(&top, &one)
	if len(got) != 2 || !got[0].Equal(&top) || !got[1].IsOne() {
		t.Fatalf("255 ones: %d elements", len(got))
	}
}

func TestBytesToBits(t *testing.T) {
	be := BytesToBits([]byte{0x81, 0x40})
	le := BytesToBitsLE([]byte{0x81, 0x40})
	wantBE := []bool{true, false, false, false, false, false, false, true, false, true, false, false, false, false, false, false}
	wantLE := []bool{true, false, false, false, false, false, false, true, false, false, false, false, false, false, true, false}
	for i := range wantBE {
		if be[i] != wantBE[i] || le[i] != wantLE[i] {
			t.Fatalf("bit %d: be %v le %v", i, be[i], le[i])
		}
	}
}

func TestPackBits(t *testing.T) {
	s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
	bools := BytesToBitsLE([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32})
	bits := make([]boolean.Boolean, len(bools))
	for i, b := range bools {
		bits[i] = boolean.Is(boolean.AllocBit(s, b))
	}
	n := PackBits(s, bits)
	want := ComputeMultipacking(bools[:Capacity])[0]
	if !n.Val.Equal(&want) {
		t.Fatal("packed value differs")
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	if s.Name(s.NumConstraints()-1) != "packing constraint" {
		t.Fatalf("name %q", s.Name(s.NumConstraints()-1))
	}
}

// TestPackIntoInputsOracle rebuilds the base-8 PoRep circuit's first
// challenge (64 allocated bits, then their packing into input 19) at the
// variable indices the oracle has, and compares those constraint lines.
func TestPackIntoInputsOracle(t *testing.T) {
	const (
		firstLine = 148521 // "challenge_0/challenge/allocated bit 0/…"
		firstAux  = 148477
		firstIn   = 19
	)
	s := r1cs.NewSystem(r1cs.WithNames())
	for range firstAux {
		s.Alloc(r1cs.N("before"), fr.Element{})
	}
	for range firstIn - 1 {
		s.AllocInput(r1cs.N("before"), fr.Element{})
	}
	s.Push(r1cs.N("stacked drgporep"))
	s.Push(r1cs.N("challenge_0"))
	s.Push(r1cs.N("challenge"))
	v := rand.Uint64()
	bits := make([]boolean.Boolean, 64)
	for i := range bits {
		s.Push(r1cs.Nf("allocated bit %d", i))
		bits[i] = boolean.Is(boolean.AllocBit(s, v>>i&1 == 1))
		s.Pop()
	}
	s.Pop()
	s.Push(r1cs.N("challenge input"))
	PackIntoInputs(s, bits)
	s.Pop()
	s.Pop()
	s.Pop()

	sc := r1cstest.OpenDump(t, "porep-base8.r1cs.txt.gz")
	for range firstLine + 1 { // header and the lines before
		sc.Scan()
	}
	for j := range s.NumConstraints() {
		if !sc.Scan() {
			t.Fatal("dump ends early")
		}
		a, b, c := s.Row(j)
		if got, want := r1cs.DumpLine(firstLine+j, a, b, c, s.Coeffs(), s.Name(j)), sc.Text(); got != want {
			t.Fatalf("constraint %d differs\nreference: %s\nours:      %s", firstLine+j, want, got)
		}
	}
	if s.NumConstraints() != 65 {
		t.Fatalf("%d constraints", s.NumConstraints())
	}
}
