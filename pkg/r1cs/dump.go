package r1cs

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The dump format of the reference R1CS (../shared/oracle/README.md): a
// header line
//
//	# inputs=… aux=… constraints=… hash=…
//
// then one line per constraint in synthesis order,
//
//	c<k> A=<lc> B=<lc> C=<lc> # <namespace path of the constraint>
//
// where <lc> is "coef*I<n>,coef*A<n>,…" (zero terms dropped, inputs first,
// each by index) or "0", I0 is ONE, and a coefficient is signed decimal
// when it or its negation is below 2^64, else 0x and 64 hex digits
// (big-endian, canonical).

var two64 = new(big.Int).Lsh(big.NewInt(1), 64)

// FormatCoeff writes c as the dump format does.
func FormatCoeff(c *fr.Element) string {
	var x big.Int
	c.BigInt(&x)
	if x.Cmp(two64) < 0 {
		return x.String()
	}
	var n big.Int
	n.Sub(fr.Modulus(), &x)
	if n.Cmp(two64) < 0 {
		return "-" + n.String()
	}
	b := c.Bytes()
	return "0x" + hex.EncodeToString(b[:])
}

// ParseCoeff reads a coefficient written by FormatCoeff.
func ParseCoeff(s string) (fr.Element, error) {
	var e fr.Element
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != fr.Bytes {
			return e, fmt.Errorf("r1cs: bad hex coefficient %q", s)
		}
		if err := e.SetBytesCanonical(b); err != nil {
			return e, fmt.Errorf("r1cs: coefficient %q: %w", s, err)
		}
		return e, nil
	}
	neg := false
	if t, ok := strings.CutPrefix(s, "-"); ok {
		neg, s = true, t
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return e, fmt.Errorf("r1cs: bad coefficient %q", s)
	}
	e.SetUint64(u)
	if neg {
		e.Neg(&e)
	}
	return e, nil
}

