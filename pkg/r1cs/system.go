package r1cs

import (
	"fmt"
	"math"
	"sort"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// STerm is a stored term: a variable and the index of its coefficient in
// the system's coefficient table.
type STerm struct {
	V Variable
	K uint32
}

// System records a synthesized circuit: its variables, and its constraints
// in a compact form (terms with coefficients from a deduplicated table),
// optionally the values of its variables (WithValues) and the full name of
// every constraint (WithNames). It is the recording side of a CS, and the
// tests' bellpepper TestConstraintSystem: Hash, WriteDump and Satisfied.
//
// A new System has input 0, ONE, allocated (value 1), as bellperson's
// prover and generator allocate it before synthesis.
type System struct {
	values bool
	names  bool

	nIn, nAux int

	coeffs   []fr.Element
	coeffIdx map[fr.Element]uint32
	terms    []STerm
	// offs[3j+k] is where constraint j's k-th combination (A, B, C) starts
	// in terms; offs has 3·constraints + 1 entries.
	offs []uint64

	inputs, aux []fr.Element
	cnames      []string
	path        path

	// sectionDepth > 0 keeps Sections: the namespaces down to that depth.
	sectionDepth int
	depth        int
	secPath      path
	sections     []Section
}

// Section is where a run of constraints in one namespace starts: the
// first constraint's index and the namespace's full name (down to the
// WithSections depth; "" for none).
type Section struct {
	Row  int
	Path string
}

// SystemOption configures a System.
type SystemOption func(*System)

// WithValues keeps every variable's value (Satisfied, Values).
func WithValues() SystemOption { return func(s *System) { s.values = true } }

// WithNames keeps every constraint's full name (WriteDump, Satisfied).
func WithNames() SystemOption { return func(s *System) { s.names = true } }

// WithSections keeps where every namespace down to depth starts
// (Sections): a cheap map of a large system, to name the region of a
// constraint without keeping every constraint's name.
func WithSections(depth int) SystemOption { return func(s *System) { s.sectionDepth = depth } }

// NewSystem returns an empty system with ONE allocated.
func NewSystem(opts ...SystemOption) *System {
	s := &System{coeffIdx: map[fr.Element]uint32{}, offs: []uint64{0}}
	for _, o := range opts {
		o(s)
	}
	s.AllocInput(N("ONE"), fr.One())
	return s
}

// Alloc implements CS.
func (s *System) Alloc(_ Name, v fr.Element) Variable {
	if s.values {
		s.aux = append(s.aux, v)
	}
	s.nAux++
	return Aux(s.nAux - 1)
}

// AllocInput implements CS.
func (s *System) AllocInput(_ Name, v fr.Element) Variable {
	if s.values {
		s.inputs = append(s.inputs, v)
	}
	s.nIn++
	return Input(s.nIn - 1)
}

// Enforce implements CS.
func (s *System) Enforce(name Name, a, b, c *LC) {
	for _, l := range [3]*LC{a, b, c} {
		if l != nil {
			for i := range l.terms {
				t := &l.terms[i]
				s.checkVar(t.V)
				s.terms = append(s.terms, STerm{V: t.V, K: s.coeffID(&t.C)})
			}
		}
		s.offs = append(s.offs, uint64(len(s.terms)))
	}
	if s.names {
		s.cnames = append(s.cnames, s.path.join(name))
	}
}

func (s *System) checkVar(v Variable) {
	if v.IsInput() && v.Index() >= s.nIn || !v.IsInput() && v.Index() >= s.nAux {
		panic(fmt.Sprintf("r1cs: constraint %d uses %v, not allocated (%d inputs, %d aux)", s.NumConstraints(), v, s.nIn, s.nAux))
	}
}

// CoeffID returns c's index in the coefficient table, adding it when new.
func (s *System) CoeffID(c *fr.Element) uint32 { return s.coeffID(c) }

func (s *System) coeffID(c *fr.Element) uint32 {
	if k, ok := s.coeffIdx[*c]; ok {
		return k
	}
	if len(s.coeffs) == math.MaxUint32 {
		panic("r1cs: coefficient table full")
	}
	k := uint32(len(s.coeffs))
	s.coeffs = append(s.coeffs, *c)
	s.coeffIdx[*c] = k
	return k
}

// Push implements CS.
func (s *System) Push(name Name) {
	if s.names {
		s.path.push(name)
	}
	if s.sectionDepth > 0 {
		s.depth++
		if s.depth <= s.sectionDepth {
			s.secPath.push(name)
			s.section()
		}
	}
}

// Pop implements CS.
func (s *System) Pop() {
	if s.names {
		s.path.pop()
	}
	if s.sectionDepth > 0 {
		if s.depth <= s.sectionDepth {
			s.secPath.pop()
			s.section()
		}
		s.depth--
	}
}

// section notes that the constraints from here on lie in secPath.
func (s *System) section() {
	sec := Section{Row: s.NumConstraints(), Path: s.secPath.String()}
	if n := len(s.sections); n > 0 && s.sections[n-1].Row == sec.Row {
		s.sections[n-1] = sec // nothing was enforced in the previous one
		return
	}
	s.sections = append(s.sections, sec)
}

// Sections returns the runs of constraints by namespace (down to the
// WithSections depth), in order (nil without WithSections).
func (s *System) Sections() []Section { return s.sections }

// SectionOf returns the namespace constraint j lies in, down to the
// sections' depth ("" when none).
func SectionOf(sections []Section, j int) string {
	i := sort.Search(len(sections), func(i int) bool { return sections[i].Row > j })
	if i == 0 {
		return ""
	}
	return sections[i-1].Path
}

// Constraints implements CS: a System records them.
func (s *System) Constraints() bool { return true }

// NumInputs is the number of inputs, ONE included.
func (s *System) NumInputs() int { return s.nIn }

// NumAux is the number of aux variables.
func (s *System) NumAux() int { return s.nAux }

// NumConstraints is the number of constraints (the circuit's own: the
// Groth16 input rows are not part of a System).
func (s *System) NumConstraints() int { return (len(s.offs) - 1) / 3 }

// Coeffs is the coefficient table the stored terms index (read only).
func (s *System) Coeffs() []fr.Element { return s.coeffs }

// Row returns constraint j's A, B and C terms (read only).
func (s *System) Row(j int) (a, b, c []STerm) {
	o := s.offs[3*j : 3*j+4]
	return s.terms[o[0]:o[1]], s.terms[o[1]:o[2]], s.terms[o[2]:o[3]]
}

// Terms calls f for every term of matrix m (0: A, 1: B, 2: C), constraint
// by constraint in order, as stored: each combination's terms in LC order,
// zero coefficients included. c points into the coefficient table (read
// only). Terms stops at the first error f returns and returns it. Calls
// for different matrices may run concurrently (it is the streaming form
// pkg/groth16's setup reads, groth16.R1CS).
func (s *System) Terms(m int, f func(row int, v Variable, c *fr.Element) error) error {
	if m < 0 || m > 2 {
		return fmt.Errorf("r1cs: matrix %d, want 0 (A), 1 (B) or 2 (C)", m)
	}
	for j := range s.NumConstraints() {
		o := s.offs[3*j+m : 3*j+m+2]
		for _, t := range s.terms[o[0]:o[1]] {
			if err := f(j, t.V, &s.coeffs[t.K]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Name returns constraint j's full name ("" without WithNames).
func (s *System) Name(j int) string {
	if !s.names {
		return ""
	}
	return s.cnames[j]
}

// NumTerms is the number of stored terms over all constraints.
func (s *System) NumTerms() int { return len(s.terms) }

// Values returns the inputs' and the aux variables' values (nil without
// WithValues).
func (s *System) Values() (inputs, aux []fr.Element) { return s.inputs, s.aux }

// Value returns v's value (WithValues).
func (s *System) Value(v Variable) *fr.Element {
	if v.IsInput() {
		return &s.inputs[v.Index()]
	}
	return &s.aux[v.Index()]
}

// Eval is the value of stored terms (WithValues).
func (s *System) Eval(ts []STerm) fr.Element {
	var acc, t fr.Element
	for _, x := range ts {
		t.Mul(&s.coeffs[x.K], s.Value(x.V))
		acc.Add(&acc, &t)
	}
	return acc
}

// Unsatisfied is the first constraint a System's values do not satisfy.
type Unsatisfied struct {
	Index int
	Name  string // "" without WithNames
}

func (u *Unsatisfied) Error() string {
	if u.Name == "" {
		return fmt.Sprintf("r1cs: constraint %d is not satisfied", u.Index)
	}
	return fmt.Sprintf("r1cs: constraint %d (%s) is not satisfied", u.Index, u.Name)
}

// Satisfied checks every constraint against the values (WithValues) and
// returns nil or the first failing one as *Unsatisfied.
func (s *System) Satisfied() error {
	if !s.values {
		return fmt.Errorf("r1cs: Satisfied needs a System made WithValues")
	}
	for j := range s.NumConstraints() {
		a, b, c := s.Row(j)
		va, vb, vc := s.Eval(a), s.Eval(b), s.Eval(c)
		va.Mul(&va, &vb)
		if !va.Equal(&vc) {
			return &Unsatisfied{Index: j, Name: s.Name(j)}
		}
	}
	return nil
}
