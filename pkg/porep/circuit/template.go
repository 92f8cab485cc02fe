package circuit

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/frontend/schema"
)

// Compile does not run gnark's frontend on the whole partition circuit (at
// 32 GiB that is 130 M constraints, ~15 minutes and ~50 GB of heap). A
// partition is a head (what Define does before the challenge loop: the
// replica_id bits and the comm_r check) followed by Challenges copies of one
// gadget that differ only in the public inputs they read and the secret wires
// they own. So Compile compiles the head and ONE challenge with gnark's
// frontend, as two small templates, and assembles the partition's R1CS by
// replaying their instructions with the wire ids renamed: the head once, the
// challenge once per challenge.
//
// The renaming is monotone (it keeps the order of wire ids) and the replay
// goes through gnark's System.AddInstruction in the order the frontend would
// have added the same instructions, with internal wires allocated at the same
// points. The assembled system is therefore the one the frontend compiles,
// instruction for instruction: same calldata, coefficient table, wire
// offsets, solver levels and wire names (TestAssembledEqualsFrontend checks
// it field by field against compileFrontend).

// headCircuit is the head template: the partition's public inputs and its
// two secret roots (so its input wires are the partition's own), with
// defineHead as Define.
type headCircuit struct {
	Public    []frontend.Variable `gnark:",public"`
	CommC     frontend.Variable
	CommRLast frontend.Variable

	// replica is set by Define: what each SHA-order replica bit is.
	replica []replicaBit `gnark:"-"`
}

// replicaBit is one SHA-order bit of replica_id as the head produces it:
// a constant (the top bit of the 32-byte encoding), or a wire. In the head
// template wire is the head's wire id; in the challenge template it is the
// index into challengeCircuit.Replica.
type replicaBit struct {
	constant frontend.Variable // non-nil: the bit is this constant
	wire     uint32
}

// Define implements frontend.Circuit.
func (h *headCircuit) Define(api frontend.API) error {
	replica := defineHead(api, h.Public, h.CommC, h.CommRLast)
	h.replica = make([]replicaBit, len(replica))
	cmp := api.Compiler()
	for k, b := range replica {
		if _, ok := cmp.ConstantValue(b); ok {
			h.replica[k].constant = b
			continue
		}
		// The full circuit's challenges see these bits marked boolean (by
		// the decomposition's booleanity constraints), so they add no
		// constraint of their own for them; the challenge template marks
		// its replica inputs likewise. Refuse a head for which that is not
		// true.
		if !cmp.IsBoolean(b) {
			return fmt.Errorf("replica bit %d is not marked boolean by the head", k)
		}
		le, ok := cmp.ToCanonicalVariable(b).(constraint.LinearExpression)
		if !ok || len(le) != 1 || le[0].CoeffID() != constraint.CoeffIdOne || le[0].IsConstant() {
			return fmt.Errorf("replica bit %d is %v, want a single wire", k, le)
		}
		h.replica[k].wire = le[0].VID
	}
	return nil
}

// challengeCircuit is the challenge template: challenge 0 of a partition
// whose inputs are everything a challenge reads from outside it, laid out so
// that their order matches the order of the wires they stand for in the
// partition (public inputs, then comm_c and comm_r_last, then the
// challenge's own witness, then the head's replica bits, which are internal
// wires of the partition).
type challengeCircuit struct {
	// Public are the partition's first three inputs (replica_id, comm_d,
	// comm_r) and one challenge's block: the public inputs of a partition of
	// one challenge.
	Public    []frontend.Variable `gnark:",public"`
	CommC     frontend.Variable
	CommRLast frontend.Variable
	Challenge challengeWitness
	// Replica holds the head's replica bit wires, in increasing wire order.
	Replica []frontend.Variable

	params  Params       `gnark:"-"`
	replica []replicaBit `gnark:"-"` // SHA-order bit → constant or index into Replica
}

// Define implements frontend.Circuit.
func (c *challengeCircuit) Define(api frontend.API) error {
	for _, v := range c.Replica {
		api.Compiler().MarkBoolean(v)
	}
	bits := make([]frontend.Variable, len(c.replica))
	for k, b := range c.replica {
		if b.constant != nil {
			bits[k] = b.constant
		} else {
			bits[k] = c.Replica[b.wire]
		}
	}
	defineChallenge(api, c.params, 0, c.Public, c.CommC, c.CommRLast, &c.Challenge, bits)
	return nil
}

