package r1cs

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// oracleDir is ../shared/oracle from the repository root.
func oracleDir(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "oracle")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("reference R1CS not present (%s): %v", d, err)
	}
	return d
}

func TestLCMergesLikeBellpepper(t *testing.T) {
	var l LC
	l.Add(Aux(3)).Add(Input(2)).Sub(Aux(1)).Add(Aux(3)).Sub(Input(2)).Add(One)
	got := l.Terms()
	want := []Variable{One, Input(2), Aux(1), Aux(3)}
	if len(got) != len(want) {
		t.Fatalf("terms %v, want variables %v", got, want)
	}
	for i, v := range want {
		if got[i].V != v {
			t.Fatalf("term %d is %v, want %v", i, got[i].V, v)
		}
	}
	// Input 2 cancelled: kept with a zero coefficient (as bellpepper's),
	// left out of the dump form.
	if !got[1].C.IsZero() {
		t.Fatalf("input 2 coefficient %v, want 0", got[1].C.String())
	}
	two := Coeff(2)
	if !got[3].C.Equal(&two) {
		t.Fatalf("aux 3 coefficient %v, want 2", got[3].C.String())
	}
	if s := l.String(); s != "1*I0,-1*A1,2*A3" {
		t.Fatalf("String = %q", s)
	}
}

func TestCoeffFormat(t *testing.T) {
	var big fr.Element
	big.SetString("1234567890123456789012345678901234567890")
	for _, c := range []fr.Element{Coeff(0), Coeff(1), Coeff(-1), Coeff(-7), PowerOfTwo(63), PowerOfTwo(64), big} {
		s := FormatCoeff(&c)
		back, err := ParseCoeff(s)
		if err != nil || !back.Equal(&c) {
			t.Fatalf("%s: round trip %v %v", s, back.String(), err)
		}
	}
	p64 := PowerOfTwo(64)
	if s := FormatCoeff(&p64); !strings.HasPrefix(s, "0x") {
		t.Fatalf("2^64 written %q, want hex", s)
	}
	m := Coeff(-5)
	if s := FormatCoeff(&m); s != "-5" {
		t.Fatalf("-5 written %q", s)
	}
}

// TestHashOfOracleDumps recomputes each dump's bellpepper hash from its
// lines: the Hasher and the dump parser against the reference's own
// digests, and the lines written back must equal the file's.
func TestHashOfOracleDumps(t *testing.T) {
	dir := oracleDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.r1cs.txt.gz"))
	if len(files) == 0 {
		t.Skip("no dumps in the oracle directory")
	}
	for _, f := range files {
		if testing.Short() && strings.Contains(f, "porep") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			checkDump(t, f)
		})
	}
}

func checkDump(t *testing.T, file string) {
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	sc.Scan()
	nIn, nAux, nC, want, err := ParseDumpHeader(sc.Text())
	if err != nil {
		t.Fatal(err)
	}
	// Rebuild the rows as stored terms over one table.
	tab := NewSystem()
	x := (*Hasher)(nil)
	rows := 0
	var pending [][3][]STerm
	for sc.Scan() {
		line := sc.Text()
		r, err := ParseDumpLine(line)
		if err != nil {
			t.Fatal(err)
		}
		if r.Index != rows {
			t.Fatalf("line %d numbered c%d", rows, r.Index)
		}
		var row [3][]STerm
		for k, lc := range [3][]Term{r.A, r.B, r.C} {
			for _, term := range lc {
				row[k] = append(row[k], STerm{V: term.V, K: tab.coeffID(&term.C)})
			}
		}
		if back := DumpLine(r.Index, row[0], row[1], row[2], tab.coeffs, r.Name); back != line {
			t.Fatalf("line written back differs:\n%s\n%s", line, back)
		}
		pending = append(pending, row)
		rows++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != nC {
		t.Fatalf("%d lines, header says %d constraints", rows, nC)
	}
	x = NewHasher(nIn, nAux, nC, tab.coeffs)
	for _, r := range pending {
		x.Row(r[0], r[1], r[2])
	}
	got := x.Sum()
	if hex.EncodeToString(got[:]) != want {
		t.Fatalf("hash %x, reference %s", got, want)
	}
}

func TestSystemSatisfied(t *testing.T) {
	s := NewSystem(WithValues(), WithNames())
	x := s.Alloc(N("x"), Coeff(3))
	y := s.Alloc(N("y"), Coeff(9))
	s.Push(N("sq"))
	var a, b, c LC
	a.Add(x)
	b.Add(x)
	c.Add(y)
	s.Enforce(Nf("x times x %d", 0), &a, &b, &c)
	s.Pop()
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	s.aux[1] = Coeff(10)
	err := s.Satisfied()
	u, ok := err.(*Unsatisfied)
	if !ok || u.Index != 0 || u.Name != "sq/x times x 0" {
		t.Fatalf("got %v", err)
	}
}

func TestWitnessAt(t *testing.T) {
	aux := make([]fr.Element, 4)
	in := make([]fr.Element, 2)
	w := NewWitnessAt(in, aux, 1, 2)
	if v := w.Alloc(N("a"), Coeff(5)); v != Aux(2) {
		t.Fatalf("first aux %v", v)
	}
	if v := w.AllocInput(N("i"), Coeff(6)); v != Input(1) {
		t.Fatalf("first input %v", v)
	}
	first, vals := w.AllocAux(1)
	if first != Aux(3) || len(vals) != 1 {
		t.Fatalf("bulk %v %d", first, len(vals))
	}
	five := Coeff(5)
	if !aux[2].Equal(&five) {
		t.Fatal("value not written")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("allocating past the buffer did not panic")
		}
	}()
	w.Alloc(N("b"), Coeff(1))
}

