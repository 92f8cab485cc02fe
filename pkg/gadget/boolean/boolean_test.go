package boolean

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func newSys() *r1cs.System { return r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames()) }

// flip replaces v's value by 1 − value.
func flip(s *r1cs.System, v r1cs.Variable) {
	p := s.Value(v)
	one := fr.One()
	p.Sub(&one, p)
}

func TestBitGates(t *testing.T) {
	gates := []struct {
		name string
		f    func(r1cs.CS, AllocatedBit, AllocatedBit) AllocatedBit
		want func(a, b bool) bool
		ann  string
	}{
		{"xor", XorBits, func(a, b bool) bool { return a != b }, "xor constraint"},
		{"and", AndBits, func(a, b bool) bool { return a && b }, "and constraint"},
		{"and not", AndNotBits, func(a, b bool) bool { return a && !b }, "and not constraint"},
		{"nor", NorBits, func(a, b bool) bool { return !a && !b }, "nor constraint"},
	}
	for _, g := range gates {
		for _, av := range []bool{false, true} {
			for _, bv := range []bool{false, true} {
				s := newSys()
				s.Push(r1cs.N("a"))
				a := AllocBit(s, av)
				s.Pop()
				s.Push(r1cs.N("b"))
				b := AllocBit(s, bv)
				s.Pop()
				c := g.f(s, a, b)
				if c.Val != g.want(av, bv) {
					t.Fatalf("%s(%v, %v) = %v", g.name, av, bv, c.Val)
				}
				if v := s.Value(c.V); !v.Equal(new(fr.Element).SetUint64(map[bool]uint64{false: 0, true: 1}[c.Val])) {
					t.Fatalf("%s: allocated value %s", g.name, v.String())
				}
				if err := s.Satisfied(); err != nil {
					t.Fatalf("%s(%v, %v): %v", g.name, av, bv, err)
				}
				if s.NumConstraints() != 3 || s.Name(2) != g.ann {
					t.Fatalf("%s: %d constraints, last %q", g.name, s.NumConstraints(), s.Name(2))
				}
				flip(s, c.V)
				var u *r1cs.Unsatisfied
				if err := s.Satisfied(); !errors.As(err, &u) || u.Name != g.ann {
					t.Fatalf("%s(%v, %v) with the result flipped: %v", g.name, av, bv, err)
				}
			}
		}
	}
}

func TestAllocBitRejectsNonBoolean(t *testing.T) {
	s := newSys()
	b := AllocBit(s, true)
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	*s.Value(b.V) = r1cs.Coeff(2)
	if err := s.Satisfied(); err == nil {
		t.Fatal("2 accepted as a bit")
	}
}

func TestAllocBitConditionally(t *testing.T) {
	for _, must := range []bool{false, true} {
		for _, v := range []bool{false, true} {
			s := newSys()
			m := AllocBit(s, must)
			AllocBitConditionally(s, v, m)
			err := s.Satisfied()
			if ok := !(must && v); (err == nil) != ok {
				t.Fatalf("must be false %v, value %v: %v", must, v, err)
			}
		}
	}
}

// kinds enumerates every Boolean form over a fresh allocation in s.
func kinds(s r1cs.CS, name string) []Boolean {
	var out []Boolean
	for _, v := range []bool{false, true} {
		out = append(out, Constant(v))
		s.Push(r1cs.N(name))
		b := AllocBit(s, v)
		s.Pop()
		out = append(out, Is(b))
		s.Push(r1cs.N(name))
		b = AllocBit(s, !v)
		s.Pop()
		out = append(out, Is(b).Not())
	}
	return out
}

func kindName(b Boolean) string {
	switch b.Kind {
	case KindIs:
		return fmt.Sprintf("Is(%v)", b.Bit.Val)
	case KindNot:
		return fmt.Sprintf("Not(%v)", b.Bit.Val)
	}
	return fmt.Sprintf("Constant(%v)", b.Bit.Val)
}

