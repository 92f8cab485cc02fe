package circuit

import (
	"slices"

	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
)

// balanceB rewrites the compiled R1CS so that as few private variables as it
// can manage appear in the B matrix, and returns how many constraints it
// turned around.
func balanceB(r *cs.R1CS) int { return balanceBTurned(r).count }

// balanceBTurned is balanceB returning which constraints it turned.
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
func balanceBTurned(r *cs.R1CS) turnedSet {
	nIn := uint32(r.GetNbPublicVariables())
	nW := int(nIn) + r.GetNbSecretVariables() + r.GetNbInternalVariables()
	isR1C := make([]bool, len(r.Blueprints))
	for i, b := range r.Blueprints {
		_, isR1C[i] = b.(*constraint.BlueprintGenericR1C)
	}

	// The R1Cs to consider: those with a private wire on only one side
	// (wires on both sides are left out: they are in B either way). Their
	// sides are read from the calldata when needed rather than kept, so the
	// search costs 5 bytes per considered constraint and 4 per wire (at
	// 32 GiB, 130 M constraints, the system itself is ~15 GB).
	var sd sides
	sd.nIn = nIn
	idx := make([]uint32, 0, len(r.Instructions)) // instruction index of each considered R1C
	for i, pi := range r.Instructions {
		if !isR1C[pi.BlueprintID] {
			continue
		}
		if l, rr := sd.of(r.CallData[pi.StartCallData:]); len(l) > 0 || len(rr) > 0 {
			idx = append(idx, uint32(i))
		}
	}
	idx = slices.Clip(idx)
	turned := make([]bool, len(idx))
	// abSides returns the A and B sides of considered constraint k.
	abSides := func(k int) (a, b []uint32) {
		l, rr := sd.of(r.CallData[r.Instructions[idx[k]].StartCallData:])
		if turned[k] {
			return rr, l
		}
		return l, rr
	}

	// cnt[w] is the number of considered constraints whose B side holds w.
	cnt := make([]int32, nW)
	for k := range idx {
		_, b := abSides(k)
		for _, w := range b {
			cnt[w]++
		}
	}
	const maxRounds = 8 // converges in 2–3 rounds on every shape measured
	for range maxRounds {
		changed := 0
		for k := range idx {
			a, b := abSides(k)
			add, remove := 0, 0
			for _, w := range a {
				if cnt[w] == 0 {
					add++
				}
			}
			for _, w := range b {
				if cnt[w] == 1 {
					remove++
				}
			}
			if add >= remove {
				continue
			}
			for _, w := range b {
				cnt[w]--
			}
			for _, w := range a {
				cnt[w]++
			}
			turned[k] = !turned[k]
			changed++
		}
		if changed == 0 {
			break
		}
	}

	return swapSides(r, idx, turned)
}

// turnedSet is the set of constraints (by constraint index) whose L and R
// sides balanceB swapped.
type turnedSet struct {
	bits  []uint64
	count int
}

// newTurnedSet is the empty set of n constraints.
func newTurnedSet(n int) turnedSet { return turnedSet{bits: make([]uint64, (n+63)/64)} }

func (t *turnedSet) has(i int) bool { return t.bits[i>>6]&(1<<(i&63)) != 0 }

// swapSides swaps the L and R sides, in place in the calldata, of every
// constraint k with turned[k] (idx[k] is its instruction), and returns the
// set it swapped.
func swapSides(r *cs.R1CS, idx []uint32, turned []bool) turnedSet {
	set := newTurnedSet(r.GetNbConstraints())
	var buf []uint32
	for k, t := range turned {
		if !t {
			continue
		}
		pi := r.Instructions[idx[k]]
		c := pi.ConstraintOffset // an R1C instruction is one constraint
		set.bits[c>>6] |= 1 << (c & 63)
		set.count++
		cd := r.CallData[pi.StartCallData:]
		nl, nr := int(cd[1]), int(cd[2])
		l := cd[4 : 4+2*nl]
		rr := cd[4+2*nl : 4+2*nl+2*nr]
		buf = append(append(buf[:0], rr...), l...)
		copy(cd[4:], buf)
		cd[1], cd[2] = uint32(nr), uint32(nl)
	}
	return set
}

// sides reads the private wires of an R1C's L and R sides from its
// calldata, less the wires that appear on both sides, into buffers it
// reuses (valid until the next call).
type sides struct {
	nIn          uint32
	l, r, l2, r2 []uint32
}

func (s *sides) of(cd []uint32) (l, r []uint32) {
	nl, nr := int(cd[1]), int(cd[2])
	s.l, s.r = s.l[:0], s.r[:0]
	for k := range nl {
		if w := cd[5+2*k]; w >= s.nIn {
			s.l = append(s.l, w)
		}
	}
	for k := range nr {
		if w := cd[5+2*nl+2*k]; w >= s.nIn {
			s.r = append(s.r, w)
		}
	}
	common := false
	for _, w := range s.l {
		if slices.Contains(s.r, w) {
			common = true
			break
		}
	}
	if !common {
		return s.l, s.r
	}
	s.l2, s.r2 = s.l2[:0], s.r2[:0]
	for _, w := range s.l {
		if !slices.Contains(s.r, w) {
			s.l2 = append(s.l2, w)
		}
	}
	for _, w := range s.r {
		if !slices.Contains(s.l, w) {
			s.r2 = append(s.r2, w)
		}
	}
	return s.l2, s.r2
}
