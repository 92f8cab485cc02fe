package circuit

import (
	"slices"

	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
)

// balanceB rewrites the compiled R1CS so that as few private variables as it
// can manage appear in the B matrix, and returns how many constraints it
// turned around.
//
// A constraint L·R = O holds just as well as R·L = O, and which side is B is
// a free choice; but every variable in some B row costs a point in the
// proving key's B_G1 and B_G2 queries and a term in the B MSMs, and G2 is the
// most expensive arithmetic of a proof. gnark puts the longer side into B,
// which for this circuit leaves ~55 % of the aux variables in B; bellperson's
// PoRep circuit has 25.4 %. A local search moves each constraint's side with
// fewer variables not yet in B into B until no single turn lowers the count;
// variables on both sides of a constraint (boolean constraints) stay in B
// whatever the orientation. The result is about 26 % B density and 80 % A
// density, bellperson's profile (A is a G1-only query).
//
// The rewrite is deterministic, so setup and every prover process compile
// the same matrices. gnark's solver treats L and R alike, so solving is
// unchanged; only the solver's A and B evaluation vectors trade places for
// the turned constraints, consistently with the matrices.
func balanceB(r *cs.R1CS) int {
	nIn := uint32(r.GetNbPublicVariables())
	nW := int(nIn) + r.GetNbSecretVariables() + r.GetNbInternalVariables()

	// The R1Cs to consider, with their private wires on each side (wires on
	// both sides left out: they are in B either way).
	type side struct{ l, r []uint32 }
	var idx []int // instruction index of each considered R1C
	var sides []side
	for i, pi := range r.Instructions {
		if _, ok := r.Blueprints[pi.BlueprintID].(*constraint.BlueprintGenericR1C); !ok {
			continue
		}
		cd := r.CallData[pi.StartCallData:]
		nl, nr := int(cd[1]), int(cd[2])
		var s side
		for k := 0; k < nl; k++ {
			if w := cd[5+2*k]; w >= nIn {
				s.l = append(s.l, w)
			}
		}
		for k := 0; k < nr; k++ {
			if w := cd[5+2*nl+2*k]; w >= nIn {
				s.r = append(s.r, w)
			}
		}
		s.l, s.r = withoutCommon(s.l, s.r)
		if len(s.l) == 0 && len(s.r) == 0 {
			continue
		}
		idx = append(idx, i)
		sides = append(sides, s)
	}

	// cnt[w] is the number of considered constraints whose B side holds w.
	turned := make([]bool, len(sides))
	bSide := func(i int) []uint32 {
		if turned[i] {
			return sides[i].l
		}
		return sides[i].r
	}
	aSide := func(i int) []uint32 {
		if turned[i] {
			return sides[i].r
		}
		return sides[i].l
	}
	cnt := make([]int32, nW)
	for i := range sides {
		for _, w := range bSide(i) {
			cnt[w]++
		}
	}
	const maxRounds = 8 // converges in 2–3 rounds on every shape measured
	for range maxRounds {
		changed := 0
		for i := range sides {
			add, remove := 0, 0
			for _, w := range aSide(i) {
				if cnt[w] == 0 {
					add++
				}
			}
			for _, w := range bSide(i) {
				if cnt[w] == 1 {
					remove++
				}
			}
			if add >= remove {
				continue
			}
			for _, w := range bSide(i) {
				cnt[w]--
			}
			turned[i] = !turned[i]
			for _, w := range bSide(i) {
				cnt[w]++
			}
			changed++
		}
		if changed == 0 {
			break
		}
	}

	n := 0
	var buf []uint32
	for i, t := range turned {
		if !t {
			continue
		}
		n++
		pi := r.Instructions[idx[i]]
		cd := r.CallData[pi.StartCallData:]
		nl, nr := int(cd[1]), int(cd[2])
		l := cd[4 : 4+2*nl]
		rr := cd[4+2*nl : 4+2*nl+2*nr]
		buf = append(append(buf[:0], rr...), l...)
		copy(cd[4:], buf)
		cd[1], cd[2] = uint32(nr), uint32(nl)
	}
	return n
}

// withoutCommon removes from both lists the wires that appear in both.
func withoutCommon(a, b []uint32) ([]uint32, []uint32) {
	if !slices.ContainsFunc(a, func(w uint32) bool { return slices.Contains(b, w) }) {
		return a, b
	}
	keep := func(s, other []uint32) []uint32 {
		out := make([]uint32, 0, len(s))
		for _, w := range s {
			if !slices.Contains(other, w) {
				out = append(out, w)
			}
		}
		return out
	}
	return keep(a, b), keep(b, a)
}
