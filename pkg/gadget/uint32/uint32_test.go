package uint32

import (
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func newSys() *r1cs.System { return r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames()) }

// bitsValue reads a word's value from its bits alone.
func bitsValue(x UInt32) uint32 {
	var v uint32
	for i, b := range x.Bits {
		if b.Value() {
			v |= 1 << i
		}
	}
	return v
}

// word makes v in s with its bits allocated, negated or constant
// (kind 0, 1, 2; 3 picks one at random per bit).
func word(s r1cs.CS, rng *rand.Rand, v uint32, kind int) UInt32 {
	x := UInt32{Val: v}
	for i := range x.Bits {
		bit := v>>i&1 == 1
		k := kind
		if k == 3 {
			k = rng.IntN(3)
		}
		switch k {
		case 0:
			x.Bits[i] = boolean.Is(boolean.AllocBit(s, bit))
		case 1:
			x.Bits[i] = boolean.Is(boolean.AllocBit(s, !bit)).Not()
		default:
			x.Bits[i] = boolean.Constant(bit)
		}
	}
	return x
}

func TestWordsAndBitOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newSys()
	v := rng.Uint32()
	a := Alloc(s, v)
	if a.Val != v || bitsValue(a) != v || s.NumConstraints() != 32 || s.Name(3) != "allocated bit 3/boolean constraint" {
		t.Fatalf("Alloc: %08x, %d constraints, %q", bitsValue(a), s.NumConstraints(), s.Name(3))
	}
	c := Constant(v)
	for _, b := range c.Bits {
		if !b.IsConstant() {
			t.Fatal("Constant has a variable bit")
		}
	}
	if bitsValue(c) != v {
		t.Fatal("Constant bits")
	}
	le, be := a.IntoBits(), a.IntoBitsBE()
	if FromBits(le) != a || FromBitsBE(be) != a {
		t.Fatal("bit orders do not round trip")
	}
	if be[0] != a.Bits[31] || le[0] != a.Bits[0] {
		t.Fatal("bit order")
	}
	for _, by := range []int{0, 1, 2, 7, 13, 31, 32, 45} {
		r := a.Rotr(by)
		if r.Val != bits.RotateLeft32(v, -by) || bitsValue(r) != r.Val {
			t.Fatalf("rotr %d: %08x / %08x", by, r.Val, bitsValue(r))
		}
		sh := a.Shr(by)
		if want := v >> (by % 32); sh.Val != want || bitsValue(sh) != want {
			t.Fatalf("shr %d: %08x / %08x", by, sh.Val, bitsValue(sh))
		}
		for i := 32 - by%32; i < 32; i++ {
			if !sh.Bits[i].IsConstant() {
				t.Fatalf("shr %d: bit %d is not a constant zero", by, i)
			}
		}
	}
	if s.NumConstraints() != 32 {
		t.Fatal("rotations or shifts added constraints")
	}
}

func TestXorChMaj(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for kind := range 4 {
		for range 5 {
			s := newSys()
			va, vb, vc := rng.Uint32(), rng.Uint32(), rng.Uint32()
			a, b, c := word(s, rng, va, kind), word(s, rng, vb, kind), word(s, rng, vc, kind)
			n0 := s.NumConstraints()
			x := a.Xor(s, b)
			ch := Sha256Ch(s, a, b, c)
			maj := Sha256Maj(s, a, b, c)
			if x.Val != va^vb || bitsValue(x) != x.Val {
				t.Fatalf("kind %d: xor %08x", kind, bitsValue(x))
			}
			if want := va&vb ^ ^va&vc; ch.Val != want || bitsValue(ch) != want {
				t.Fatalf("kind %d: ch %08x want %08x", kind, bitsValue(ch), want)
			}
			if want := va&vb ^ va&vc ^ vb&vc; maj.Val != want || bitsValue(maj) != want {
				t.Fatalf("kind %d: maj %08x want %08x", kind, bitsValue(maj), want)
			}
			if err := s.Satisfied(); err != nil {
				t.Fatalf("kind %d: %v", kind, err)
			}
			switch kind {
			case 0, 1:
				// xor 32, ch 32, maj 64.
				if got := s.NumConstraints() - n0; got != 128 {
					t.Fatalf("kind %d: %d constraints", kind, got)
				}
				if s.Name(n0) != "xor of bit 0/xor constraint" {
					t.Fatalf("name %q", s.Name(n0))
				}
			case 2:
				if s.NumConstraints() != n0 {
					t.Fatal("constants added constraints")
				}
				for _, w := range []UInt32{x, ch, maj} {
					for _, b := range w.Bits {
						if !b.IsConstant() {
							t.Fatal("constants gave a variable")
						}
					}
				}
			}
		}
	}
}

