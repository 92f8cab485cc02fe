package poseidon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	native "github.com/c2cluster/c2cluster/pkg/poseidon"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
	"github.com/c2cluster/c2cluster/pkg/r1cs/r1cstest"
)

// The reference's Poseidon gadgets (../shared/oracle/README.md): inputs
// (ONE), aux (the allocated preimage included), constraints and hash.
var reference = []struct {
	arity           int
	aux, cons       int
	hash, dump, via string
}{
	{2, 313, 311, "658f013f99360e164ad8e7f96290944601cc064f93c153d9ea7ac1275927175f", "poseidon-2.r1cs.txt.gz", "hash2"},
	{4, 381, 377, "2360602a7c4555d454b46891236273f4ae308090bc916fdcef1fb81d00ebbe70", "poseidon-4.r1cs.txt.gz", "multi"},
	{8, 513, 505, "ab50aeda63344f7125999ef5c4af7777380b9015ec82ad48bac2213e9353b163", "poseidon-8.r1cs.txt.gz", "hash"},
	{11, 609, 598, "e94a28106cbb9a718e525f0f2593ce3b138350047854ebcc3c83472ed482a6f6", "poseidon-11.r1cs.txt.gz", "hash"},
}

func randomValues(rng *rand.Rand, n int) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		var b [32]byte
		for j := 0; j < 32; j += 8 {
			binary.BigEndian.PutUint64(b[j:], rng.Uint64())
		}
		out[i].SetBytes(b[:]) // reduced mod r
	}
	return out
}

// synth is the reference harness: the preimage allocated at the root, one
// namespace per element, then the hash under "poseidon".
func synth(t testing.TB, cs r1cs.CS, via string, in []fr.Element) num.AllocatedNum {
	t.Helper()
	pre := make([]num.AllocatedNum, len(in))
	for i, v := range in {
		cs.Push(r1cs.Nf("data %d", i))
		pre[i] = num.Alloc(cs, v)
		cs.Pop()
	}
	cs.Push(r1cs.N("poseidon"))
	defer cs.Pop()
	var out num.AllocatedNum
	var err error
	switch via {
	case "hash2":
		out, err = Hash2(cs, pre[0], pre[1])
	case "multi":
		out, err = HashMultiLeaf(cs, pre)
	default:
		out, err = Hash(cs, pre)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReferenceHashes: counts and bellpepper hash equal the reference's
// published numbers (no oracle files needed).
func TestReferenceHashes(t *testing.T) {
	for _, r := range reference {
		s := r1cs.NewSystem()
		synth(t, s, r.via, make([]fr.Element, r.arity))
		if s.NumInputs() != 1 || s.NumAux() != r.aux || s.NumConstraints() != r.cons {
			t.Fatalf("arity %d: %d inputs, %d aux, %d constraints; reference 1, %d, %d", r.arity, s.NumInputs(), s.NumAux(), s.NumConstraints(), r.aux, r.cons)
		}
		if h := fmt.Sprintf("%x", s.Hash()); h != r.hash {
			t.Fatalf("arity %d: hash %s, reference %s", r.arity, h, r.hash)
		}
		if n, _ := NumConstraints(r.arity); n != r.cons {
			t.Fatalf("arity %d: NumConstraints %d, reference %d", r.arity, n, r.cons)
		}
	}
}

// TestReferenceDumps compares every constraint line, names included, with
// the reference's dumps.
func TestReferenceDumps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range reference {
		t.Run(r.dump, func(t *testing.T) {
			s := r1cs.NewSystem(r1cs.WithNames())
			synth(t, s, r.via, randomValues(rng, r.arity))
			r1cstest.CompareDump(t, s, r.dump)
		})
	}
}

// TestSatisfiedDigest: with random inputs the circuit is satisfied and
// its digest is pkg/poseidon's hash, for every arity.
func TestSatisfiedDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for arity := 1; arity <= native.MaxArity; arity++ {
		in := randomValues(rng, arity)
		s := r1cs.NewSystem(r1cs.WithNames(), r1cs.WithValues())
		out := synth(t, s, "hash", in)
		if err := s.Satisfied(); err != nil {
			t.Fatalf("arity %d: %v", arity, err)
		}
		want := native.Hash(in)
		if !out.Val.Equal(&want) || !s.Value(out.V).Equal(&want) {
			t.Fatalf("arity %d: digest %s, native %s", arity, out.Val.String(), want.String())
		}
		n, err := NumConstraints(arity)
		if err != nil {
			t.Fatal(err)
		}
		if s.NumConstraints() != n || s.NumAux() != arity+n || out.V != r1cs.Aux(s.NumAux()-1) {
			t.Fatalf("arity %d: %d constraints, %d aux, digest %v; want %d, %d, the last aux", arity, s.NumConstraints(), s.NumAux(), out.V, n, arity+n)
		}
	}
}

