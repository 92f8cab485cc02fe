package por

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/constraint"
	"github.com/c2cluster/c2cluster/pkg/gadget/insertion"
	"github.com/c2cluster/c2cluster/pkg/gadget/multipack"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Root is a value a circuit either shares with another part (Var, an
// allocated number) or allocates itself (Val) — storage-proofs-core's
// Root, used for a proof's leaf and root.
type Root struct {
	allocated bool
	num       num.AllocatedNum
}

// Var is an already allocated number.
func Var(n num.AllocatedNum) Root { return Root{allocated: true, num: n} }

// Val is a value to allocate.
func Val(v fr.Element) Root { return Root{num: num.AllocatedNum{Val: v}} }

// Allocated returns the number, allocating it ("num") for a Val.
func (r Root) Allocated(cs r1cs.CS) num.AllocatedNum {
	if r.allocated {
		return r.num
	}
	return num.Alloc(cs, r.num.Val)
}

// Circuit is PoRCircuit: the inclusion of Value at the position Path opens
// in the tree whose root is Root. Private leaves the root unexposed.
type Circuit struct {
	Tree    Tree
	Value   Root
	Path    Path
	Root    Root
	Private bool
}

// Synthesize builds the proof in cs: the leaf ("value"), the levels of the
// base, sub and top paths (namespaces "base", "sub", "top", level i in
// "merkle tree hash i"), the index bits packed into public inputs ("path",
// multipack.PackIntoInputs), the root ("root_value"), the constraint that
// the computed root equals it ("enforce root is correct") and, unless
// Private, the root as a public input ("root"). It returns the computed
// root. A path that does not fit the tree panics (check it with
// Tree.Check); the node hash's error is returned.
func (c *Circuit) Synthesize(cs r1cs.CS) (num.AllocatedNum, error) {
	if err := c.Tree.Validate(); err != nil {
		panic("por: " + err.Error())
	}
	cs.Push(r1cs.N("value"))
	cur := c.Value.Allocated(cs)
	cs.Pop()

	var pathBits [64]boolean.Boolean
	allBits := pathBits[:0]
	var err error
	for _, l := range []struct {
		name  string
		path  []Element
		arity int
	}{{"base", c.Path.Base, c.Tree.Base}, {"sub", c.Path.Sub, c.Tree.Sub}, {"top", c.Path.Top, c.Tree.Top}} {
		cs.Push(r1cs.N(l.name))
		cur, allBits, err = subPath(cs, c.Tree.Hasher, l.arity, l.path, cur, allBits)
		cs.Pop()
		if err != nil {
			return num.AllocatedNum{}, err
		}
	}

	cs.Push(r1cs.N("path"))
	multipack.PackIntoInputs(cs, allBits)
	cs.Pop()

	cs.Push(r1cs.N("root_value"))
	rt := c.Root.Allocated(cs)
	cs.Pop()
	constraint.Equal(cs, r1cs.N("enforce root is correct"), cur, rt)
	if !c.Private {
		cs.Push(r1cs.N("root"))
		rt.Inputize(cs)
		cs.Pop()
	}
	return cur, nil
}

// subPath hashes cur up one sub path of the given arity and appends the
// levels' index bits (least significant first) to pathBits.
func subPath(cs r1cs.CS, h Hasher, arity int, path []Element, cur num.AllocatedNum, pathBits []boolean.Boolean) (num.AllocatedNum, []boolean.Boolean, error) {
	if arity == 0 {
		if len(path) != 0 {
			panic("por: a path level in a layer the tree does not have")
		}
		return cur, pathBits, nil
	}
	nbits := bits.TrailingZeros(uint(arity))
	siblings := make([]num.AllocatedNum, arity-1)
	for i, e := range path {
		if len(e.Hashes) != arity-1 {
			panic(fmt.Sprintf("por: path level %d has %d siblings for arity %d", i, len(e.Hashes), arity))
		}
		cs.Push(r1cs.Nf("merkle tree hash %d", i))
		first := len(pathBits)
		for j := range nbits {
			cs.Push(r1cs.Nf("index bit %d", j))
			pathBits = append(pathBits, boolean.Is(boolean.AllocBit(cs, e.Index>>j&1 == 1)))
			cs.Pop()
		}
		for j := range e.Hashes {
			cs.Push(r1cs.Nf("path element %d", j))
			siblings[j] = num.Alloc(cs, e.Hashes[j])
			cs.Pop()
		}
		inserted := insertion.Insert(cs, cur, pathBits[first:], siblings)
		cs.Push(r1cs.N("computation of commitment hash"))
		var err error
		cur, err = h.HashMultiLeaf(cs, inserted)
		cs.Pop()
		cs.Pop()
		if err != nil {
			return cur, pathBits, err
		}
	}
	return cur, pathBits, nil
}
