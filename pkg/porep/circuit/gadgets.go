package circuit

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	stdbits "github.com/consensys/gnark/std/math/bits"

	"github.com/c2cluster/c2cluster/pkg/poseidon"
	"github.com/c2cluster/c2cluster/pkg/sha254"
)

// The gadgets below are the pieces of the partition circuit. Bit vectors come
// in two orders: LE (bit k of the integer at index k, what ToBinary returns:
// path indexes, the challenge) and SHA order (the bits of a 32-byte
// little-endian encoding as SHA-256 reads them, byte 0 first and each byte's
// most significant bit first: labeling preimages and tree-D nodes, converted
// by pkg/sha254's FieldToBits, DomainToBits, DigestToField).

func init() { solver.RegisterHint(materializeHint) }

// materializeHint returns its input: it lets a long linear combination be
// replaced by one new wire (one constraint) before it is used in products.
func materializeHint(_ *big.Int, in, out []*big.Int) error {
	if len(in) != 1 || len(out) != 1 {
		return fmt.Errorf("materialize: want 1 input and 1 output, got %d and %d", len(in), len(out))
	}
	out[0].Set(in[0])
	return nil
}

// materialize returns a new wire constrained equal to v (one constraint).
func materialize(api frontend.API, v frontend.Variable) frontend.Variable {
	out, err := api.Compiler().NewHint(materializeHint, 1, v)
	if err != nil {
		panic(err) // builders without hints only; gnark's Compile turns the panic into an error
	}
	api.AssertIsEqual(out[0], v)
	return out[0]
}

// fieldBits decomposes v, known to be < 2^n (n < 254) for honest witnesses,
// into n LE bits: n boolean constraints and one packing constraint. The
// decomposition is unique; a value ≥ 2^n makes the circuit unsatisfiable.
func fieldBits(api frontend.API, v frontend.Variable, n int) []frontend.Variable {
	return stdbits.ToBinary(api, v, stdbits.WithNbDigits(n))
}

// indicators returns eq[p] = [index == p] for p < 2^len(idx), where idx are
// the LE bits (already boolean) of index. It costs 2^len(idx) − len(idx) − 1
// constraints: at each bit, the products with all but one prefix indicator
// (the last follows from Σ eq = 1).
func indicators(api frontend.API, idx []frontend.Variable) []frontend.Variable {
	eq := []frontend.Variable{1}
	for i, b := range idx {
		n := len(eq)
		next := make([]frontend.Variable, 2*n)
		if i == 0 {
			next[0], next[1] = api.Sub(1, b), b
			eq = next
			continue
		}
		var sum frontend.Variable = 0
		for t := 0; t < n; t++ {
			var hi frontend.Variable
			if t < n-1 {
				hi = api.Mul(eq[t], b)
				sum = api.Add(sum, hi)
			} else {
				hi = api.Sub(b, sum)
			}
			next[t] = api.Sub(eq[t], hi)
			next[t+n] = hi
		}
		eq = next
	}
	return eq
}

// insert returns elems with x inserted at position index (LE bits idx):
// the children of a Merkle node given the current node, its position among
// its siblings and the siblings in order. len(elems)+1 must be 2^len(idx).
//
// Output p is elems[p] + eq_p·(x − elems[p]) + lt_p·(elems[p−1] − elems[p])
// with lt_p = [index < p] = Σ_{q<p} eq_q; the first and last outputs need one
// product, the middle ones two, and the last output follows linearly from
// Σ out = x + Σ elems. Arity 2 costs 1 constraint, 4 costs 6, 8 costs 17.
func insert(api frontend.API, x frontend.Variable, idx []frontend.Variable, elems []frontend.Variable) []frontend.Variable {
	m := len(elems) + 1
	if m != 1<<len(idx) {
		panic(fmt.Sprintf("insert: %d elements and %d index bits", len(elems), len(idx)))
	}
	eq := indicators(api, idx)
	out := make([]frontend.Variable, m)
	var lt frontend.Variable = 0
	var sum frontend.Variable = 0
	for p := 0; p < m-1; p++ {
		r := api.Add(elems[p], api.Mul(eq[p], api.Sub(x, elems[p])))
		if p > 0 {
			r = api.Add(r, api.Mul(lt, api.Sub(elems[p-1], elems[p])))
		}
		out[p] = r
		sum = api.Add(sum, r)
		lt = api.Add(lt, eq[p])
	}
	total := api.Add(x, elems[0], elems[1:]...)
	out[m-1] = api.Sub(total, sum)
	return out
}

// The functions below are the gadgets of the partition circuit, one per row
// of the constraint report (see Breakdown): Define is written in terms of
// them only, so their isolated counts add up to the circuit's.

// replicaBits decomposes replica_id canonically (255 bits checked < r) into
// the SHA-order bits of its 32-byte encoding; done once per partition.
func replicaBits(api frontend.API, replicaID frontend.Variable) []frontend.Variable {
	return sha254.FieldToBits(api, replicaID)
}

