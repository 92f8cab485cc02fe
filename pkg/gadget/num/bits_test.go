package num

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
	"github.com/c2cluster/c2cluster/pkg/r1cs/r1cstest"
)

func newSys() *r1cs.System { return r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames()) }

// compareDumpPrefix compares s's constraints with the first lines of an
// oracle dump.
func compareDumpPrefix(t *testing.T, s *r1cs.System, file string) {
	t.Helper()
	sc := r1cstest.OpenDump(t, file)
	sc.Scan() // header
	for j := range s.NumConstraints() {
		if !sc.Scan() {
			t.Fatalf("%s ends before constraint %d", file, j)
		}
		a, b, c := s.Row(j)
		if got, want := r1cs.DumpLine(j, a, b, c, s.Coeffs(), s.Name(j)), sc.Text(); got != want {
			t.Fatalf("constraint %d differs\nreference: %s\nours:      %s", j, want, got)
		}
	}
}

func bitsValue(bits []boolean.Boolean) *big.Int {
	var x big.Int
	for i := len(bits) - 1; i >= 0; i-- {
		x.Lsh(&x, 1)
		if bits[i].Value() {
			x.SetBit(&x, 0, 1)
		}
	}
	return &x
}

// TestToBitsLEOracle builds the start of the PoRep circuit (replica id,
// its input, its bits) and compares it with the oracle's first lines.
func TestToBitsLEOracle(t *testing.T) {
	s := newSys()
	var id fr.Element
	id.MustSetRandom()
	s.Push(r1cs.N("stacked drgporep"))
	n := Alloc(s, id)
	s.Push(r1cs.N("replica_id_input"))
	n.Inputize(s)
	s.Pop()
	s.Push(r1cs.N("replica_id_bits"))
	bits := n.ToBitsLE(s)
	s.Pop()
	s.Pop()
	if s.NumConstraints() != 257 {
		t.Fatalf("%d constraints", s.NumConstraints())
	}
	compareDumpPrefix(t, s, "porep-base8.r1cs.txt.gz")
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	var want big.Int
	id.BigInt(&want)
	if bitsValue(bits).Cmp(&want) != 0 {
		t.Fatal("bits do not give the value back")
	}
	flip(s, bits[7].Bit.V)
	if s.Satisfied() == nil {
		t.Fatal("a flipped bit satisfies the unpacking constraint")
	}
}

func flip(s *r1cs.System, v r1cs.Variable) {
	p := s.Value(v)
	one := fr.One()
	p.Sub(&one, p)
}

func strictValues() []fr.Element {
	var vals []fr.Element
	for _, k := range []int64{0, 1, 2, -1, -2} {
		vals = append(vals, r1cs.Coeff(k))
	}
	for _, k := range []int{63, 64, 128, 200, 253, 254} {
		vals = append(vals, r1cs.PowerOfTwo(k))
	}
	for range 20 {
		var x fr.Element
		x.MustSetRandom()
		vals = append(vals, x)
	}
	return vals
}

// TestToBitsLEStrictAcceptsCanonical: every field element (edges: 0, ±1,
// r − 2, powers of two, random) decomposes into a satisfied system whose
// bits give the value back.
func TestToBitsLEStrictAcceptsCanonical(t *testing.T) {
	for _, x := range strictValues() {
		s := newSys()
		n := Alloc(s, x)
		bits := n.ToBitsLEStrict(s)
		if len(bits) != 255 {
			t.Fatalf("%d bits", len(bits))
		}
		if err := s.Satisfied(); err != nil {
			t.Fatalf("%s: %v", x.String(), err)
		}
		var want big.Int
		x.BigInt(&want)
		if bitsValue(bits).Cmp(&want) != 0 {
			t.Fatalf("%s: bits give %s", x.String(), bitsValue(bits).String())
		}
		if s.Name(s.NumConstraints()-1) != "unpacking constraint" {
			t.Fatalf("last constraint %q", s.Name(s.NumConstraints()-1))
		}
	}
}