// compileR1CS runs gnark's frontend on a circuit.
func compileR1CS(name string, c frontend.Circuit) (*cs.R1CS, error) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, c, frontend.IgnoreUnconstrainedInputs())
	if err != nil {
		return nil, fmt.Errorf("circuit: compile %s: %w", name, err)
	}
	r, ok := ccs.(*cs.R1CS)
	if !ok {
		return nil, fmt.Errorf("circuit: compile %s: got %T, want a BLS12-381 R1CS", name, ccs)
	}
	return r, nil
}

// compileFrontend compiles the whole partition circuit of p with gnark's
// frontend: the reference Compile's assembly is tested against.
func compileFrontend(p Params) (*cs.R1CS, error) {
	return compileR1CS(fmt.Sprintf("%q", p.Name), newPartitionCircuit(p))
}

// template is a compiled template ready for replay into a partition system.
type template struct {
	name string
	sys  *cs.R1CS
	nIn  int      // its input wires: public and secret
	kind []uint8  // per blueprint: kindR1C or kindHint
	cid  []uint32 // its coefficient ids → the partition's
}

const (
	kindR1C = iota
	kindHint
)

// newTemplate checks that a compiled template holds only what the replay
// handles (generic R1Cs and hints; no commitments, GKR, logs or debug info)
// and interns its coefficients into dst.
func newTemplate(name string, sys *cs.R1CS, dst *cs.R1CS) (*template, error) {
	t := &template{name: name, sys: sys, nIn: sys.GetNbPublicVariables() + sys.GetNbSecretVariables()}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("circuit: template %s: %s: assembly does not handle it", name, fmt.Sprintf(format, a...))
	}
	for i, b := range sys.Blueprints {
		switch b.(type) {
		case *constraint.BlueprintGenericR1C:
			t.kind = append(t.kind, kindR1C)
		case *constraint.BlueprintGenericHint:
			t.kind = append(t.kind, kindHint)
		default:
			return nil, bad("blueprint %d is %T", i, b)
		}
	}
	switch {
	case len(sys.CommitmentInfo.CommitmentIndexes()) > 0:
		return nil, bad("it has %d commitments", len(sys.CommitmentInfo.CommitmentIndexes()))
	case sys.GkrInfo.Is():
		return nil, bad("it has a GKR sub-circuit")
	case len(sys.Logs) > 0:
		return nil, bad("it has %d Println logs", len(sys.Logs))
	case len(sys.DebugInfo) > 0 || len(sys.MDebug) > 0:
		return nil, bad("it has debug info (built with the debug tag?)")
	}
	for id, hname := range sys.MHintsDependencies {
		if have, ok := dst.MHintsDependencies[id]; ok && have != hname {
			return nil, fmt.Errorf("circuit: template %s: hint %d is %s here and %s in the partition", name, id, hname, have)
		}
		dst.MHintsDependencies[id] = hname
	}
	// In table order, so that the partition's table is the frontend's: the
	// head's coefficients, then those a challenge adds, in order of first use.
	t.cid = make([]uint32, len(sys.Coefficients))
	for k := range sys.Coefficients {
		t.cid[k] = dst.AddCoeff(sys.GetCoefficient(k))
	}
	return t, nil
}

// replayer appends templates to a partition system.
type replayer struct {
	dst         *cs.R1CS
	bR1C, bHint constraint.BlueprintID
	r1cBP       constraint.BlueprintR1C
	hintBP      constraint.BlueprintHint

	r1c  constraint.R1C
	hint constraint.HintMapping
	buf  []uint32
}

