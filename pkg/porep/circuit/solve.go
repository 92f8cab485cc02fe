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
// (docs/perf/circuit.md).
//
// Which wire an instruction solves does not depend on the values (only on
// which wires earlier instructions set), so newTemplateSolver works it out
// once per template and keeps a flat program: per R1C the known terms of
// each side and the one it solves (or none: a check), per hint its input
// terms and output range, every wire as a template reference that a use
// maps to its partition wire. A use then runs the program with no solved
// flags, no decompression and no structural checks. The instructions run
// in the order the template added them, which is a solving order (every
// wire an instruction reads was an input or set by an earlier
// instruction); newTemplateSolver rejects a template where that fails, and
// TestSynthesizePerTemplate compares the result with gnark's whole-system
// solve, byte for byte.
type templateSolver struct {
	*template              // its system, input count and blueprint kinds (checked by newTemplate)
	ops       []solveOp    // the instructions, in order
	terms     []solveTerm  // the R1C sides' and hint inputs' terms, by span
	hintOps   []hintOp     // per hint instruction
	coeffs    []fr.Element // the template's coefficient table
	invCoeffs []fr.Element // their inverses (0 for 0): dividing out a solved term's coefficient
	q         *big.Int
}

// solveTerm is coefficient id · wire; ref < the template's input count is
// an input (the use's in[ref]), otherwise the internal wire ref − nIn. A
// hint input's constant term is kept as its coefficient times wire 0, the
// constant one.
type solveTerm struct{ ref, cid uint32 }

// span is terms[from:to].
type span struct{ from, to uint32 }

// What an instruction does.
const (
	opCheck  = iota // an R1C with every wire known
	opSolveL        // an R1C whose unknown wire is in L (opSolveR: R, opSolveO: O)
	opSolveR
	opSolveO
	opHint
)

type solveOp struct {
	kind    uint8
	row     uint32    // the R1C's constraint offset in the template; a hint's index in hintOps
	l, r, o span      // the R1C's known terms per side
	unknown solveTerm // the term an R1C solves
}

type hintOp struct {
	id       solver.HintID
	fn       solver.Hint // from gnark's registry
	inputs   []span      // per input expression
	out, end uint32      // the internal wires it sets: template wires out … end−1
}