func TestAddMany(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 2; n <= 10; n++ {
		for kind := range 4 {
			s := newSys()
			m := NewMultiEq(s)
			ops := make([]UInt32, n)
			var want uint32
			for i := range ops {
				v := rng.Uint32()
				if i == 0 {
					v = ^uint32(0) // carries
				}
				ops[i] = word(s, rng, v, kind)
				want += v
			}
			n0 := s.NumConstraints()
			r := AddMany(m, ops)
			m.Close()
			if r.Val != want || bitsValue(r) != want {
				t.Fatalf("%d operands, kind %d: %08x want %08x", n, kind, bitsValue(r), want)
			}
			if kind == 2 {
				if s.NumConstraints() != n0 || !r.Bits[0].IsConstant() {
					t.Fatal("a sum of constants added constraints")
				}
				continue
			}
			if got, wantN := s.NumConstraints()-n0, SumBits(n)+1; got != wantN {
				t.Fatalf("%d operands: %d constraints, want %d", n, got, wantN)
			}
			if name := s.Name(s.NumConstraints() - 1); name != "multieq 0" {
				t.Fatalf("last constraint %q", name)
			}
			if err := s.Satisfied(); err != nil {
				t.Fatalf("%d operands, kind %d: %v", n, kind, err)
			}
			// A wrong carry bit (above bit 31) breaks the equality.
			p := s.Value(r1cs.Aux(s.NumAux() - 1))
			one := fr.One()
			p.Sub(&one, p)
			if s.Satisfied() == nil {
				t.Fatalf("%d operands: a flipped carry accepted", n)
			}
		}
	}
	if SumBits(2) != 33 || SumBits(4) != 34 || SumBits(5) != 35 || SumBits(8) != 35 || SumBits(9) != 36 {
		t.Fatal("SumBits")
	}
}

// TestMultiEqBatches: equalities share a constraint while their widths
// stay below Capacity (254) bits; one that would reach it flushes the
// batch first, in the namespace current then; Close flushes the rest.
func TestMultiEqBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := newSys()
	m := NewMultiEq(s)
	// Eight 5-operand sums (35 bits each): seven fit (245 bits), the
	// eighth flushes them.
	for i := range 8 {
		m.Push(r1cs.Nf("sum %d", i))
		ops := []UInt32{word(m, rng, rng.Uint32(), 0), word(m, rng, rng.Uint32(), 0), word(m, rng, rng.Uint32(), 3), Constant(rng.Uint32()), word(m, rng, rng.Uint32(), 1)}
		AddMany(m, ops)
		m.Pop()
	}
	var multi []string
	for j := range s.NumConstraints() {
		if strings.Contains(s.Name(j), "multieq") {
			multi = append(multi, s.Name(j))
		}
	}
	if len(multi) != 1 || multi[0] != "sum 7/multieq 0" {
		t.Fatalf("batches before Close: %v", multi)
	}
	m.Push(r1cs.N("end"))
	m.Close()
	m.Pop()
	if got := s.Name(s.NumConstraints() - 1); got != "end/multieq 1" {
		t.Fatalf("Close flushed %q", got)
	}
	n := s.NumConstraints()
	m.Close()
	if s.NumConstraints() != n {
		t.Fatal("Close with nothing pending added a constraint")
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	// The first batch packs seven equalities at offsets 0, 35, …, 210:
	// the ONE coefficient of its A is Σ 2^(35k)·(constant part of sum k).
	a, _, _ := s.Row(s.NumConstraints() - 2)
	if len(a) == 0 {
		t.Fatal("empty batch")
	}
	if a[0].V != r1cs.One {
		t.Fatalf("batch A starts with %v, want ONE", a[0].V)
	}
}

func TestAddManyWitness(t *testing.T) {
	// Without constraints the same variables and values are allocated.
	s := newSys()
	w := r1cs.NewWitness()
	var outs [2]UInt32
	for k, cs := range []r1cs.CS{s, w} {
		r := rand.New(rand.NewPCG(11, 12))
		m := NewMultiEq(cs)
		ops := []UInt32{word(m, r, r.Uint32(), 3), word(m, r, r.Uint32(), 3), word(m, r, r.Uint32(), 3)}
		outs[k] = AddMany(m, ops)
		m.Close()
	}
	_, aux := s.Values()
	if outs[0] != outs[1] || len(aux) != len(w.Aux) {
		t.Fatal("the witness differs from the system")
	}
	for i := range aux {
		if !aux[i].Equal(&w.Aux[i]) {
			t.Fatalf("aux %d differs", i)
		}
	}
}