func newReplayer(dst *cs.R1CS) (*replayer, error) {
	rp := &replayer{dst: dst}
	found := 0
	for i, b := range dst.Blueprints {
		switch b := b.(type) {
		case *constraint.BlueprintGenericR1C:
			rp.bR1C, rp.r1cBP = constraint.BlueprintID(i), b
			found |= 1
		case *constraint.BlueprintGenericHint:
			rp.bHint, rp.hintBP = constraint.BlueprintID(i), b
			found |= 2
		}
	}
	if found != 3 {
		return nil, fmt.Errorf("circuit: assembly: the partition system lacks the generic R1C or hint blueprint")
	}
	return rp, nil
}

// templateUse is where one replay of a template lies in the partition
// system: what Synthesize needs to solve the template on its own in the
// partition's vectors (solve.go).
type templateUse struct {
	in    []uint32 // template input wire k → partition wire (in[0] is the constant one)
	wire0 uint32   // partition id of the template's first internal wire
	cons0 int      // partition index of the template's first constraint
}

// replayed is what assemble keeps of its templates for Synthesize: each
// template's solver (over its own compiled system) and its uses, in replay
// order.
type replayed struct {
	head, chal *templateSolver
	headUse    templateUse
	chalUses   []templateUse // one per challenge
}

// replay appends one use of t: its input wire k becomes in[k], its internal
// wire k the partition's next internal wire (allocated contiguously, at the
// points where the template allocated them), its coefficients are t.cid's.
// It returns where the use lies (with a copy of in).
func (rp *replayer) replay(t *template, in []uint32) (templateUse, error) {
	dst := rp.dst
	if len(in) != t.nIn {
		return templateUse{}, fmt.Errorf("circuit: assembly: template %s has %d input wires, %d mapped", t.name, t.nIn, len(in))
	}
	nIn := uint32(t.nIn)
	base := uint32(dst.GetNbPublicVariables() + dst.GetNbSecretVariables() + dst.GetNbInternalVariables())
	allocated := uint32(0) // internal wires of this use so far
	var bad error
	wire := func(v uint32) uint32 {
		switch {
		case v < nIn:
			return in[v]
		case v == math.MaxUint32: // a constant (hint inputs)
			return v
		case v-nIn >= allocated:
			if bad == nil {
				bad = fmt.Errorf("circuit: assembly: template %s refers to wire %d before it exists", t.name, v)
			}
			return v
		}
		return base + (v - nIn)
	}
	terms := func(le constraint.LinearExpression) {
		for i := range le {
			le[i].CID = t.cid[le[i].CID]
			le[i].VID = wire(le[i].VID)
		}
	}
	nc := dst.GetNbConstraints()
	use := templateUse{in: slices.Clone(in), wire0: base, cons0: nc}
	src := &t.sys.System
	for _, pi := range src.Instructions {
		for want := pi.WireOffset - nIn; allocated < want; allocated++ {
			dst.AddInternalVariable()
		}
		inst := pi.Unpack(src)
		rp.buf = rp.buf[:0]
		var bID constraint.BlueprintID
		switch t.kind[pi.BlueprintID] {
		case kindR1C:
			rp.r1cBP.DecompressR1C(&rp.r1c, inst)
			terms(rp.r1c.L)
			terms(rp.r1c.R)
			terms(rp.r1c.O)
			rp.r1cBP.CompressR1C(&rp.r1c, &rp.buf)
			bID = rp.bR1C
		case kindHint:
			rp.hintBP.DecompressHint(&rp.hint, inst)
			for _, le := range rp.hint.Inputs {
				terms(le)
			}
			out := &rp.hint.OutputRange
			if out.Start < nIn || out.End > pi.WireOffset || out.Start > out.End {
				return templateUse{}, fmt.Errorf("circuit: assembly: template %s: hint outputs %d..%d are not internal wires allocated before it", t.name, out.Start, out.End)
			}
			out.Start, out.End = base+(out.Start-nIn), base+(out.End-nIn)
			rp.hintBP.CompressHint(rp.hint, &rp.buf)
			bID = rp.bHint
		}
		if bad != nil {
			return templateUse{}, bad
		}
		dst.AddInstruction(bID, rp.buf)
	}
	for ; allocated < uint32(src.NbInternalVariables); allocated++ {
		dst.AddInternalVariable()
	}
	if got := dst.GetNbConstraints() - nc; got != src.NbConstraints {
		return templateUse{}, fmt.Errorf("circuit: assembly: template %s added %d constraints, it has %d", t.name, got, src.NbConstraints)
	}
	return use, nil
}

