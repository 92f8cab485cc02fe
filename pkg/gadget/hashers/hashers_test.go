package hashers

import (
	"crypto/rand"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/multipack"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

func randomLeaves(n int) ([]fr.Element, []porep.Domain) {
	e := make([]fr.Element, n)
	d := make([]porep.Domain, n)
	for i := range e {
		e[i].SetRandom()
		d[i] = porep.DomainFromElement(&e[i])
	}
	return e, d
}

func alloc(cs r1cs.CS, vals []fr.Element) []num.AllocatedNum {
	out := make([]num.AllocatedNum, len(vals))
	for i, v := range vals {
		out[i] = num.Alloc(cs, v)
	}
	return out
}

func checkDigest(t *testing.T, s *r1cs.System, got num.AllocatedNum, want porep.Domain) {
	t.Helper()
	w, err := want.Element()
	if err != nil {
		t.Fatal(err)
	}
	if !got.Val.Equal(&w) || !s.Value(got.V).Equal(&w) {
		t.Fatalf("digest %s, natively %s", got.Val.String(), w.String())
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
}

// TestSHA256MatchesTreeD checks the circuit node hash of tree D against
// the native one (SHA-256 of the children's bytes, truncated to 254 bits)
// through its three entry points.
func TestSHA256MatchesTreeD(t *testing.T) {
	for range 3 {
		vals, doms := randomLeaves(2)
		want, _ := merkle.SHA254{}.HashNode(doms)

		s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
		leaves := alloc(s, vals)
		got, err := SHA256{}.HashMultiLeaf(s, leaves)
		if err != nil {
			t.Fatal(err)
		}
		checkDigest(t, s, got, want)
		if n := s.Name(0); n != "0_num_into_bits/bit 0/boolean constraint" {
			t.Fatalf("first constraint %q", n)
		}

		s = r1cs.NewSystem(r1cs.WithValues())
		leaves = alloc(s, vals)
		checkDigest(t, s, SHA256{}.Hash2(s, leaves[0], leaves[1]), want)

		s = r1cs.NewSystem(r1cs.WithValues())
		leaves = alloc(s, vals)
		checkDigest(t, s, SHA256{}.HashLeafBits(s, leaves[0].ToBitsLE(s), leaves[1].ToBitsLE(s)), want)

		// A wrong digest bit is caught.
		_, aux := s.Values()
		aux[len(aux)-2].SetUint64(1 - aux[len(aux)-2].Uint64())
		if s.Satisfied() == nil {
			t.Fatal("a flipped digest bit satisfies the circuit")
		}
	}
}

func TestPoseidonMatchesTreeC(t *testing.T) {
	for _, arity := range []int{2, 4, 8} {
		vals, doms := randomLeaves(arity)
		want, _ := merkle.Poseidon{}.HashNode(doms)
		s := r1cs.NewSystem(r1cs.WithValues())
		got, err := Poseidon{}.HashMultiLeaf(s, alloc(s, vals))
		if err != nil {
			t.Fatal(err)
		}
		checkDigest(t, s, got, want)
	}
	vals, doms := randomLeaves(2)
	want, _ := merkle.Poseidon{}.HashNode(doms)
	s := r1cs.NewSystem(r1cs.WithValues())
	leaves := alloc(s, vals)
	got, err := Poseidon{}.Hash2(s, leaves[0], leaves[1])
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, s, got, want)
}

// TestReverseBitNumbering: the little-endian bits of each byte, reversed
// per byte, are its big-endian bits; a partial byte is padded with false
// first.
func TestReverseBitNumbering(t *testing.T) {
	b := make([]byte, 33)
	rand.Read(b)
	le := multipack.BytesToBitsLE(b)
	be := multipack.BytesToBits(b)
	in := make([]boolean.Boolean, len(le))
	for i, v := range le {
		in[i] = boolean.Constant(v)
	}
	out := ReverseBitNumbering(in)
	if len(out) != len(be) {
		t.Fatalf("%d bits, want %d", len(out), len(be))
	}
	for i := range be {
		if out[i].Value() != be[i] {
			t.Fatalf("bit %d", i)
		}
	}
	// 255 bits: the top bit of the last byte is padding.
	out = ReverseBitNumbering(in[:255])
	if len(out) != 256 || !out[248].IsConstant() || out[248].Value() {
		t.Fatal("the partial byte is not padded with a constant false")
	}
	for i := 249; i < 256; i++ {
		if out[i].Value() != in[248+255-i-1+1].Value() {
			t.Fatalf("partial byte bit %d", i)
		}
	}
}
