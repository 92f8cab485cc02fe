package circuit

import (
	"bytes"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// handBuilt is a template system built by hand: wire 0 the constant one
// (public), wire 1 a secret x, then nInternal internal wires; add adds its
// R1Cs.
func handBuilt(t *testing.T, nInternal int, add func(r1c func(l, r, o []constraint.Term))) *template {
	t.Helper()
	sys := cs.NewR1CS(0)
	sys.AddPublicVariable("one")
	sys.AddSecretVariable("x")
	for range nInternal {
		sys.AddInternalVariable()
	}
	bp := sys.AddBlueprint(&constraint.BlueprintGenericR1C{})
	add(func(l, r, o []constraint.Term) { sys.AddR1C(constraint.R1C{L: l, R: r, O: o}, bp) })
	tpl, err := newTemplate("hand-built", sys, cs.NewR1CS(0))
	require.NoError(t, err)
	return tpl
}

func term(cid, wire int) constraint.Term { return constraint.Term{CID: uint32(cid), VID: uint32(wire)} }

// TestTemplateSolverProgram: which wire each R1C solves is found when the
// template is compiled (L, R or O; a check when none), a template that its
// own order cannot solve is refused then, naming the problem, and a use
// solves into the partition's wires and rows, checking what it cannot
// solve.
func TestTemplateSolverProgram(t *testing.T) {
	const one, x = 0, 1
	one1 := constraint.CoeffIdOne
	two := constraint.CoeffIdTwo
	// v2 = x·x (solved from O); 2·v3 · x = v2 (v3 from L, dividing out its
	// coefficient 2); 2·v3 · v4 = x (v4 from R); v2 · 1 = x + x + x (a
	// check: true for x = 3 only).
	ts, err := newTemplateSolver(handBuilt(t, 3, func(r1c func(l, r, o []constraint.Term)) {
		r1c([]constraint.Term{term(one1, x)}, []constraint.Term{term(one1, x)}, []constraint.Term{term(one1, 2)})
		r1c([]constraint.Term{term(two, 3)}, []constraint.Term{term(one1, x)}, []constraint.Term{term(one1, 2)})
		r1c([]constraint.Term{term(two, 3)}, []constraint.Term{term(one1, 4)}, []constraint.Term{term(one1, x)})
		r1c([]constraint.Term{term(one1, 2)}, []constraint.Term{term(one1, one)}, []constraint.Term{term(one1, x), term(one1, x), term(one1, x)})
	}))
	require.NoError(t, err)
	kinds := []uint8{}
	for _, op := range ts.ops {
		kinds = append(kinds, op.kind)
	}
	require.Equal(t, []uint8{opSolveO, opSolveL, opSolveR, opCheck}, kinds)

	const unwritten = 0xff // a code no writer uses
	var pv partitionVectors
	solve := func(xv uint64) ([]fr.Element, [3][]fr.Element, error) {
		// the use's inputs at partition wires 7 (one) and 3 (x), its
		// internal wires from 10, its rows from 2
		pv = partitionVectors{wires: make([]fr.Element, 13), wireCodes: bytes.Repeat([]byte{unwritten}, 13)}
		pv.wires[7].SetOne()
		pv.wires[3].SetUint64(xv)
		var rows [3][]fr.Element
		var codes [3][]uint8
		for i := range rows {
			rows[i] = make([]fr.Element, 7)
			codes[i] = bytes.Repeat([]byte{unwritten}, 7)
		}
		pv.a, pv.b, pv.c = rows[0], rows[1], rows[2]
		pv.aCodes, pv.bCodes, pv.cCodes = codes[0], codes[1], codes[2]
		u := &templateUse{in: []uint32{7, 3}, wire0: 10, cons0: 2}
		err := ts.solveUse(u, &pv, &solveScratch{})
		return pv.wires, rows, err
	}
	wires, rows, err := solve(3)
	require.NoError(t, err)
	// every value the use wrote has its code; nothing else was coded
	for i, c := range pv.wireCodes {
		if i >= 10 {
			require.Equal(t, groth16.CodeOf(&wires[i]), c, "wire %d", i)
		} else {
			require.EqualValues(t, unwritten, c, "wire %d is not the use's", i)
		}
	}
	for side, codes := range [][]uint8{pv.aCodes, pv.bCodes, pv.cCodes} {
		for i, c := range codes {
			if i >= 2 && i < 6 {
				require.Equal(t, groth16.CodeOf(&rows[side][i]), c, "side %d row %d", side, i)
			} else {
				require.EqualValues(t, unwritten, c, "side %d row %d is not the use's", side, i)
			}
		}
	}
	var want2, want3, want4, six, three fr.Element
	want2.SetUint64(9)
	three.SetUint64(3)
	six.SetUint64(6)
	want3.Div(&want2, &six)                                  // 2·v3·3 = 9
	want4.Double(&want3).Inverse(&want4).Mul(&want4, &three) // v4·2·v3 = 3
	require.True(t, wires[10].Equal(&want2), "v2 = x²")
	require.True(t, wires[11].Equal(&want3), "v3 from L")
	require.True(t, wires[12].Equal(&want4), "v4 from R")
	for k := range 4 { // every row holds its evaluated sides, and L·R = O
		var p fr.Element
		p.Mul(&rows[0][2+k], &rows[1][2+k])
		require.True(t, p.Equal(&rows[2][2+k]), "row %d", k)
	}
	require.True(t, rows[0][0].IsZero() && rows[0][1].IsZero() && rows[0][6].IsZero(), "rows outside the use untouched")

	_, _, err = solve(4) // v2 = 16 ≠ 3·4: the check fails
	require.ErrorContains(t, err, "constraint #3 is not satisfied")

	for name, c := range map[string]struct {
		add  func(r1c func(l, r, o []constraint.Term))
		want string
	}{
		"two unknowns": {func(r1c func(l, r, o []constraint.Term)) {
			r1c([]constraint.Term{term(one1, 2)}, []constraint.Term{term(one1, one)}, []constraint.Term{term(one1, 3)})
		}, "constraint #0 has more than one unsolved wire"},
		"never solved": {func(r1c func(l, r, o []constraint.Term)) {
			r1c([]constraint.Term{term(one1, x)}, []constraint.Term{term(one1, one)}, []constraint.Term{term(one1, 2)})
		}, "wire 3 is never solved"},
		"zero coefficient": {func(r1c func(l, r, o []constraint.Term)) {
			r1c([]constraint.Term{term(one1, x)}, []constraint.Term{term(one1, one)}, []constraint.Term{term(constraint.CoeffIdZero, 2)})
		}, "constraint #0: the unsolved wire has coefficient 0"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newTemplateSolver(handBuilt(t, 2, c.add))
			require.ErrorContains(t, err, "template hand-built: "+c.want)
		})
	}
}