// inputNames returns the names gnark gives the public and secret inputs of
// a circuit, in its order (frontend.Compile and frontend.NewWitness walk the
// struct the same way).
func inputNames(c frontend.Circuit) (public, secret []string, err error) {
	tVariable := reflect.TypeOf((*frontend.Variable)(nil)).Elem()
	_, err = schema.Walk(ecc.BLS12_381.ScalarField(), c, tVariable, func(f schema.LeafInfo, _ reflect.Value) error {
		switch f.Visibility {
		case schema.Public:
			public = append(public, f.FullName())
		case schema.Secret:
			secret = append(secret, f.FullName())
		}
		return nil
	})
	return public, secret, err
}

// assemble builds the partition R1CS of p from its head and challenge
// templates. It reports progress(1) when the templates are compiled and
// progress(2+j) when challenge j is assembled. It also returns the templates
// and their uses, for Synthesize.
func assemble(p Params, progress func(done int)) (*cs.R1CS, *replayed, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("circuit: assemble %q: %s", p.Name, fmt.Sprintf(format, a...))
	}
	pubNames, secNames, err := inputNames(newPartitionCircuit(p))
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	nPub := 1 + len(pubNames) // with the constant one
	nSec := len(secNames)

	// The head: its inputs are the partition's public inputs and comm_c,
	// comm_r_last, at the same wire ids as in the partition.
	head := &headCircuit{Public: make([]frontend.Variable, p.NumPublic())}
	hs, err := compileR1CS(fmt.Sprintf("%q head", p.Name), head)
	if err != nil {
		return nil, nil, err
	}
	if hs.GetNbPublicVariables() != nPub || !slices.Equal(hs.Public[1:], pubNames) || !slices.Equal(hs.Secret, secNames[:2]) {
		return nil, nil, bad("head inputs %v %v do not open the partition's", hs.Public, hs.Secret)
	}
	headIn := uint32(nPub + 2)
	// The replica bits are head wires: in the challenge template they are
	// inputs declared in increasing wire order, after the challenge's own
	// witness, as in the partition (head internal wires follow all secret
	// inputs).
	var rwires []uint32
	for _, b := range head.replica {
		if b.constant == nil {
			if b.wire < headIn {
				return nil, nil, bad("replica bit is input wire %d of the head, want an internal wire", b.wire)
			}
			rwires = append(rwires, b.wire)
		}
	}
	slices.Sort(rwires)
	rwires = slices.Compact(rwires)
	chal := &challengeCircuit{
		Public:    make([]frontend.Variable, inFirst+p.InputsPerChallenge()),
		Challenge: newChallengeWitness(p),
		Replica:   make([]frontend.Variable, len(rwires)),
		params:    p,
		replica:   make([]replicaBit, len(head.replica)),
	}
	for k, b := range head.replica {
		chal.replica[k] = b
		if b.constant == nil {
			i, _ := slices.BinarySearch(rwires, b.wire)
			chal.replica[k].wire = uint32(i)
		}
	}
	ct, err := compileR1CS(fmt.Sprintf("%q challenge", p.Name), chal)
	if err != nil {
		return nil, nil, err
	}
	nPubT := ct.GetNbPublicVariables()
	perChallenge := ct.GetNbSecretVariables() - 2 - len(rwires)
	if nPubT != 1+len(chal.Public) || nSec != 2+p.Challenges*perChallenge {
		return nil, nil, bad("challenge template has %d public and %d secret inputs; the partition %d secret inputs for %d challenges",
			nPubT, ct.GetNbSecretVariables(), nSec, p.Challenges)
	}
	// The partition's secret inputs are comm_c, comm_r_last, then challenge
	// j's witness at 2 + j·perChallenge, in the template's order (checked by
	// name: gnark names Challenges[j].X "Challenges_j_X").
	for j := range p.Challenges {
		for s := range perChallenge {
			want := "Challenges_" + strconv.Itoa(j) + "_" + strings.TrimPrefix(ct.Secret[2+s], "Challenge_")
			if got := secNames[2+j*perChallenge+s]; got != want {
				return nil, nil, bad("secret input %d is %s, the challenge template puts %s there", 2+j*perChallenge+s, got, want)
			}
		}
	}

	// The partition system, pre-sized exactly for its instructions and
	// calldata. (gnark sizes its per-wire level table and its coefficient
	// map together with these from NewR1CS's one capacity; a coefficient map
	// of capacity/10 entries would cost far more than the few thousand
	// coefficients need, so those grow on demand.)
	dst := cs.NewR1CS(0)
	dst.Instructions = make([]constraint.PackedInstruction, 0, len(hs.Instructions)+p.Challenges*len(ct.Instructions))
	dst.CallData = make([]uint32, 0, len(hs.CallData)+p.Challenges*len(ct.CallData))
	dst.AddPublicVariable("1")
	for _, n := range pubNames {
		dst.AddPublicVariable(n)
	}
	for _, n := range secNames {
		dst.AddSecretVariable(n)
	}
	dst.AddBlueprint(&constraint.BlueprintGenericR1C{})
	rp, err := newReplayer(dst)
	if err != nil {
		return nil, nil, err
	}
	ht, err := newTemplate("head", hs, dst)
	if err != nil {
		return nil, nil, err
	}
	tt, err := newTemplate("challenge", ct, dst)
	if err != nil {
		return nil, nil, err
	}

	progress(1)

	in := make([]uint32, ht.nIn)
	for w := range in {
		in[w] = uint32(w)
	}
	headBase := uint32(nPub + nSec) // the head's internal wires come first
	rep := &replayed{chalUses: make([]templateUse, p.Challenges)}
	if rep.head, err = newTemplateSolver(ht); err != nil {
		return nil, nil, err
	}
	if rep.chal, err = newTemplateSolver(tt); err != nil {
		return nil, nil, err
	}
	if rep.headUse, err = rp.replay(ht, in); err != nil {
		return nil, nil, err
	}
	in = make([]uint32, tt.nIn)
	for j := range p.Challenges {
		k := 0
		put := func(w uint32) { in[k] = w; k++ }
		put(0) // the constant one
		for i := range inFirst {
			put(uint32(1 + i))
		}
		for i := range p.InputsPerChallenge() {
			put(uint32(1 + p.challengeBase(j) + i))
		}
		put(uint32(nPub))     // comm_c
		put(uint32(nPub + 1)) // comm_r_last
		for s := range perChallenge {
			put(uint32(nPub + 2 + j*perChallenge + s))
		}
		for _, w := range rwires {
			put(headBase + (w - headIn))
		}
		first := uint32(len(dst.Instructions))
		if rep.chalUses[j], err = rp.replay(tt, in); err != nil {
			return nil, nil, err
		}
		if j == 0 {
			growLevels(dst, first, p.Challenges-1)
		}
		// The replay's garbage (gnark's per-instruction scratch, the
		// per-wire level table's regrowth) would otherwise pile up to the
		// GC's target of twice the live heap; with the system tens of GB at
		// 32 GiB, collecting per challenge keeps the peak near the system's
		// own size (test-tiny*18: 169 → 130 B per constraint) and costs
		// little, as the system's big slices hold no pointers to mark.
		runtime.GC()
		progress(2 + j)
	}
	if got, want := dst.GetNbInternalVariables(), hs.NbInternalVariables+p.Challenges*ct.NbInternalVariables; got != want {
		return nil, nil, bad("%d internal wires, want %d", got, want)
	}
	return dst, rep, nil
}

// growLevels reserves, in every solver level of dst, room for n more
// challenges laid out like the one whose instructions start at first (the
// last one added). A challenge's instructions depend on nothing outside it
// but inputs and the head's replica bits, so every challenge puts the same
// number of instructions into each level; without this the levels grow by
// appending, which at 32 GiB is a good part of the replay's time.
func growLevels(dst *cs.R1CS, first uint32, n int) {
	for l, ids := range dst.Levels {
		i, _ := slices.BinarySearch(ids, first) // instruction ids are appended in order
		if k := len(ids) - i; k > 0 {
			dst.Levels[l] = slices.Grow(ids, n*k)
		}
	}
}