// FormatTerms writes stored terms in the dump's <lc> form.
func FormatTerms(ts []STerm, coeffs []fr.Element) string {
	var b strings.Builder
	n := 0
	for _, t := range ts {
		c := &coeffs[t.K]
		if c.IsZero() {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(FormatCoeff(c))
		b.WriteByte('*')
		b.WriteString(t.V.String())
		n++
	}
	if n == 0 {
		return "0"
	}
	return b.String()
}

// DumpHeader is a dump's first line.
func DumpHeader(inputs, aux, constraints int, hash [32]byte) string {
	return fmt.Sprintf("# inputs=%d aux=%d constraints=%d hash=%x", inputs, aux, constraints, hash)
}

// DumpLine is constraint k's line.
func DumpLine(k int, a, b, c []STerm, coeffs []fr.Element, name string) string {
	return fmt.Sprintf("c%d A=%s B=%s C=%s # %s", k, FormatTerms(a, coeffs), FormatTerms(b, coeffs), FormatTerms(c, coeffs), name)
}

// WriteDump writes the system in the dump format (names need WithNames).
func (s *System) WriteDump(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintln(bw, DumpHeader(s.nIn, s.nAux, s.NumConstraints(), s.Hash()))
	for j := range s.NumConstraints() {
		a, b, c := s.Row(j)
		if _, err := fmt.Fprintln(bw, DumpLine(j, a, b, c, s.coeffs, s.Name(j))); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// DumpRow is one parsed dump line.
type DumpRow struct {
	Index   int
	A, B, C []Term
	Name    string
}

// ParseDumpHeader reads a dump's header line.
func ParseDumpHeader(line string) (inputs, aux, constraints int, hash string, err error) {
	_, err = fmt.Sscanf(line, "# inputs=%d aux=%d constraints=%d hash=%s", &inputs, &aux, &constraints, &hash)
	if err != nil {
		err = fmt.Errorf("r1cs: bad dump header %q: %w", line, err)
	}
	return
}

// ParseDumpLine reads one constraint line.
func ParseDumpLine(line string) (DumpRow, error) {
	var r DumpRow
	body, name, ok := strings.Cut(line, " # ")
	if !ok {
		if b, found := strings.CutSuffix(line, " #"); found {
			body = b
		} else {
			return r, fmt.Errorf("r1cs: dump line without a name: %q", line)
		}
	}
	r.Name = name
	f := strings.Fields(body)
	if len(f) != 4 || !strings.HasPrefix(f[0], "c") {
		return r, fmt.Errorf("r1cs: bad dump line %q", line)
	}
	k, err := strconv.Atoi(f[0][1:])
	if err != nil {
		return r, fmt.Errorf("r1cs: bad dump line %q", line)
	}
	r.Index = k
	for i, dst := range []*[]Term{&r.A, &r.B, &r.C} {
		s, ok := strings.CutPrefix(f[i+1], string("ABC"[i])+"=")
		if !ok {
			return r, fmt.Errorf("r1cs: bad dump line %q", line)
		}
		if *dst, err = parseLC(s); err != nil {
			return r, fmt.Errorf("r1cs: line c%d: %w", k, err)
		}
	}
	return r, nil
}

func parseLC(s string) ([]Term, error) {
	if s == "0" {
		return nil, nil
	}
	var out []Term
	for _, t := range strings.Split(s, ",") {
		c, v, ok := strings.Cut(t, "*")
		if !ok || len(v) < 2 {
			return nil, fmt.Errorf("bad term %q", t)
		}
		e, err := ParseCoeff(c)
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(v[1:])
		if err != nil {
			return nil, fmt.Errorf("bad term %q", t)
		}
		switch v[0] {
		case 'I':
			out = append(out, Term{V: Input(i), C: e})
		case 'A':
			out = append(out, Term{V: Aux(i), C: e})
		default:
			return nil, fmt.Errorf("bad term %q", t)
		}
	}
	return out, nil
}

// DumpWriter is a CS that writes every constraint as a dump line as it is
// enforced (names from its namespaces), keeping nothing: the dump of a
// circuit too large to record whole. The header (counts and hash) is the
// caller's to write first.
type DumpWriter struct {
	w         *bufio.Writer
	nIn, nAux int
	rows      int
	path      path
	err       error
	line      []byte
}

// NewDumpWriter returns a DumpWriter on w with ONE allocated.
func NewDumpWriter(w io.Writer) *DumpWriter {
	d := &DumpWriter{w: bufio.NewWriterSize(w, 1<<20)}
	d.AllocInput(N("ONE"), fr.One())
	return d
}

// Alloc implements CS.
func (d *DumpWriter) Alloc(Name, fr.Element) Variable { d.nAux++; return Aux(d.nAux - 1) }

// AllocInput implements CS.
func (d *DumpWriter) AllocInput(Name, fr.Element) Variable { d.nIn++; return Input(d.nIn - 1) }

// Enforce implements CS: it writes the constraint's line.
func (d *DumpWriter) Enforce(name Name, a, b, c *LC) {
	if d.err != nil {
		return
	}
	d.line = fmt.Appendf(d.line[:0], "c%d A=%s B=%s C=%s # %s\n", d.rows, lcOrZero(a), lcOrZero(b), lcOrZero(c), d.path.join(name))
	_, d.err = d.w.Write(d.line)
	d.rows++
}

func lcOrZero(l *LC) string {
	if l == nil {
		return "0"
	}
	return l.String()
}

// Push implements CS.
func (d *DumpWriter) Push(name Name) { d.path.push(name) }

// Pop implements CS.
func (d *DumpWriter) Pop() { d.path.pop() }

// Constraints implements CS: a DumpWriter needs them.
func (d *DumpWriter) Constraints() bool { return true }

// Flush writes what is buffered and returns the first write error.
func (d *DumpWriter) Flush() error {
	if d.err != nil {
		return d.err
	}
	return d.w.Flush()
}

// Counts are the inputs (ONE included), aux variables and constraints seen.
func (d *DumpWriter) Counts() (inputs, aux, constraints int) { return d.nIn, d.nAux, d.rows }
