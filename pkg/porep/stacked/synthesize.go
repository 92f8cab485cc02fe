package stacked

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/gadget/constraint"
	"github.com/c2cluster/c2cluster/pkg/gadget/hashers"
	"github.com/c2cluster/c2cluster/pkg/gadget/multipack"
	"github.com/c2cluster/c2cluster/pkg/gadget/num"
	"github.com/c2cluster/c2cluster/pkg/gadget/por"
	"github.com/c2cluster/c2cluster/pkg/gadget/poseidon"
	"github.com/c2cluster/c2cluster/pkg/gadget/sha256"
	u64 "github.com/c2cluster/c2cluster/pkg/gadget/uint64"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Head is what every challenge reuses of the circuit's head.
type Head struct {
	// ReplicaIDBits are the replica id's 255 little-endian bits padded to
	// 256 and reversed within each byte (the labeling hash's byte order).
	ReplicaIDBits []boolean.Boolean
	// ReplicaID, CommD and CommR are the allocated public values (each
	// also an input), CommRLast and CommC the trees' roots.
	ReplicaID, CommD, CommR, CommRLast, CommC num.AllocatedNum
}

// Synthesize builds the whole circuit in cs under Namespace: Head, then
// Challenge(i) for every challenge.
func (c *Circuit) Synthesize(cs r1cs.CS) error {
	cs.Push(r1cs.N(Namespace))
	defer cs.Pop()
	h, err := c.Head(cs)
	if err != nil {
		return err
	}
	for i := range c.Challenges {
		if err := c.Challenge(cs, h, i); err != nil {
			return err
		}
	}
	return nil
}

// Head checks c against its shape and builds the head: the replica id
// ("replica_id", input "replica_id_input", bits "replica_id_bits"),
// comm_d and comm_r (each an aux and an input), comm_r_last, comm_c, and
// comm_r = Poseidon(comm_c, comm_r_last) ("H_comm_c_comm_r_last",
// "enforce comm_r = H(comm_c || comm_r_last)").
func (c *Circuit) Head(cs r1cs.CS) (*Head, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	alloc := func(name string, v fr.Element) num.AllocatedNum {
		cs.Push(r1cs.N(name))
		defer cs.Pop()
		return num.Alloc(cs, v)
	}
	inputize := func(name string, n num.AllocatedNum) {
		cs.Push(r1cs.N(name))
		defer cs.Pop()
		n.Inputize(cs)
	}
	h := &Head{}
	h.ReplicaID = alloc("replica_id", c.ReplicaID)
	inputize("replica_id_input", h.ReplicaID)
	cs.Push(r1cs.N("replica_id_bits"))
	h.ReplicaIDBits = hashers.ReverseBitNumbering(h.ReplicaID.ToBitsLE(cs))
	cs.Pop()
	h.CommD = alloc("comm_d", c.CommD)
	inputize("comm_d_input", h.CommD)
	h.CommR = alloc("comm_r", c.CommR)
	inputize("comm_r_input", h.CommR)
	h.CommRLast = alloc("comm_r_last", c.CommRLast)
	h.CommC = alloc("comm_c", c.CommC)

	cs.Push(r1cs.N("H_comm_c_comm_r_last"))
	hash, err := poseidon.Hash2(cs, h.CommC, h.CommRLast)
	cs.Pop()
	if err != nil {
		return nil, fmt.Errorf("stacked: comm_r hash: %w", err)
	}
	constraint.Equal(cs, r1cs.N("enforce comm_r = H(comm_c || comm_r_last)"), h.CommR, hash)
	return h, nil
}

// Challenge builds challenge i in the namespace "challenge_i", on h (made
// by Head on this circuit) and its own variables only: the data leaf and
// its inclusion in tree D; each parent's column, column hash and inclusion
// in tree C; the challenged node as 64 bits and a public input; the label
// of every layer (SHA-256 over the replica id, layer, node and parent
// labels, repeated to Shape.LabelParents); the replica node (data + last
// label) and its inclusion in tree R_last; the challenged column's hash and
// its inclusion in tree C.
func (c *Circuit) Challenge(cs r1cs.CS, h *Head, i int) error {
	if i < 0 || i >= len(c.Challenges) {
		return fmt.Errorf("%w: challenge %d outside 0..%d", ErrShape, i, len(c.Challenges)-1)
	}
	s := c.Shape
	ch := &c.Challenges[i]
	td, tc := TreeD(), TreeC(s)
	cs.Push(r1cs.Nf("challenge_%d", i))
	defer cs.Pop()

	cs.Push(r1cs.N("data_leaf"))
	dataLeaf := num.Alloc(cs, ch.DataLeaf)
	cs.Pop()
	if err := inclusion(cs, r1cs.N("comm_d_inclusion"), td, &ch.CommDPath, h.CommD, dataLeaf); err != nil {
		return err
	}

	drg, err := parents(cs, "drg_parent_%d_num", "drg_parent_%d_constraint", "drg_parent_%d_inclusion", tc, ch.DRGParents, h.CommC)
	if err != nil {
		return err
	}
	exp, err := parents(cs, "exp_parent_%d_num", "exp_parent_%d_constraint", "exp_parent_%d_inclusion", tc, ch.ExpParents, h.CommC)
	if err != nil {
		return err
	}

	cs.Push(r1cs.N("challenge"))
	node := u64.Alloc(cs, ch.Node)
	cs.Pop()
	cs.Push(r1cs.N("challenge input"))
	node.PackIntoInput(cs)
	cs.Pop()

	labels := make([]num.AllocatedNum, s.Layers)
	own := make([][]boolean.Boolean, 0, len(drg)+len(exp))
	expanded := make([][]boolean.Boolean, s.LabelParents)
	for layer := 1; layer <= s.Layers; layer++ {
		cs.Push(r1cs.Nf("labeling_%d", layer))
		own = own[:0]
		for _, col := range drg {
			cs.Push(r1cs.Nf("drg_parent_%d_bits", len(own)))
			own = append(own, hashers.ReverseBitNumbering(col[layer-1].ToBitsLE(cs)))
			cs.Pop()
		}
		if layer > 1 {
			for _, col := range exp {
				cs.Push(r1cs.Nf("exp_parent_%d_bits", len(own)))
				own = append(own, hashers.ReverseBitNumbering(col[layer-2].ToBitsLE(cs)))
				cs.Pop()
			}
		}
		for j := range expanded {
			expanded[j] = own[j%len(own)]
		}
		cs.Push(r1cs.N("create_label"))
		labels[layer-1] = createLabel(cs, h.ReplicaIDBits, expanded, uint32(layer), node)
		cs.Pop()
		cs.Pop()
	}

	cs.Push(r1cs.N("encode_node"))
	encoded := constraint.Encode(cs, labels[s.Layers-1], dataLeaf)
	cs.Pop()
	if err := inclusion(cs, r1cs.N("comm_r_last_data_inclusion"), tc, &ch.CommRLastPath, h.CommRLast, encoded); err != nil {
		return err
	}

	cs.Push(r1cs.N("c_x_column_hash"))
	colHash, err := poseidon.Hash(cs, labels)
	cs.Pop()
	if err != nil {
		return fmt.Errorf("stacked: column hash: %w", err)
	}
	return inclusion(cs, r1cs.N("c_x_inclusion"), tc, &ch.CommCPath, h.CommC, colHash)
}

