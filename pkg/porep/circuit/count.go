package circuit

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/c2cluster/c2cluster/pkg/sha254"
)

// GadgetCount is one row of a constraint breakdown: a gadget of the
// partition circuit, the constraints of one use of it (measured by compiling
// it alone) and how many times a partition uses it.
type GadgetCount struct {
	Name        string
	Constraints int
	Uses        int
	// Part is the part of the circuit the gadget belongs to (one of Parts),
	// so that breakdowns of differently built circuits compare part by part.
	Part string
}

// Parts of a partition circuit, for comparing breakdowns.
const (
	PartLabels  = "labels (SHA-256)"
	PartTreeD   = "tree D paths (SHA-254)"
	PartTreeCR  = "tree C / R_last paths (Poseidon)"
	PartColumns = "column hashes (Poseidon)"
	PartBits    = "replica id, challenge and parent-label bits"
	PartCommR   = "comm_r = H(comm_c, comm_r_last)"
	PartOther   = "input allocation, encoding"
)

// Parts lists the parts in report order.
var Parts = []string{PartLabels, PartTreeD, PartTreeCR, PartColumns, PartBits, PartCommR, PartOther}

// PartTotals sums the breakdown by part, in the order of Parts.
func (b Breakdown) PartTotals() []int {
	out := make([]int, len(Parts))
	for _, r := range b.Rows {
		for i, p := range Parts {
			if r.Part == p {
				out[i] += r.Total()
			}
		}
	}
	return out
}

// Total is Constraints × Uses.
func (g GadgetCount) Total() int { return g.Constraints * g.Uses }

// Breakdown is the constraint count of a partition circuit split by gadget.
// Its Total equals the compiled circuit's constraint count (a test checks it
// on compiled shapes), so it extrapolates exactly to shapes too large to
// compile here, such as 32 GiB.
type Breakdown struct {
	Params Params
	Rows   []GadgetCount
}

// Total is the partition's constraint count.
func (b Breakdown) Total() int {
	t := 0
	for _, r := range b.Rows {
		t += r.Total()
	}
	return t
}

// SHABlocks is the number of SHA-256 compression blocks of a message of n
// bytes (padding included).
func SHABlocks(n int) int { return (n + 9 + 63) / 64 }

// LabelPreimageBytes is the length of a labeling preimage: 64 bytes of
// replica id, layer and node, then 32 bytes per parent label.
func (p Params) LabelPreimageBytes() int { return 64 + 32*p.LabelParents }

// unitCircuit compiles one gadget alone: prep turns the fresh inputs into
// the values the gadget takes in the real circuit (bit decompositions and
// the like, counted by their own rows), body applies the gadget. A unit's
// count is that of prep+body minus that of prep alone.
type unitCircuit struct {
	In       []frontend.Variable
	prep     func(api frontend.API, in []frontend.Variable) any `gnark:"-"`
	body     func(api frontend.API, prepared any)               `gnark:"-"`
	withBody bool                                               `gnark:"-"`
}

func (u *unitCircuit) Define(api frontend.API) error {
	var prepared any
	if u.prep != nil {
		prepared = u.prep(api, u.In)
	}
	if u.withBody {
		u.body(api, prepared)
	}
	return nil
}

func compileCount(u *unitCircuit) (int, error) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, u, frontend.IgnoreUnconstrainedInputs())
	if err != nil {
		return 0, err
	}
	return ccs.GetNbConstraints(), nil
}

// unitCount returns the constraints of one use of a gadget.
func unitCount(nIn int, prep func(frontend.API, []frontend.Variable) any, body func(frontend.API, any)) (int, error) {
	u := &unitCircuit{In: make([]frontend.Variable, nIn), prep: prep, body: body}
	base, err := compileCount(u)
	if err != nil {
		return 0, err
	}
	u.withBody = true
	full, err := compileCount(u)
	if err != nil {
		return 0, err
	}
	return full - base, nil
}