// newTemplateSolver compiles t into its solve program; every hint the
// template uses must be in gnark's registry, and the template's
// instruction order must solve every internal wire exactly from what is
// known before it.
func newTemplateSolver(t *template) (*templateSolver, error) {
	sys := t.sys
	ts := &templateSolver{template: t, q: fr.Modulus(),
		coeffs: sys.Coefficients, invCoeffs: make([]fr.Element, len(sys.Coefficients))}
	for i := range ts.coeffs {
		ts.invCoeffs[i].Inverse(&ts.coeffs[i])
	}
	hints := map[solver.HintID]solver.Hint{}
	for id, name := range sys.MHintsDependencies {
		f := solver.GetRegisteredHint(id)
		if f == nil {
			return nil, fmt.Errorf("circuit: template %s: hint %s is not registered", t.name, name)
		}
		hints[id] = f
	}
	nIn := uint32(t.nIn)
	src := &sys.System
	// every instruction is an op; a term takes two calldata words
	ts.ops = make([]solveOp, 0, len(src.Instructions))
	ts.terms = make([]solveTerm, 0, len(src.CallData)/2)
	solved := make([]bool, sys.NbInternalVariables)
	known := func(v uint32) bool { return v < nIn || solved[v-nIn] }
	fail := func(format string, a ...any) error {
		return fmt.Errorf("circuit: template %s: %s", t.name, fmt.Sprintf(format, a...))
	}
	var (
		r1c constraint.R1C
		hm  constraint.HintMapping
	)
	for _, pi := range src.Instructions {
		inst := pi.Unpack(src)
		switch t.kind[pi.BlueprintID] {
		case kindR1C:
			sys.Blueprints[pi.BlueprintID].(constraint.BlueprintR1C).DecompressR1C(&r1c, inst)
			op := solveOp{kind: opCheck, row: inst.ConstraintOffset}
			side := func(le constraint.LinearExpression, at uint8) (span, error) {
				sp := span{from: uint32(len(ts.terms))}
				for _, tm := range le {
					if known(tm.VID) {
						ts.terms = append(ts.terms, solveTerm{ref: tm.VID, cid: tm.CID})
						continue
					}
					if op.kind != opCheck {
						return sp, fail("constraint #%d has more than one unsolved wire", inst.ConstraintOffset)
					}
					if tm.CID == constraint.CoeffIdZero {
						return sp, fail("constraint #%d: the unsolved wire has coefficient 0", inst.ConstraintOffset)
					}
					op.kind, op.unknown = at, solveTerm{ref: tm.VID, cid: tm.CID}
				}
				sp.to = uint32(len(ts.terms))
				return sp, nil
			}
			var err error
			if op.l, err = side(r1c.L, opSolveL); err != nil {
				return nil, err
			}
			if op.r, err = side(r1c.R, opSolveR); err != nil {
				return nil, err
			}
			if op.o, err = side(r1c.O, opSolveO); err != nil {
				return nil, err
			}
			if op.kind != opCheck {
				solved[op.unknown.ref-nIn] = true
			}
			ts.ops = append(ts.ops, op)
		case kindHint:
			sys.Blueprints[pi.BlueprintID].(constraint.BlueprintHint).DecompressHint(&hm, inst)
			h := hintOp{id: hm.HintID, fn: hints[hm.HintID], out: hm.OutputRange.Start, end: hm.OutputRange.End}
			if h.fn == nil {
				return nil, fail("hint %d is not registered", h.id)
			}
			for _, le := range hm.Inputs {
				sp := span{from: uint32(len(ts.terms))}
				for _, tm := range le {
					ref := tm.VID
					if tm.IsConstant() {
						ref = 0 // the constant one: coefficient · 1
					} else if !known(ref) {
						return nil, fail("hint %d reads wire %d before it is solved", h.id, ref)
					}
					ts.terms = append(ts.terms, solveTerm{ref: ref, cid: tm.CID})
				}
				sp.to = uint32(len(ts.terms))
				h.inputs = append(h.inputs, sp)
			}
			for v := h.out; v < h.end; v++ {
				if v < nIn {
					return nil, fail("hint %d sets input wire %d", h.id, v)
				}
				solved[v-nIn] = true
			}
			ts.ops = append(ts.ops, solveOp{kind: opHint, row: uint32(len(ts.hintOps))})
			ts.hintOps = append(ts.hintOps, h)
		}
	}
	for k, ok := range solved {
		if !ok {
			return nil, fail("wire %d is never solved", int(nIn)+k)
		}
	}
	return ts, nil
}

// solveScratch is one goroutine's reusable state: the hints' big.Ints.
type solveScratch struct {
	in, out []*big.Int
}

// partitionVectors are the partition's wire values and constraint rows
// that template uses are solved into, with their value codes
// (groth16.CodeOf; nil when not kept).
type partitionVectors struct {
	wires, a, b, c                    []fr.Element
	wireCodes, aCodes, bCodes, cCodes []uint8
}

// useWires maps a use's template wires to the partition's wire values.
type useWires struct {
	vals  []fr.Element
	codes []uint8  // the values' codes, or nil
	in    []uint32 // input ref → partition wire
	nIn   uint32
	off   uint32 // internal ref + off = partition wire (modulo 2^32: wire0 − nIn)
}

func (w *useWires) index(ref uint32) uint32 {
	if ref < w.nIn {
		return w.in[ref]
	}
	return ref + w.off
}

func (w *useWires) at(ref uint32) *fr.Element { return &w.vals[w.index(ref)] }

// set writes wire ref's value and its code.
func (w *useWires) set(ref uint32, x *fr.Element) {
	i := w.index(ref)
	w.vals[i] = *x
	if w.codes != nil {
		w.codes[i] = groth16.CodeOf(x)
	}
}

// sum sets dst to Σ coeff·value over terms.
func (w *useWires) sum(dst *fr.Element, coeffs []fr.Element, terms []solveTerm) {
	dst.SetZero()
	for _, t := range terms {
		groth16.AddTerm(dst, int(t.cid), coeffs, w.at(t.ref))
	}
}