// tamper records the value of its k-th allocation plus one, while the
// gadget carries the right value on.
type tamper struct {
	*r1cs.System
	k, n int
}

func (c *tamper) Alloc(name r1cs.Name, v fr.Element) r1cs.Variable {
	if c.n == c.k {
		var one fr.Element
		one.SetOne()
		v.Add(&v, &one)
	}
	c.n++
	return c.System.Alloc(name, v)
}

// TestTamperedFails: a wrong value of any kind of intermediate variable is
// caught by the constraint that defines it (the gadget's constraint j
// defines its allocation j).
func TestTamperedFails(t *testing.T) {
	in := randomValues(rand.New(rand.NewPCG(5, 6)), 2)
	// first round x², x⁴, x⁵; an S-box input; a partial round's x⁵; the
	// terminal round; the digest.
	for _, k := range []int{0, 1, 2, 6, 45, 300, 310} {
		c := &tamper{System: r1cs.NewSystem(r1cs.WithNames(), r1cs.WithValues()), k: k + 2}
		synth(t, c, "hash2", in)
		err := c.Satisfied()
		var u *r1cs.Unsatisfied
		if !errors.As(err, &u) || u.Index != k {
			t.Fatalf("allocation %d tampered: %v, want constraint %d unsatisfied", k, err, k)
		}
	}
}

// plain hides a Witness's Bulk allocation.
type plain struct{ r1cs.CS }

// TestWitnessFastPath: the native witness path allocates the values the
// circuit path allocates, with and without Bulk.
func TestWitnessFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for arity := 1; arity <= native.MaxArity; arity++ {
		in := randomValues(rng, arity)
		c, err := native.OptimizedConstants(arity)
		if err != nil {
			t.Fatal(err)
		}
		pre := func(w *r1cs.Witness) []num.AllocatedNum {
			out := make([]num.AllocatedNum, arity)
			for i := range out {
				out[i] = num.Alloc(w, in[i])
			}
			return out
		}
		gen := r1cs.NewWitness()
		gOut := hashCircuit(gen, c, pre(gen))
		fast := r1cs.NewWitness()
		fOut, err := Hash(fast, pre(fast))
		if err != nil {
			t.Fatal(err)
		}
		one := r1cs.NewWitness()
		pOut, err := Hash(plain{one}, pre(one))
		if err != nil {
			t.Fatal(err)
		}
		for name, w := range map[string]*r1cs.Witness{"bulk": fast, "alloc": one} {
			if len(w.Aux) != len(gen.Aux) || len(w.Inputs) != 1 {
				t.Fatalf("arity %d, %s: %d aux, generic %d", arity, name, len(w.Aux), len(gen.Aux))
			}
			for i := range gen.Aux {
				if !w.Aux[i].Equal(&gen.Aux[i]) {
					t.Fatalf("arity %d, %s: aux %d differs", arity, name, i)
				}
			}
		}
		for _, o := range []num.AllocatedNum{fOut, pOut} {
			if o.V != gOut.V || !o.Val.Equal(&gOut.Val) {
				t.Fatalf("arity %d: digest %v %s, generic %v %s", arity, o.V, o.Val.String(), gOut.V, gOut.Val.String())
			}
		}
	}
}

func TestArity(t *testing.T) {
	for _, n := range []int{0, native.MaxArity + 1} {
		s := r1cs.NewSystem()
		if _, err := Hash(s, make([]num.AllocatedNum, n)); !errors.Is(err, native.ErrArity) {
			t.Fatalf("arity %d: %v", n, err)
		}
		if _, err := Hash(r1cs.NewWitness(), make([]num.AllocatedNum, n)); !errors.Is(err, native.ErrArity) {
			t.Fatalf("arity %d: %v", n, err)
		}
		if s.NumAux() != 0 {
			t.Fatalf("arity %d: allocated", n)
		}
	}
}