// CountBreakdown measures every gadget of p's partition circuit by compiling
// it alone and multiplies by its uses. It compiles one label gadget per
// layer, so for 37 label parents it takes a few seconds per layer.
func CountBreakdown(p Params) (Breakdown, error) {
	if err := p.Validate(); err != nil {
		return Breakdown{}, err
	}
	b := Breakdown{Params: p}
	add := func(part, name string, uses int, nIn int, prep func(frontend.API, []frontend.Variable) any, body func(frontend.API, any)) error {
		n, err := unitCount(nIn, prep, body)
		if err != nil {
			return fmt.Errorf("circuit: count %q: %w", name, err)
		}
		b.Rows = append(b.Rows, GadgetCount{Name: name, Constraints: n, Uses: uses, Part: part})
		return nil
	}
	C, L, nb := p.Challenges, p.Layers, p.NodeBits()
	cols := p.DRGDegree + p.ExpDegree
	none := func(_ frontend.API, in []frontend.Variable) any { return in }
	in := func(x any) []frontend.Variable { return x.([]frontend.Variable) }
	bitsOf := func(n int) func(frontend.API, []frontend.Variable) any {
		// cur: the SHA-order bits of a tree-D node (255 bits for a leaf,
		// 254 above); in[1]: the index bit; in[2]: the sibling.
		return func(api frontend.API, x []frontend.Variable) any {
			var cur []frontend.Variable
			if n == 255 {
				cur = dataLeafBits(api, x[0])
			} else {
				cur = sha254.DomainToBits(api, x[0])
			}
			return append([]any{cur}, fieldBits(api, x[1], 1)[0], x[2])
		}
	}
	levelArities := map[int]int{}
	for _, a := range p.TreeLevels() {
		levelArities[a]++
	}
	arities := make([]int, 0, len(levelArities))
	for a := range levelArities {
		arities = append(arities, a)
	}
	sort.Ints(arities)

	steps := []func() error{
		func() error {
			return add(PartBits, "replica_id bits (255, canonical)", 1, 1, none, func(api frontend.API, x any) { replicaBits(api, in(x)[0]) })
		},
		func() error {
			return add(PartCommR, "comm_r = Poseidon-2(comm_c, comm_r_last)", 1, 3, none, func(api frontend.API, x any) {
				commRCheck(api, in(x)[0], in(x)[1], in(x)[2])
			})
		},
		func() error {
			if err := add(PartTreeD, fmt.Sprintf("tree D: path index bits (%d)", nb), C, 1, none, func(api frontend.API, x any) { pathIndexBits(api, in(x)[0], nb) }); err != nil {
				return err
			}
			r := b.Rows[len(b.Rows)-1]
			b.Rows = append(b.Rows, GadgetCount{Name: fmt.Sprintf("tree C/R_last: path index bits (%d)", nb), Constraints: r.Constraints, Uses: C * (cols + 2), Part: PartTreeCR})
			return nil
		},
		func() error {
			return add(PartTreeD, "tree D: data leaf bits (255, canonical)", C, 1, none, func(api frontend.API, x any) { dataLeafBits(api, in(x)[0]) })
		},
		func() error {
			return add(PartTreeD, fmt.Sprintf("tree D: leaf level (sibling bits, order, SHA-256 %d blocks)", SHABlocks(64)), C, 3, bitsOf(255), func(api frontend.API, x any) {
				v := x.([]any)
				treeDLevel(api, v[0].([]frontend.Variable), v[1], v[2], 0)
			})
		},
		func() error {
			if nb < 2 {
				return nil
			}
			return add(PartTreeD, fmt.Sprintf("tree D: upper level (sibling bits, order, SHA-256 %d blocks)", SHABlocks(64)), C*(nb-1), 3, bitsOf(254), func(api frontend.API, x any) {
				v := x.([]any)
				treeDLevel(api, v[0].([]frontend.Variable), v[1], v[2], 1)
			})
		},
		func() error {
			return add(PartTreeD, "tree D: root = comm_d", C, 2, func(api frontend.API, x []frontend.Variable) any {
				return append([]any{sha254.DomainToBits(api, x[0])}, x[1])
			}, func(api frontend.API, x any) {
				v := x.([]any)
				treeDRootCheck(api, v[0].([]frontend.Variable), v[1])
			})
		},
		func() error {
			return add(PartColumns, fmt.Sprintf("column hash (Poseidon-%d)", L), C*(cols+1), L, none, func(api frontend.API, x any) { columnHash(api, in(x)) })
		},
	}
	for _, a := range arities {
		k := bits.TrailingZeros(uint(a))
		steps = append(steps, func() error {
			return add(PartTreeCR, fmt.Sprintf("tree C/R_last level: insert %d + Poseidon-%d", a, a), C*(cols+2)*levelArities[a], a+1,
				func(api frontend.API, x []frontend.Variable) any {
					return append([]any{fieldBits(api, x[0], k)}, x[1], x[2:])
				},
				func(api frontend.API, x any) {
					v := x.([]any)
					poseidonLevel(api, v[1], v[0].([]frontend.Variable), v[2].([]frontend.Variable))
				})
		})
	}
	steps = append(steps,
		func() error {
			return add(PartTreeCR, "tree C/R_last root check", C*(cols+2), 2, none, func(api frontend.API, x any) { rootCheck(api, in(x)[0], in(x)[1]) })
		},
		func() error {
			return add(PartBits, "challenge bits (64)", C, 1, none, func(api frontend.API, x any) { challengeBits(api, in(x)[0]) })
		},
		func() error {
			return add(PartBits, "parent label bits (254)", C*(p.DRGDegree*L+p.ExpDegree*(L-1)), 1, none, func(api frontend.API, x any) { parentLabelBits(api, in(x)[0]) })
		},
	)
	for layer := 1; layer <= L; layer++ {
		n := p.DRGDegree
		if layer > 1 {
			n += p.ExpDegree
		}
		steps = append(steps, func() error {
			name := fmt.Sprintf("label layer %d (SHA-256 %d blocks, %d parents)", layer, SHABlocks(p.LabelPreimageBytes()), p.LabelParents)
			return add(PartLabels, name, C, 2+n, func(api frontend.API, x []frontend.Variable) any {
				parents := make([][]frontend.Variable, n)
				for i := range parents {
					parents[i] = parentLabelBits(api, x[2+i])
				}
				return []any{replicaBits(api, x[0]), challengeBits(api, x[1]), p.labelPreimageParents(parents)}
			}, func(api frontend.API, x any) {
				v := x.([]any)
				label(api, v[0].([]frontend.Variable), layer, v[1].([]frontend.Variable), v[2].([][]frontend.Variable))
			})
		})
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return Breakdown{}, err
		}
	}
	return b, nil
}