// Terms streams each matrix's stored terms, constraint by constraint,
// zero coefficients included, and stops at f's error.
func TestSystemTerms(t *testing.T) {
	s := NewSystem()
	x := s.AllocInput(N("x"), Coeff(0))
	y := s.Alloc(N("y"), Coeff(0))
	z := s.Alloc(N("z"), Coeff(0))
	var a, b, c LC
	s.Enforce(N("0"), a.Add(y).Add(x).Sub(x), b.Add(One), c.Add(z).AddCoeff(&coeffMinusOne, y))
	s.Enforce(N("1"), a.Reset(), b.Reset().Add(z), c.Reset().Add(y))
	type term struct {
		row int
		v   Variable
		c   string
	}
	for m, want := range [3][]term{
		{{0, x, "0"}, {0, y, "1"}},
		{{0, One, "1"}, {1, z, "1"}},
		{{0, y, "-1"}, {0, z, "1"}, {1, y, "1"}},
	} {
		var got []term
		err := s.Terms(m, func(row int, v Variable, c *fr.Element) error {
			got = append(got, term{row, v, FormatCoeff(c)})
			return nil
		})
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("matrix %d: terms %v (%v), want %v", m, got, err, want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Terms(2, func(int, Variable, *fr.Element) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Terms returned %v after %d calls, want stop after 1", err, n)
	}
	if err := s.Terms(3, func(int, Variable, *fr.Element) error { return nil }); err == nil {
		t.Fatal("matrix 3 accepted")
	}
}

func TestSections(t *testing.T) {
	s := NewSystem(WithSections(2), WithNames())
	x := s.Alloc(N("x"), Coeff(1))
	var a LC
	a.Add(x)
	enforce := func(n string) { s.Enforce(N(n), &a, &a, &a) }
	enforce("top")     // 0: ""
	s.Push(N("a"))     //
	enforce("a0")      // 1: a
	s.Push(N("b"))     //
	enforce("b0")      // 2: a/b
	s.Push(N("deep"))  // below the depth: still a/b
	enforce("deep0")   // 3
	s.Pop()            //
	s.Pop()            //
	enforce("a1")      // 4: a
	s.Push(N("empty")) // no constraint in it
	s.Pop()            //
	s.Pop()            //
	s.Push(N("c"))     //
	enforce("c0")      // 5: c
	s.Pop()
	for j, want := range []string{"", "a", "a/b", "a/b", "a", "c"} {
		if got := SectionOf(s.Sections(), j); got != want {
			t.Errorf("constraint %d (%s): section %q, want %q", j, s.Name(j), got, want)
		}
	}
}

// TestDumpWriterEqualsSystem: the streaming dump writes the lines a
// recorded System writes.
func TestDumpWriterEqualsSystem(t *testing.T) {
	build := func(cs CS) {
		x := cs.Alloc(N("x"), Coeff(3))
		in := cs.AllocInput(N("in"), Coeff(9))
		cs.Push(N("ns"))
		var a, b, c LC
		a.Add(x).AddCoeff(func() *fr.Element { e := PowerOfTwo(70); return &e }(), in)
		b.Add(One).Sub(x)
		c.Add(x).Sub(x) // cancelled: written as 0
		cs.Enforce(Nf("row %d", 7), &a, &b, &c)
		cs.Pop()
	}
	s := NewSystem(WithNames())
	build(s)
	var want strings.Builder
	if err := s.WriteDump(&want); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	d := NewDumpWriter(&got)
	build(d)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(want.String(), "\n")
	if got.String() != body {
		t.Fatalf("streamed:\n%s\nrecorded:\n%s", got.String(), body)
	}
	if in, aux, rows := d.Counts(); in != 2 || aux != 1 || rows != 1 {
		t.Fatalf("counts %d %d %d", in, aux, rows)
	}
}