func TestNotAndLC(t *testing.T) {
	one := fr.One()
	two := r1cs.Coeff(2)
	x := Is(AllocatedBit{V: r1cs.Aux(3), Val: true})
	cases := []struct {
		b    Boolean
		want string
		val  bool
	}{
		{Constant(true), "2*I0", true},
		{Constant(false), "0", false},
		{x, "2*A3", true},
		{x.Not(), "2*I0,-2*A3", false},
		{x.Not().Not(), "2*A3", true},
		{Constant(true).Not(), "0", false},
	}
	for _, c := range cases {
		if got := c.b.LC(&two).String(); got != c.want {
			t.Fatalf("%s: LC %s, want %s", kindName(c.b), got, c.want)
		}
		if c.b.Value() != c.val {
			t.Fatalf("%s: value %v", kindName(c.b), c.b.Value())
		}
		var l r1cs.LC
		l.Add(r1cs.Aux(3))
		c.b.AddTo(&l, &one)
		c.b.SubFrom(&l, &one)
		if l.String() != "1*A3" {
			t.Fatalf("%s: add then subtract left %s", kindName(c.b), l.String())
		}
	}
}

// TestBooleanOps runs each gate over every pair of Boolean forms and
// checks the value, satisfaction, that constraints are added only where
// the reference adds them (nothing with a constant operand), and that a
// flipped allocated result is caught.
func TestBooleanOps(t *testing.T) {
	type op2 struct {
		name string
		f    func(r1cs.CS, Boolean, Boolean) Boolean
		want func(a, b bool) bool
		// constraints the reference adds for (a, b)
		cost func(a, b Boolean) int
	}
	anyConst := func(a, b Boolean) int {
		if a.IsConstant() || b.IsConstant() {
			return 0
		}
		return 1
	}
	ops := []op2{
		{"xor", Xor, func(a, b bool) bool { return a != b }, anyConst},
		{"and", And, func(a, b bool) bool { return a && b }, anyConst},
		{"or", Or, func(a, b bool) bool { return a || b }, anyConst},
	}
	for _, o := range ops {
		for i := range 6 {
			for j := range 6 {
				s := newSys()
				as := kinds(s, "a")
				bs := kinds(s, "b")
				a, b := as[i], bs[j]
				n0 := s.NumConstraints()
				r := o.f(s, a, b)
				if r.Value() != o.want(a.Value(), b.Value()) {
					t.Fatalf("%s(%s, %s) = %v", o.name, kindName(a), kindName(b), r.Value())
				}
				if got, want := s.NumConstraints()-n0, o.cost(a, b); got != want {
					t.Fatalf("%s(%s, %s): %d constraints, want %d", o.name, kindName(a), kindName(b), got, want)
				}
				if a.IsConstant() && b.IsConstant() && !r.IsConstant() {
					t.Fatalf("%s of constants is not constant", o.name)
				}
				if err := s.Satisfied(); err != nil {
					t.Fatalf("%s(%s, %s): %v", o.name, kindName(a), kindName(b), err)
				}
				if s.NumConstraints() > n0 {
					flip(s, r.Bit.V)
					if s.Satisfied() == nil {
						t.Fatalf("%s(%s, %s): flipped result accepted", o.name, kindName(a), kindName(b))
					}
				}
			}
		}
	}
}

func TestXorOperandOrder(t *testing.T) {
	// Is ⊕ Not and Not ⊕ Is both put the Is bit first: (2·is) · not = ….
	for _, swap := range []bool{false, true} {
		s := newSys()
		x := Is(AllocBit(s, true))
		y := Is(AllocBit(s, false)).Not()
		a, b := x, y
		if swap {
			a, b = y, x
		}
		r := Xor(s, a, b)
		if r.Kind != KindNot || r.Value() != false {
			t.Fatalf("swap %v: %s value %v", swap, kindName(r), r.Value())
		}
		ra, _, _ := s.Row(2)
		if len(ra) != 1 || ra[0].V != x.Bit.V {
			t.Fatalf("swap %v: A of the xor constraint is not 2·is", swap)
		}
	}
}

