package por

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/hashers"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func toPath(t *testing.T, p *merkle.Proof) Path {
	t.Helper()
	conv := func(in []merkle.PathElement) []Element {
		var out []Element
		for _, e := range in {
			el := Element{Index: int(e.Index)}
			for _, h := range e.Hashes {
				v, err := h.Element()
				if err != nil {
					t.Fatal(err)
				}
				el.Hashes = append(el.Hashes, v)
			}
			out = append(out, el)
		}
		return out
	}
	return Path{Base: conv(p.Base), Sub: conv(p.Sub), Top: conv(p.Top)}
}

func elem(t *testing.T, d porep.Domain) fr.Element {
	t.Helper()
	v, err := d.Element()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestInclusionAgainstNativeTrees proves leaves of trees built natively
// (pkg/porep/merkle) for every layout the PoRep uses: the public PoR must
// be satisfied with the leaf index and the root as inputs, and a changed
// sibling or leaf must not be.
func TestInclusionAgainstNativeTrees(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shape  porep.TreeShape
		leaves int
		native merkle.Hasher
		hasher Hasher
	}{
		{"sha256 binary", porep.TreeShape{Base: 2}, 8, merkle.SHA254{}, hashers.SHA256{}},
		{"poseidon 2", porep.TreeShape{Base: 2}, 16, merkle.Poseidon{}, hashers.Poseidon{}},
		{"poseidon 4", porep.TreeShape{Base: 4}, 16, merkle.Poseidon{}, hashers.Poseidon{}},
		{"poseidon 8", porep.TreeShape{Base: 8}, 64, merkle.Poseidon{}, hashers.Poseidon{}},
		{"poseidon 8-4", porep.TreeShape{Base: 8, Sub: 4}, 32, merkle.Poseidon{}, hashers.Poseidon{}},
		{"poseidon 8-4-2", porep.TreeShape{Base: 8, Sub: 4, Top: 2}, 64, merkle.Poseidon{}, hashers.Poseidon{}},
		{"poseidon 4-2", porep.TreeShape{Base: 4, Sub: 2}, 32, merkle.Poseidon{}, hashers.Poseidon{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := make([]porep.Domain, tc.leaves)
			for i := range data {
				var v fr.Element
				v.SetRandom()
				data[i] = porep.DomainFromElement(&v)
			}
			tree, err := merkle.Build(context.Background(), tc.shape, data, tc.native)
			if err != nil {
				t.Fatal(err)
			}
			tr := Tree{Base: tc.shape.Base, Sub: tc.shape.Sub, Top: tc.shape.Top, Hasher: tc.hasher}
			for _, idx := range []uint64{0, 5, uint64(tc.leaves) - 1} {
				proof, err := tree.Prove(idx)
				if err != nil {
					t.Fatal(err)
				}
				path := toPath(t, proof)
				if err := tr.Check(&path, uint64(tc.leaves)); err != nil {
					t.Fatal(err)
				}
				if got := tr.Index(&path); got != idx {
					t.Fatalf("path opens %d, want %d", got, idx)
				}
				synth := func(p Path, leaf fr.Element) *r1cs.System {
					s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
					c := Circuit{Tree: tr, Value: Val(leaf), Path: p, Root: Val(elem(t, proof.Root))}
					if _, err := c.Synthesize(s); err != nil {
						t.Fatal(err)
					}
					return s
				}
				s := synth(path, elem(t, proof.Leaf))
				if err := s.Satisfied(); err != nil {
					t.Fatalf("leaf %d: %v", idx, err)
				}
				in, _ := s.Values()
				var wantIdx fr.Element
				wantIdx.SetUint64(idx)
				root := elem(t, proof.Root)
				if len(in) != 3 || !in[1].Equal(&wantIdx) || !in[2].Equal(&root) {
					t.Fatalf("inputs %v, want ONE, %d and the root", in, idx)
				}

				bad := toPath(t, proof)
				one := fr.One()
				bad.Base[len(bad.Base)-1].Hashes[0].Add(&bad.Base[len(bad.Base)-1].Hashes[0], &one)
				var u *r1cs.Unsatisfied
				if err := synth(bad, elem(t, proof.Leaf)).Satisfied(); !errors.As(err, &u) || !strings.HasSuffix(u.Name, "enforce root is correct") {
					t.Fatalf("changed sibling: %v", err)
				}
				leaf := elem(t, proof.Leaf)
				leaf.Add(&leaf, &one)
				if synth(path, leaf).Satisfied() == nil {
					t.Fatal("a changed leaf satisfies the circuit")
				}
			}
		})
	}
}