// parents allocates each column ("…_num"/"column"/"column_num_row_j"),
// hashes it ("…_constraint") and proves the hash's inclusion in tree C
// under commC ("…_inclusion"), column by column. It returns the rows.
func parents(cs r1cs.CS, numNS, hashNS, inclNS string, tc por.Tree, cols []Column, commC num.AllocatedNum) ([][]num.AllocatedNum, error) {
	out := make([][]num.AllocatedNum, len(cols))
	for j := range cols {
		rows := make([]num.AllocatedNum, len(cols[j].Rows))
		cs.Push(r1cs.Nf(numNS, j))
		cs.Push(r1cs.N("column"))
		for r, v := range cols[j].Rows {
			cs.Push(r1cs.Nf("column_num_row_%d", r))
			rows[r] = num.Alloc(cs, v)
			cs.Pop()
		}
		cs.Pop()
		cs.Pop()
		cs.Push(r1cs.Nf(hashNS, j))
		hash, err := poseidon.Hash(cs, rows)
		cs.Pop()
		if err != nil {
			return nil, fmt.Errorf("stacked: column hash: %w", err)
		}
		if err := inclusion(cs, r1cs.Nf(inclNS, j), tc, &cols[j].Path, commC, hash); err != nil {
			return nil, err
		}
		out[j] = rows
	}
	return out, nil
}

// inclusion is a private PoR of leaf under root in the namespace name.
func inclusion(cs r1cs.CS, name r1cs.Name, t por.Tree, path *por.Path, root, leaf num.AllocatedNum) error {
	cs.Push(name)
	defer cs.Pop()
	c := por.Circuit{Tree: t, Value: por.Var(leaf), Path: *path, Root: por.Var(root), Private: true}
	_, err := c.Synthesize(cs)
	return err
}

// createLabel is create_label_circuit: SHA-256 ("hash") over the replica
// id bits padded to 256, the layer (32 bits) and node (64 bits) most
// significant first, zeros to 512 bits, then each parent padded to a
// multiple of 256 bits; the digest reversed within each byte, its first
// 254 bits packed into the label ("result_num").
func createLabel(cs r1cs.CS, replicaID []boolean.Boolean, parents [][]boolean.Boolean, layer uint32, node u64.UInt64) num.AllocatedNum {
	if len(replicaID) < 32 || len(replicaID) > 256 {
		panic(fmt.Sprintf("stacked: replica id of %d bits", len(replicaID)))
	}
	n := 512
	for _, p := range parents {
		n += (len(p) + 255) / 256 * 256
	}
	buf := make([]boolean.Boolean, 0, n)
	buf = append(buf, replicaID...)
	buf = padTo(buf, 256)
	for k := 31; k >= 0; k-- {
		buf = append(buf, boolean.Constant(layer>>k&1 == 1))
	}
	buf = append(buf, node.BitsBE()...)
	buf = padTo(buf, 512)
	for _, p := range parents {
		buf = append(buf, p...)
		buf = padTo(buf, (len(buf)+255)/256*256)
	}
	cs.Push(r1cs.N("hash"))
	digest := sha256.Hash(cs, buf)
	cs.Pop()
	bits := hashers.ReverseBitNumbering(digest)
	cs.Push(r1cs.N("result_num"))
	label := multipack.PackBits(cs, bits[:multipack.Capacity])
	cs.Pop()
	return label
}

// padTo appends constant false bits to b up to length n.
func padTo(b []boolean.Boolean, n int) []boolean.Boolean {
	for len(b) < n {
		b = append(b, boolean.Constant(false))
	}
	return b
}