// TestToBitsLEStrictRefusesNonCanonical: the bits of x + r (below 2^255,
// so they satisfy the unpacking constraint) are refused.
func TestToBitsLEStrictRefusesNonCanonical(t *testing.T) {
	for _, x := range []fr.Element{r1cs.Coeff(0), r1cs.Coeff(5), r1cs.PowerOfTwo(200)} {
		var xi, sum big.Int
		x.BigInt(&xi)
		sum.Add(&xi, fr.Modulus())
		var limbs [4]uint64
		for i := range limbs {
			var w big.Int
			w.Rsh(&sum, uint(64*i))
			limbs[i] = new(big.Int).And(&w, new(big.Int).SetUint64(^uint64(0))).Uint64()
		}
		s := newSys()
		n := Alloc(s, x)
		bits := toBitsLEStrict(s, n.V, limbs)
		if bitsValue(bits).Cmp(&sum) != 0 {
			t.Fatal("test setup: bits are not x + r")
		}
		err := s.Satisfied()
		var u *r1cs.Unsatisfied
		if !errors.As(err, &u) || !strings.HasSuffix(u.Name, "boolean constraint") {
			t.Fatalf("x + r for x = %s: %v", x.String(), err)
		}
	}
}

func TestToBitsLEStrictShape(t *testing.T) {
	// The shape does not depend on the value (a blank circuit has the
	// same constraints).
	s0, s1 := r1cs.NewSystem(), r1cs.NewSystem()
	var x fr.Element
	x.MustSetRandom()
	Alloc(s0, fr.Element{}).ToBitsLEStrict(s0)
	Alloc(s1, x).ToBitsLEStrict(s1)
	if s0.Hash() != s1.Hash() || s0.NumAux() != s1.NumAux() {
		t.Fatal("shape depends on the value")
	}
}

func TestConditionallyReverse(t *testing.T) {
	for _, swap := range []bool{false, true} {
		for _, kind := range []string{"is", "not", "const"} {
			s := newSys()
			var x, y fr.Element
			x.MustSetRandom()
			y.MustSetRandom()
			a, b := Alloc(s, x), Alloc(s, y)
			var cond boolean.Boolean
			switch kind {
			case "is":
				cond = boolean.Is(boolean.AllocBit(s, swap))
			case "not":
				cond = boolean.Is(boolean.AllocBit(s, !swap)).Not()
			default:
				cond = boolean.Constant(swap)
			}
			c, d := ConditionallyReverse(s, a, b, cond)
			wc, wd := x, y
			if swap {
				wc, wd = y, x
			}
			if !c.Val.Equal(&wc) || !d.Val.Equal(&wd) {
				t.Fatalf("swap %v (%s): wrong values", swap, kind)
			}
			if err := s.Satisfied(); err != nil {
				t.Fatalf("swap %v (%s): %v", swap, kind, err)
			}
			*s.Value(c.V) = wd
			if s.Satisfied() == nil {
				t.Fatalf("swap %v (%s): wrong first result accepted", swap, kind)
			}
		}
	}
}

func TestAssertNonzero(t *testing.T) {
	s := newSys()
	var x fr.Element
	x.MustSetRandom()
	if err := Alloc(s, x).AssertNonzero(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	z := newSys()
	if err := Alloc(z, fr.Element{}).AssertNonzero(z); !errors.Is(err, ErrDivisionByZero) {
		t.Fatalf("zero: %v", err)
	}
	if z.NumAux() != s.NumAux() || z.Hash() != s.Hash() {
		t.Fatal("a zero value changes the shape")
	}
	if z.Satisfied() == nil {
		t.Fatal("zero satisfies the nonzero assertion")
	}
}

func TestAddBoolWithCoeff(t *testing.T) {
	s := newSys()
	var x Num
	want := fr.Element{}
	coeff := fr.One()
	bs := []boolean.Boolean{
		boolean.Is(boolean.AllocBit(s, true)),
		boolean.Is(boolean.AllocBit(s, true)).Not(),
		boolean.Constant(true),
		boolean.Constant(false),
		boolean.Is(boolean.AllocBit(s, false)).Not(),
	}
	for _, b := range bs {
		x.AddBoolWithCoeff(b, &coeff)
		if b.Value() {
			want.Add(&want, &coeff)
		}
		coeff.Double(&coeff)
	}
	if !x.Val.Equal(&want) {
		t.Fatalf("value %s, want %s", x.Val.String(), want.String())
	}
	// The combination evaluates to the value.
	if got := x.LC.Eval(s.Value); !got.Equal(&want) {
		t.Fatalf("LC evaluates to %s, want %s", got.String(), want.String())
	}
	if got := x.LC.String(); got != "22*I0,1*A0,-2*A1,-16*A2" {
		t.Fatalf("LC %s", got)
	}
}
