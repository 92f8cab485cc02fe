package circuit

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/constraint/solver"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// templateSolver solves one use of a template straight into the
// partition's vectors: the same instruction-by-instruction solve as gnark's
// solver (an R1C has at most one unsolved wire, found and set from the
// other two sides; a hint runs on its evaluated inputs and sets its
// outputs; an R1C with nothing to solve is checked), but each wire is read
// and written at the partition wire its use was renamed to, and each
// constraint's A, B, C values land directly in the partition's rows.
//
// gnark's Solve, per challenge at 32 GiB, allocates and zeroes ~1 GB (the
// wire values, their solved flags, and A, B, C with power-of-two capacity)
// that Synthesize then copied into the partition's buffers: on a 2KiB
// partition the copies alone were a third of the solve's CPU time
// (docs/perf/circuit.md). Here nothing is allocated per use but a bitmap of
// the use's own wires, reused. The instructions run in the order the
// template added them, which is a solving order (every wire an
// instruction reads was an input or set by an earlier instruction);
// TestSynthesizePerTemplate compares the result with gnark's whole-system
// solve, byte for byte.
type templateSolver struct {
	*template                            // its system, input count and blueprint kinds (checked by newTemplate)
	r1cBP     []constraint.BlueprintR1C  // per blueprint of kind kindR1C
	hintBP    []constraint.BlueprintHint // per blueprint of kind kindHint
	hints     map[solver.HintID]solver.Hint
	q         *big.Int
}

// newTemplateSolver prepares t's solver; every hint the template uses must
// be in gnark's registry.
func newTemplateSolver(t *template) (*templateSolver, error) {
	ts := &templateSolver{template: t, hints: map[solver.HintID]solver.Hint{}, q: fr.Modulus(),
		r1cBP: make([]constraint.BlueprintR1C, len(t.kind)), hintBP: make([]constraint.BlueprintHint, len(t.kind))}
	for i, b := range t.sys.Blueprints {
		switch t.kind[i] {
		case kindR1C:
			ts.r1cBP[i] = b.(constraint.BlueprintR1C)
		case kindHint:
			ts.hintBP[i] = b.(constraint.BlueprintHint)
		}
	}
	for id, name := range t.sys.MHintsDependencies {
		f := solver.GetRegisteredHint(id)
		if f == nil {
			return nil, fmt.Errorf("circuit: template %s: hint %s is not registered", t.name, name)
		}
		ts.hints[id] = f
	}
	return ts, nil
}

// solveScratch is one goroutine's reusable state.
type solveScratch struct {
	state   useState
	solved  []uint64 // the use's internal wires set so far
	r1c     constraint.R1C
	hint    constraint.HintMapping
	in, out []*big.Int
}

// useState is one use's solve in progress.
type useState struct {
	ts            *templateSolver
	u             *templateUse
	wires         []fr.Element
	a, b, c       []fr.Element
	sc            *solveScratch
	coeffs        []fr.Element
	nIn           uint32
	solved        []uint64
	loc           uint8 // 1, 2, 3: the R1C's unsolved wire is in L, R, O
	unknown       constraint.Term
	va, vb, vc, x fr.Element
}

// solveUse solves use u of the template: wires holds the partition's wire
// values (u's inputs already set), a, b, c its constraint rows. It returns
// the first unsatisfied constraint (template-relative) as an error.
func (ts *templateSolver) solveUse(u *templateUse, wires, a, b, c []fr.Element, sc *solveScratch) error {
	nInt := ts.sys.NbInternalVariables
	words := (nInt + 63) / 64
	if cap(sc.solved) < words {
		sc.solved = make([]uint64, words)
	}
	sc.solved = sc.solved[:words]
	clear(sc.solved)
	st := &sc.state
	*st = useState{ts: ts, u: u, wires: wires, a: a, b: b, c: c, sc: sc, coeffs: ts.sys.Coefficients,
		nIn: uint32(ts.nIn), solved: sc.solved}
	src := &ts.sys.System
	for _, pi := range src.Instructions {
		inst := pi.Unpack(src)
		switch ts.kind[pi.BlueprintID] {
		case kindR1C:
			ts.r1cBP[pi.BlueprintID].DecompressR1C(&sc.r1c, inst)
			if err := st.solveR1C(&sc.r1c, u.cons0+int(inst.ConstraintOffset)); err != nil {
				return fmt.Errorf("constraint #%d is not satisfied: %w", inst.ConstraintOffset, err)
			}
		case kindHint:
			ts.hintBP[pi.BlueprintID].DecompressHint(&sc.hint, inst)
			if err := st.runHint(&sc.hint); err != nil {
				return err
			}
		}
	}
	for k := range uint32(nInt) {
		if sc.solved[k>>6]&(1<<(k&63)) == 0 {
			return fmt.Errorf("wire %d was not solved", uint32(ts.nIn)+k)
		}
	}
	return nil
}