// solveUse solves use u of the template into pv (u's input wires already
// set), writing value codes where pv keeps them. It returns the first
// unsatisfied constraint (template-relative) as an error.
func (ts *templateSolver) solveUse(u *templateUse, pv *partitionVectors, sc *solveScratch) error {
	w := useWires{vals: pv.wires, codes: pv.wireCodes, in: u.in, nIn: uint32(ts.nIn), off: u.wire0 - uint32(ts.nIn)}
	a, b, c := pv.a, pv.b, pv.c
	coeffs := ts.coeffs
	var va, vb, vc, x, p fr.Element
	for i := range ts.ops {
		op := &ts.ops[i]
		if op.kind == opHint {
			if err := ts.runHint(&ts.hintOps[op.row], &w, sc); err != nil {
				return err
			}
			continue
		}
		w.sum(&va, coeffs, ts.terms[op.l.from:op.l.to])
		w.sum(&vb, coeffs, ts.terms[op.r.from:op.r.to])
		w.sum(&vc, coeffs, ts.terms[op.o.from:op.o.to])
		check := op.kind == opCheck
		switch op.kind {
		case opSolveL, opSolveR: // the side holding it times the other (known) side is O
			part, by := &va, &vb
			if op.kind == opSolveR {
				part, by = by, part
			}
			if by.IsZero() { // any value solves it; gnark's solver sets 0
				x.SetZero()
				check = true
			} else {
				x.Div(&vc, by).Sub(&x, part)
				part.Add(part, &x)
			}
		case opSolveO:
			mulValues(&x, &va, &vb).Sub(&x, &vc)
			vc.Add(&vc, &x)
		}
		if check && !mulValues(&p, &va, &vb).Equal(&vc) {
			return fmt.Errorf("constraint #%d is not satisfied: %s ⋅ %s != %s", op.row, va.String(), vb.String(), vc.String())
		}
		if op.kind != opCheck { // x = coeff·value of the solved term
			switch op.unknown.cid {
			case constraint.CoeffIdOne:
			case constraint.CoeffIdMinusOne:
				x.Neg(&x)
			default:
				x.Mul(&x, &ts.invCoeffs[op.unknown.cid])
			}
			w.set(op.unknown.ref, &x)
		}
		row := u.cons0 + int(op.row)
		a[row], b[row], c[row] = va, vb, vc
		if pv.aCodes != nil {
			pv.aCodes[row], pv.bCodes[row], pv.cCodes[row] = groth16.CodeOf(&va), groth16.CodeOf(&vb), groth16.CodeOf(&vc)
		}
	}
	return nil
}

// mulValues sets z = x·y, skipping the multiplication when a factor is 0
// or 1 (a bit, in most of the PoRep circuit's constraints).
func mulValues(z, x, y *fr.Element) *fr.Element {
	switch {
	case x.IsZero() || y.IsZero():
		return z.SetZero()
	case x.IsOne():
		return z.Set(y)
	case y.IsOne():
		return z.Set(x)
	}
	return z.Mul(x, y)
}

func (ts *templateSolver) runHint(h *hintOp, w *useWires, sc *solveScratch) error {
	nOut := int(h.end - h.out)
	sc.in = grow(sc.in, len(h.inputs))
	sc.out = grow(sc.out, nOut)
	for i, sp := range h.inputs {
		var v fr.Element
		w.sum(&v, ts.coeffs, ts.terms[sp.from:sp.to])
		v.BigInt(sc.in[i])
	}
	for _, o := range sc.out[:nOut] {
		o.SetUint64(0)
	}
	if err := h.fn(ts.q, sc.in[:len(h.inputs)], sc.out[:nOut]); err != nil {
		return fmt.Errorf("hint %d: %w", h.id, err)
	}
	for i, o := range sc.out[:nOut] {
		var v fr.Element
		switch {
		case o.Sign() == 0:
		case o.IsUint64() && o.Uint64() == 1: // bits, from the SHA-256 hints
			v.SetOne()
		default:
			v.SetBigInt(o)
		}
		w.set(h.out+uint32(i), &v)
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
