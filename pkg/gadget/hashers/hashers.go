package hashers

import (
	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/multipack"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/gadget/poseidon"
	"github.com/c2cluster/c2cluster/pkg/gadget/sha256"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// ReverseBitNumbering pads bits with constant false to whole bytes and
// reverses the bit order inside each byte (a new slice).
func ReverseBitNumbering(bits []boolean.Boolean) []boolean.Boolean {
	return appendReversed(make([]boolean.Boolean, 0, (len(bits)+7)/8*8), bits)
}

// appendReversed appends ReverseBitNumbering(bits) to dst.
func appendReversed(dst, bits []boolean.Boolean) []boolean.Boolean {
	for i := 0; i < len(bits); i += 8 {
		for j := 7; j >= 0; j-- {
			if i+j < len(bits) {
				dst = append(dst, bits[i+j])
			} else {
				dst = append(dst, boolean.Constant(false))
			}
		}
	}
	return dst
}

// SHA256 is filecoin-hashers' Sha256Function: the node hash of tree D.
type SHA256 struct{}

// HashMultiLeaf hashes the leaves' little-endian bits ("i_num_into_bits",
// num.ToBitsLE), each padded to whole bytes and bit-reversed per byte, with
// HashBits.
func (SHA256) HashMultiLeaf(cs r1cs.CS, leaves []num.AllocatedNum) (num.AllocatedNum, error) {
	bits := make([]boolean.Boolean, 0, 256*len(leaves))
	for i, leaf := range leaves {
		cs.Push(r1cs.Nf("%d_num_into_bits", i))
		le := leaf.ToBitsLE(cs)
		cs.Pop()
		bits = appendReversed(bits, le)
	}
	return SHA256{}.HashBits(cs, bits), nil
}

// Hash2 is hash2_circuit: a's and b's bits ("a_bits", "b_bits") hashed as
// HashMultiLeaf hashes two leaves.
func (SHA256) Hash2(cs r1cs.CS, a, b num.AllocatedNum) num.AllocatedNum {
	cs.Push(r1cs.N("a_bits"))
	la := a.ToBitsLE(cs)
	cs.Pop()
	cs.Push(r1cs.N("b_bits"))
	lb := b.ToBitsLE(cs)
	cs.Pop()
	return SHA256{}.HashLeafBits(cs, la, lb)
}

// HashLeafBits is hash_leaf_bits_circuit: left's and right's bits, each
// padded to whole bytes and bit-reversed per byte, hashed with HashBits.
func (SHA256) HashLeafBits(cs r1cs.CS, left, right []boolean.Boolean) num.AllocatedNum {
	bits := make([]boolean.Boolean, 0, (len(left)+7)/8*8+(len(right)+7)/8*8)
	bits = appendReversed(bits, left)
	bits = appendReversed(bits, right)
	return SHA256{}.HashBits(cs, bits)
}

// HashBits is hash_circuit: SHA-256 of bits (namespace "hash"), the
// digest's bits reversed per byte, the first 254 packed into a number
// (namespace "pack_le", multipack.PackBits).
func (SHA256) HashBits(cs r1cs.CS, bits []boolean.Boolean) num.AllocatedNum {
	cs.Push(r1cs.N("hash"))
	be := sha256.Hash(cs, bits)
	cs.Pop()
	le := ReverseBitNumbering(be)
	cs.Push(r1cs.N("pack_le"))
	n := multipack.PackBits(cs, le[:multipack.Capacity])
	cs.Pop()
	return n
}

// Poseidon is filecoin-hashers' PoseidonFunction: the node hash of trees C
// and R_last.
type Poseidon struct{}

// HashMultiLeaf is the Poseidon hash of arity len(leaves).
func (Poseidon) HashMultiLeaf(cs r1cs.CS, leaves []num.AllocatedNum) (num.AllocatedNum, error) {
	return poseidon.HashMultiLeaf(cs, leaves)
}

// Hash2 is the arity-2 Poseidon hash of a and b.
func (Poseidon) Hash2(cs r1cs.CS, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	return poseidon.Hash2(cs, a, b)
}
