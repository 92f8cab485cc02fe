package sha254

import (
	"fmt"

	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/math/bits"
)

// Circuit is SHA-256 of msg as R1CS constraints. msg holds the message bits
// in SHA's order (byte 0's most significant bit first); its length must be a
// multiple of 8. The padding (a one bit, zeros, the 64-bit big-endian bit
// length) is appended as constants. The result is the 256 digest bits in the
// same order (digest byte 0's most significant bit first).
//
// Every message bit is asserted boolean; gnark adds no constraint for bits it
// already knows to be boolean (outputs of ToBinary, Xor/And/Or,
// AssertIsBoolean, or bits marked with api.Compiler().MarkBoolean) or for
// constants, which are folded: a constant block costs nothing in the message
// schedule, and the first block's rounds are cheaper because the initial
// state is constant. A 512-bit block with variable message bits and a
// variable chaining state costs about 26,100 constraints (see
// docs/hashes.md for measured counts).
//
// Circuit panics if len(msg) is not a multiple of 8 or a constant message
// bit is not 0 or 1 (inside a circuit's Define, gnark's Compile turns that
// into an error). It emits no commitment and no lookup; it uses one solver
// hint (the bits of each 32-bit sum), registered with gnark's solver when the
// package is imported.
func Circuit(api frontend.API, msg []frontend.Variable) []frontend.Variable {
	if len(msg)%8 != 0 {
		panic(fmt.Errorf("sha254: message of %d bits is not a whole number of bytes", len(msg)))
	}
	g := &gadget{api: api}

	padded := (len(msg) + 1 + 64 + 511) / 512 * 512
	m := make([]bit, 0, padded)
	for i, v := range msg {
		m = append(m, g.inputBit(i, v))
	}
	m = append(m, cbit(1))
	for len(m)%512 != 448 {
		m = append(m, cbit(0))
	}
	n := uint64(len(msg))
	for i := 63; i >= 0; i-- {
		m = append(m, cbit(int(n>>i)&1))
	}

	var state [8]*word
	for i, x := range initialState {
		state[i] = constWord(x)
	}
	for off := 0; off < len(m); off += 512 {
		var block [16]*word
		for j := range block {
			w := &word{}
			for i := range 32 {
				w.b[i] = m[off+32*j+31-i]
			}
			block[j] = w
		}
		state = g.compress(state, block)
	}
	g.eq.flush(api)

	out := make([]frontend.Variable, 256)
	for j, w := range state {
		for i := range 32 {
			out[32*j+31-i] = w.b[i].v
		}
	}
	return out
}

func (g *gadget) inputBit(i int, v frontend.Variable) bit {
	if c, ok := g.api.Compiler().ConstantValue(v); ok {
		if !c.IsUint64() || c.Uint64() > 1 {
			panic(fmt.Errorf("sha254: message bit %d is the constant %s, not 0 or 1", i, c))
		}
		return cbit(int(c.Uint64()))
	}
	g.api.AssertIsBoolean(v)
	return vbit(v)
}

// shaOrder turns the little-endian bits of a 32-byte little-endian encoding
// into the order SHA-256 consumes those bytes in: byte 0 first, each byte's
// most significant bit first. le may be shorter than 256; missing high bits
// are zero.
func shaOrder(le []frontend.Variable) []frontend.Variable {
	out := make([]frontend.Variable, 256)
	for k := range 256 {
		byteIdx, bitIdx := k/8, 7-k%8
		if i := 8*byteIdx + bitIdx; i < len(le) {
			out[k] = le[i]
		} else {
			out[k] = 0
		}
	}
	return out
}

// FieldToBits returns the 256 bits SHA-256 consumes for the 32-byte
// little-endian encoding of v (as rust-fil-proofs hashes a field element):
// byte 0 first, most significant bit first; the top bit of byte 31 is the
// constant 0. The decomposition is strict, like bellperson's
// AllocatedNum::to_bits_le_strict: the bits must encode the canonical value
// (< r), so v has exactly one satisfying assignment. It costs 255 boolean
// constraints, one packing constraint and the comparison with r − 1 (about
// 510 constraints in all, measured in docs/hashes.md).
func FieldToBits(api frontend.API, v frontend.Variable) []frontend.Variable {
	return shaOrder(bits.ToBinary(api, v))
}

// FieldToBitsRelaxed is FieldToBits without the comparison with r − 1, like
// bellperson's AllocatedNum::to_bits_le (what rust-fil-proofs' PoRep circuit
// uses on parent labels): 255 boolean constraints and one packing constraint.
// When v + r < 2^255 the bits of v + r also satisfy it, so a prover may choose
// between the two encodings; use it only where that freedom is harmless or
// where compatibility with bellperson's constraint system matters.
func FieldToBitsRelaxed(api frontend.API, v frontend.Variable) []frontend.Variable {
	return shaOrder(bits.ToBinary(api, v, bits.WithNbDigits(255), bits.OmitModulusCheck()))
}

// DomainToBits is FieldToBits for a value below 2^254, such as a SHA-254
// digest: 254 boolean constraints and one packing constraint, unique because
// 2^254 < r; the two top bits of byte 31 are constants. The circuit is
// unsatisfiable when v ≥ 2^254.
func DomainToBits(api frontend.API, v frontend.Variable) []frontend.Variable {
	return shaOrder(bits.ToBinary(api, v, bits.WithNbDigits(254)))
}

// TruncateBits returns a copy of 256 digest bits in SHA order with the two
// most significant bits of byte 31 (positions 248 and 249) set to the
// constant 0: the SHA-order bits of the SHA-254 digest, ready to be hashed
// again (a tree-D parent) without a decomposition.
func TruncateBits(digest []frontend.Variable) []frontend.Variable {
	if len(digest) != 256 {
		panic(fmt.Errorf("sha254: digest of %d bits, want 256", len(digest)))
	}
	out := append([]frontend.Variable(nil), digest...)
	out[248], out[249] = 0, 0
	return out
}

// DigestToField turns 256 digest bits in SHA order into the SHA-254 field
// element (rust-fil-proofs' Sha256Function::hash_circuit: the digest read as
// little-endian bytes, the two top bits dropped). It is a linear combination:
// no constraint beyond asserting the bits boolean, which is free for
// Circuit's outputs.
func DigestToField(api frontend.API, digest []frontend.Variable) frontend.Variable {
	if len(digest) != 256 {
		panic(fmt.Errorf("sha254: digest of %d bits, want 256", len(digest)))
	}
	terms := make([]frontend.Variable, 0, 254)
	for k, b := range digest {
		byteIdx, bitIdx := k/8, 7-k%8
		i := 8*byteIdx + bitIdx
		if i >= 254 {
			continue
		}
		api.AssertIsBoolean(b)
		terms = append(terms, api.Mul(b, pow2(i)))
	}
	return sum(api, terms)
}