func TestSha256ChMaj(t *testing.T) {
	ch := func(a, b, c bool) bool { return (a && b) != (!a && c) }
	maj := func(a, b, c bool) bool { return (a && b) != (a && c) != (b && c) }
	for i := range 6 {
		for j := range 6 {
			for k := range 6 {
				for _, op := range []string{"ch", "maj"} {
					s := newSys()
					a, b, c := kinds(s, "a")[i], kinds(s, "b")[j], kinds(s, "c")[k]
					n0 := s.NumConstraints()
					var r Boolean
					var want bool
					if op == "ch" {
						r, want = Sha256Ch(s, a, b, c), ch(a.Value(), b.Value(), c.Value())
					} else {
						r, want = Sha256Maj(s, a, b, c), maj(a.Value(), b.Value(), c.Value())
					}
					desc := fmt.Sprintf("%s(%s, %s, %s)", op, kindName(a), kindName(b), kindName(c))
					if r.Value() != want {
						t.Fatalf("%s = %v", desc, r.Value())
					}
					if err := s.Satisfied(); err != nil {
						t.Fatalf("%s: %v", desc, err)
					}
					nc := 0
					for _, x := range []Boolean{a, b, c} {
						if !x.IsConstant() {
							nc++
						}
					}
					got := s.NumConstraints() - n0
					// The reference's costs: no constraint when everything is
					// constant or ch's a is false; a full gate (ch: 1, maj: 2)
					// when no operand is constant or (ch) only a is, true; else at
					// most one And, none when it folds.
					switch {
					case nc == 0 || op == "ch" && a.isConst(false):
						if got != 0 || (nc == 0 && !r.IsConstant()) {
							t.Fatalf("%s: %d constraints, want 0", desc, got)
						}
					case nc == 3 || nc == 2 && a.isConst(true) && op == "ch":
						full := 1
						if op == "maj" {
							full = 2
						}
						if got != full {
							t.Fatalf("%s: %d constraints, want %d", desc, got, full)
						}
					case nc == 1:
						if got != 0 {
							t.Fatalf("%s: %d constraints, want 0 (the And folds)", desc, got)
						}
					default:
						if got != 1 {
							t.Fatalf("%s: %d constraints, want 1", desc, got)
						}
					}
					if got > 0 {
						flip(s, r.Bit.V)
						if s.Satisfied() == nil {
							t.Fatalf("%s: flipped result accepted", desc)
						}
					}
				}
			}
		}
	}
}

func TestEnforceEqual(t *testing.T) {
	for i := range 6 {
		for j := range 6 {
			s := newSys()
			a, b := kinds(s, "a")[i], kinds(s, "b")[j]
			n0 := s.NumConstraints()
			err := EnforceEqual(s, a, b)
			eq := a.Value() == b.Value()
			if a.IsConstant() && b.IsConstant() {
				if (err == nil) != eq || s.NumConstraints() != n0 {
					t.Fatalf("constants %v %v: %v", a.Value(), b.Value(), err)
				}
				continue
			}
			if err != nil || s.NumConstraints() != n0+1 {
				t.Fatalf("%s = %s: %v, %d constraints", kindName(a), kindName(b), err, s.NumConstraints()-n0)
			}
			if (s.Satisfied() == nil) != eq {
				t.Fatalf("%s = %s: satisfied %v", kindName(a), kindName(b), s.Satisfied())
			}
		}
	}
}

func TestU64IntoBooleanVecLE(t *testing.T) {
	s := newSys()
	v := rand.Uint64()
	bits := U64IntoBooleanVecLE(s, v)
	var back uint64
	for i, b := range bits {
		if b.Value() {
			back |= 1 << i
		}
		if got := s.Value(b.Bit.V); !got.Equal(new(fr.Element).SetUint64(v >> i & 1)) {
			t.Fatalf("bit %d value %s", i, got.String())
		}
	}
	if back != v || s.NumConstraints() != 64 || s.Name(5) != "bit 5/boolean constraint" {
		t.Fatalf("%x back %x, %d constraints, %q", v, back, s.NumConstraints(), s.Name(5))
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
}

func TestFieldIntoBooleanVecLE(t *testing.T) {
	var x fr.Element
	x.MustSetRandom()
	s := newSys()
	bits := FieldIntoBooleanVecLE(s, x)
	if len(bits) != 255 || s.NumConstraints() != 255 {
		t.Fatalf("%d bits, %d constraints", len(bits), s.NumConstraints())
	}
	var back, want big.Int
	for i := len(bits) - 1; i >= 0; i-- {
		back.Lsh(&back, 1)
		if bits[i].Value() {
			back.SetBit(&back, 0, 1)
		}
	}
	x.BigInt(&want)
	if back.Cmp(&want) != 0 {
		t.Fatalf("bits give %s, want %s", back.String(), want.String())
	}
}