// wire returns the partition wire of template wire v and whether its value
// is known.
func (s *useState) wire(v uint32) (uint32, bool) {
	if v < s.nIn {
		return s.u.in[v], true
	}
	k := v - s.nIn
	return s.u.wire0 + k, s.solved[k>>6]&(1<<(k&63)) != 0
}

// set gives template wire v (internal) its value.
func (s *useState) set(v uint32, x *fr.Element) {
	k := v - s.nIn
	s.solved[k>>6] |= 1 << (k & 63)
	s.wires[s.u.wire0+k] = *x
}

// side evaluates one side of an R1C into v, noting its unsolved term.
func (s *useState) side(le constraint.LinearExpression, v *fr.Element, at uint8) error {
	for _, t := range le {
		w, known := s.wire(t.VID)
		if known {
			groth16.AddTerm(v, int(t.CID), s.coeffs, &s.wires[w])
			continue
		}
		if s.loc != 0 {
			return fmt.Errorf("more than one unsolved wire")
		}
		s.unknown, s.loc = t, at
	}
	return nil
}

func (s *useState) check() error {
	var p fr.Element
	if !p.Mul(&s.va, &s.vb).Equal(&s.vc) {
		return fmt.Errorf("%s ⋅ %s != %s", s.va.String(), s.vb.String(), s.vc.String())
	}
	return nil
}

func (s *useState) solveR1C(r *constraint.R1C, row int) error {
	s.va.SetZero()
	s.vb.SetZero()
	s.vc.SetZero()
	s.loc = 0
	if err := s.side(r.L, &s.va, 1); err != nil {
		return err
	}
	if err := s.side(r.R, &s.vb, 2); err != nil {
		return err
	}
	if err := s.side(r.O, &s.vc, 3); err != nil {
		return err
	}
	if s.loc == 0 {
		if err := s.check(); err != nil {
			return err
		}
	} else {
		// x = coeff·value of the unsolved term, from the other two sides
		x := &s.x
		x.SetZero()
		switch s.loc {
		case 1, 2: // the side holding it times the other (known) side is O
			part, by := &s.va, &s.vb
			if s.loc == 2 {
				part, by = by, part
			}
			if !by.IsZero() {
				x.Div(&s.vc, by).Sub(x, part)
				part.Add(part, x)
			} else if err := s.check(); err != nil {
				return err
			}
		case 3:
			x.Mul(&s.va, &s.vb).Sub(x, &s.vc)
			s.vc.Add(&s.vc, x)
		}
		switch s.unknown.CID {
		case constraint.CoeffIdOne:
		case constraint.CoeffIdMinusOne:
			x.Neg(x)
		case constraint.CoeffIdZero:
			return fmt.Errorf("the unsolved wire has coefficient 0")
		default:
			x.Div(x, &s.coeffs[s.unknown.CID])
		}
		s.set(s.unknown.VID, x)
	}
	s.a[row], s.b[row], s.c[row] = s.va, s.vb, s.vc
	return nil
}

func (s *useState) runHint(h *constraint.HintMapping) error {
	f := s.ts.hints[h.HintID]
	if f == nil {
		return fmt.Errorf("hint %d is not registered", h.HintID)
	}
	sc := s.sc
	nOut := int(h.OutputRange.End - h.OutputRange.Start)
	sc.in = grow(sc.in, len(h.Inputs))
	sc.out = grow(sc.out, nOut)
	for i, le := range h.Inputs {
		var v fr.Element
		for _, t := range le {
			if t.IsConstant() {
				v.Add(&v, &s.coeffs[t.CID])
				continue
			}
			w, known := s.wire(t.VID)
			if !known {
				return fmt.Errorf("hint %d reads wire %d before it is solved", h.HintID, t.VID)
			}
			groth16.AddTerm(&v, int(t.CID), s.coeffs, &s.wires[w])
		}
		v.BigInt(sc.in[i])
	}
	for _, o := range sc.out[:nOut] {
		o.SetUint64(0)
	}
	if err := f(s.ts.q, sc.in[:len(h.Inputs)], sc.out[:nOut]); err != nil {
		return fmt.Errorf("hint %d: %w", h.HintID, err)
	}
	for i, o := range sc.out[:nOut] {
		var v fr.Element
		v.SetBigInt(o)
		s.set(h.OutputRange.Start+uint32(i), &v)
	}
	return nil
}

// grow returns s with at least n non-nil big.Ints.
func grow(s []*big.Int, n int) []*big.Int {
	for len(s) < n {
		s = append(s, new(big.Int))
	}
	return s
}