// TestPrivateSharedRoot: with Var leaf and root and Private, the circuit
// allocates neither and exposes only the path.
func TestPrivateSharedRoot(t *testing.T) {
	s := r1cs.NewSystem(r1cs.WithValues())
	leaf := num.Alloc(s, r1cs.Coeff(1))
	root := num.Alloc(s, r1cs.Coeff(2))
	tr := Tree{Base: 4, Hasher: hashers.Poseidon{}}
	aux := s.NumAux()
	c := Circuit{Tree: tr, Value: Var(leaf), Path: tr.Blank(16), Root: Var(root), Private: true}
	if _, err := c.Synthesize(s); err != nil {
		t.Fatal(err)
	}
	if s.NumInputs() != 2 {
		t.Fatalf("%d inputs, want ONE and the path", s.NumInputs())
	}
	// Two levels of 2 index bits, 3 siblings, 8 picks and a hash each.
	if s.NumAux() == aux {
		t.Fatal("nothing allocated")
	}
	if s.Satisfied() == nil {
		t.Fatal("a blank path satisfies a root of 2")
	}
}

func TestCheck(t *testing.T) {
	tr := Tree{Base: 8, Sub: 4, Hasher: hashers.Poseidon{}}
	p := tr.Blank(256)
	if len(p.Base) != 2 || len(p.Sub) != 1 || len(p.Top) != 0 {
		t.Fatalf("blank path %d/%d/%d levels", len(p.Base), len(p.Sub), len(p.Top))
	}
	if err := tr.Check(&p, 256); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(p *Path)
		want string
	}{
		{func(p *Path) { p.Base = p.Base[:1] }, "base path has 1 levels, want 2"},
		{func(p *Path) { p.Sub[0].Hashes = p.Sub[0].Hashes[:2] }, "sub path level 0 has 2 siblings, want 3"},
		{func(p *Path) { p.Base[1].Index = 8 }, "base path level 1 index 8 outside 0..7"},
		{func(p *Path) { p.Top = p.Sub }, "top path has 1 levels, want 0"},
	} {
		q := tr.Blank(256)
		tc.edit(&q)
		if err := tr.Check(&q, 256); err == nil || err.Error() != tc.want {
			t.Fatalf("got %v, want %q", err, tc.want)
		}
	}
	if err := (Tree{Base: 6}).Validate(); err == nil {
		t.Fatal("arity 6 accepted")
	}
	if err := (Tree{Base: 8, Top: 2}).Validate(); err == nil {
		t.Fatal("a top layer without a sub layer accepted")
	}
}

// TestPublishedCounts: the PoR circuits of storage-proofs-core's
// tests/por_circuit.rs (64 leaves per base tree; the root a public input,
// or private as the StackedCircuit's) have the inputs and constraints that
// file asserts under bellperson.
func TestPublishedCounts(t *testing.T) {
	sha, pos := hashers.SHA256{}, hashers.Poseidon{}
	for _, tc := range []struct {
		name                string
		tree                Tree
		private             bool
		inputs, constraints int
	}{
		{"sha256 base 2", Tree{Base: 2, Hasher: sha}, false, 3, 272_295},
		{"sha256 base 4", Tree{Base: 4, Hasher: sha}, false, 3, 216_258},
		{"sha256 base 8", Tree{Base: 8, Hasher: sha}, false, 3, 250_987},
		{"poseidon base 2", Tree{Base: 2, Hasher: pos}, false, 3, 1_887},
		{"poseidon base 4", Tree{Base: 4, Hasher: pos}, false, 3, 1_164},
		{"poseidon base 8", Tree{Base: 8, Hasher: pos}, false, 3, 1_063},
		{"poseidon sub 8-2", Tree{Base: 8, Sub: 2, Hasher: pos}, false, 3, 1_377},
		{"poseidon top 8-4-2", Tree{Base: 8, Sub: 4, Top: 2, Hasher: pos}, false, 3, 1_764},
		{"poseidon sub 8-8", Tree{Base: 8, Sub: 8, Hasher: pos}, false, 3, 1_593},
		{"poseidon top 8-8-2", Tree{Base: 8, Sub: 8, Top: 2, Hasher: pos}, false, 3, 1_907},
		{"poseidon top 8-2-4", Tree{Base: 8, Sub: 2, Top: 4, Hasher: pos}, false, 3, 1_764},
		{"poseidon base 2, private root", Tree{Base: 2, Hasher: pos}, true, 2, 1_886},
		{"poseidon base 4, private root", Tree{Base: 4, Hasher: pos}, true, 2, 1_163},
		{"poseidon base 8, private root", Tree{Base: 8, Hasher: pos}, true, 2, 1_062},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaves := uint64(64 * max(1, tc.tree.Sub) * max(1, tc.tree.Top))
			s := r1cs.NewSystem()
			c := Circuit{Tree: tc.tree, Value: Val(fr.Element{}), Path: tc.tree.Blank(leaves), Root: Val(fr.Element{}), Private: tc.private}
			if _, err := c.Synthesize(s); err != nil {
				t.Fatal(err)
			}
			if s.NumInputs() != tc.inputs || s.NumConstraints() != tc.constraints {
				t.Fatalf("%d inputs and %d constraints, storage-proofs-core's test asserts %d and %d",
					s.NumInputs(), s.NumConstraints(), tc.inputs, tc.constraints)
			}
		})
	}
}