// Per-gadget constraint counts of rust-fil-proofs' v1.1 StackedCircuit on
// bellperson, derived from the totals its tests publish (see
// BellpersonBreakdown and docs/circuit.md for the derivations).
const (
	// bpBits is AllocatedNum::to_bits_le: 255 booleans and 1 packing
	// constraint; also UInt64::alloc + pack_into_input is 64 + 1.
	bpBits = 256
	// bpTreeDLevel is one binary SHA-254 level of a PoR path: 1 index bit,
	// insert_2 (2), to_bits_le of both children (512), SHA-256 of 64 bytes
	// (44,866: a variable block and the constant padding block), pack (1).
	bpTreeDLevel = 45382
	// bpLabel37 is create_label_circuit with 37 parents: SHA-256 over 1,248
	// bytes (20 blocks) and the packing of the truncated digest.
	bpLabel37 = 522269
)

// bpPoseidon is neptune's Poseidon circuit per arity (hash_single_column and
// the Merkle hashes); bpInsert is storage-proofs-core's insert gadget.
var (
	bpPoseidon = map[int]int{2: 311, 4: 377, 8: 505, 11: 598}
	bpInsert   = map[int]int{2: 2, 4: 8, 8: 22}
)

// BellpersonBreakdown is the constraint count of rust-fil-proofs' v1.1
// StackedCircuit for p on bellperson, split like Breakdown, from per-gadget
// counts derived from bellperson's published test totals. It reproduces
// rust-fil-proofs' stacked_circuit test totals and the 32 GiB count
// (130,278,541 constraints; 130,278,869 with bellperson's 328 input
// constraints). It supports what rust-fil-proofs builds: 37 label parents,
// Poseidon arities 2, 4, 8 and 11.
func BellpersonBreakdown(p Params) (Breakdown, error) {
	if err := p.Validate(); err != nil {
		return Breakdown{}, err
	}
	colHash, ok := bpPoseidon[p.Layers]
	if !ok || p.LabelParents != 37 {
		return Breakdown{}, fmt.Errorf("circuit: no bellperson counts for %d layers and %d label parents", p.Layers, p.LabelParents)
	}
	path := 0
	for _, a := range p.TreeLevels() {
		h, ok1 := bpPoseidon[a]
		ins, ok2 := bpInsert[a]
		if !ok1 || !ok2 {
			return Breakdown{}, fmt.Errorf("circuit: no bellperson counts for tree arity %d", a)
		}
		path += bits.TrailingZeros(uint(a)) + ins + h
	}
	C, L, nb := p.Challenges, p.Layers, p.NodeBits()
	cols := p.DRGDegree + p.ExpDegree
	b := Breakdown{Params: p, Rows: []GadgetCount{
		{"replica_id: alloc, inputize, to_bits_le", 1 + bpBits, 1, PartBits},
		{"comm_d, comm_r: alloc, inputize", 1, 2, PartOther},
		{"comm_r = Poseidon-2(comm_c, comm_r_last)", bpPoseidon[2] + 1, 1, PartCommR},
		{fmt.Sprintf("tree D level (SHA-256 %d blocks)", SHABlocks(64)), bpTreeDLevel, C * nb, PartTreeD},
		{"tree D: path packing + root equality", 2, C, PartTreeD},
		{fmt.Sprintf("column hash (Poseidon-%d)", L), colHash, C * (cols + 1), PartColumns},
		{"tree C/R_last path (index bits, insert, Poseidon per level)", path, C * (cols + 2), PartTreeCR},
		{"tree C/R_last: path packing + root equality", 2, C * (cols + 2), PartTreeCR},
		{"challenge: UInt64 alloc + pack_into_input", 65, C, PartBits},
		{"parent label bits (to_bits_le)", bpBits, C * (p.DRGDegree*L + p.ExpDegree*(L-1)), PartBits},
		{fmt.Sprintf("label (SHA-256 %d blocks, 37 parents)", SHABlocks(p.LabelPreimageBytes())), bpLabel37, C * L, PartLabels},
		{"encoding (data + key)", 1, C, PartOther},
	}}
	return b, nil
}

// Grouped merges rows with the same name prefix up to " layer " and the same
// per-use count (the label rows of layers with equal counts), for display.
func (b Breakdown) Grouped() []GadgetCount {
	var out []GadgetCount
	for _, r := range b.Rows {
		name := r.Name
		if i := strings.Index(name, "label layer "); i == 0 {
			name = "label" + name[strings.Index(name, " ("):]
		}
		n := len(out)
		if n > 0 && out[n-1].Name == name && out[n-1].Constraints == r.Constraints {
			out[n-1].Uses += r.Uses
			continue
		}
		out = append(out, GadgetCount{Name: name, Constraints: r.Constraints, Uses: r.Uses, Part: r.Part})
	}
	return out
}