// commRCheck enforces comm_r = Poseidon(comm_c, comm_r_last).
func commRCheck(api frontend.API, commC, commRLast, commR frontend.Variable) {
	api.AssertIsEqual(poseidon.HashCircuit(api, []frontend.Variable{commC, commRLast}), commR)
}

// pathIndexBits decomposes a packed path-index public input into its n LE
// bits (bellperson: the auth-path bits packed by multipack::pack_into_inputs).
func pathIndexBits(api frontend.API, input frontend.Variable, n int) []frontend.Variable {
	return fieldBits(api, input, n)
}

// dataLeafBits decomposes the challenged data node canonically into SHA
// order: the tree-D leaf as hashed.
func dataLeafBits(api frontend.API, leaf frontend.Variable) []frontend.Variable {
	return sha254.FieldToBits(api, leaf)
}

// treeDLevel climbs one level of tree D (binary, SHA-254) from the SHA-order
// bits of the current node. The sibling is decomposed (255 bits at the leaf
// level, where nodes are field elements, 254 above, where they are truncated
// digests), the pair is ordered bit by bit by the index bit b (one
// constraint per non-constant bit, the other child follows linearly), and
// SHA-256 of left ‖ right, truncated to 254 bits, is the parent.
func treeDLevel(api frontend.API, cur []frontend.Variable, b, sibling frontend.Variable, level int) []frontend.Variable {
	var sb []frontend.Variable
	if level == 0 {
		sb = sha254.FieldToBitsRelaxed(api, sibling)
	} else {
		sb = sha254.DomainToBits(api, sibling)
	}
	msg := make([]frontend.Variable, 512)
	for k := 0; k < 256; k++ {
		left := api.Select(b, sb[k], cur[k])
		right := api.Sub(api.Add(cur[k], sb[k]), left)
		// Both are cur[k] or sb[k], which are boolean: record it so that a
		// gadget asserting its input bits does not constrain them again.
		markBoolean(api, left)
		markBoolean(api, right)
		msg[k], msg[256+k] = left, right
	}
	return sha254.TruncateBits(sha254.Circuit(api, msg))
}

func markBoolean(api frontend.API, v frontend.Variable) {
	if _, ok := api.Compiler().ConstantValue(v); !ok {
		api.Compiler().MarkBoolean(v)
	}
}

// treeDRootCheck enforces that the root bits are comm_d.
func treeDRootCheck(api frontend.API, root []frontend.Variable, commD frontend.Variable) {
	api.AssertIsEqual(sha254.DigestToField(api, root), commD)
}

// columnHash is the column hash: Poseidon of the column's labels (arity =
// layers).
func columnHash(api frontend.API, rows []frontend.Variable) frontend.Variable {
	return poseidon.HashCircuit(api, rows)
}

// poseidonLevel climbs one level of tree C or R_last: the current node is
// inserted among the level's siblings at the position given by the index
// bits, and the Poseidon hash of the children (arity = the level's, Merkle
// domain tag) is the parent.
func poseidonLevel(api frontend.API, cur frontend.Variable, idx, siblings []frontend.Variable) frontend.Variable {
	return poseidon.HashCircuit(api, insert(api, cur, idx, siblings))
}

// rootCheck enforces that a computed root equals the expected one.
func rootCheck(api frontend.API, computed, root frontend.Variable) {
	api.AssertIsEqual(computed, root)
}

// challengeBits decomposes the challenge public input into 64 LE bits
// (bellperson's UInt64 of the challenged node); they enter every label.
func challengeBits(api frontend.API, challenge frontend.Variable) []frontend.Variable {
	return fieldBits(api, challenge, 64)
}

// parentLabelBits decomposes a parent's label (a truncated digest, < 2^254)
// into the SHA-order bits of its 32-byte encoding.
func parentLabelBits(api frontend.API, l frontend.Variable) []frontend.Variable {
	return sha254.DomainToBits(api, l)
}

// label computes one SDR label: SHA-256 over the labeling preimage
//
//	replica_id (32 bytes LE) ‖ layer (u32 BE) ‖ node (u64 BE) ‖ 20 zero bytes ‖
//	parent labels (32 bytes LE each, one per preimage slot)
//
// truncated to 254 bits and packed into one wire (one constraint). replica
// is in SHA order, node holds the 64 LE bits of the node index, parents the
// SHA-order bits of each slot's parent label.
func label(api frontend.API, replica []frontend.Variable, layer int, node []frontend.Variable, parents [][]frontend.Variable) frontend.Variable {
	msg := make([]frontend.Variable, 0, 512+256*len(parents))
	msg = append(msg, replica...)
	for i := 31; i >= 0; i-- {
		msg = append(msg, (layer>>i)&1)
	}
	for i := 63; i >= 0; i-- {
		msg = append(msg, node[i])
	}
	for len(msg) < 512 {
		msg = append(msg, 0)
	}
	for _, p := range parents {
		msg = append(msg, p...)
	}
	return materialize(api, sha254.DigestToField(api, sha254.Circuit(api, msg)))
}
