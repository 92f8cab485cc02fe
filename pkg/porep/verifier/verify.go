package verifier

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// Identity, when given to Options, lets the verifier also check the replica
// id derivation (C1 carries only the replica id, not the prover and sector).
type Identity struct {
	ProverID [32]byte
	SectorID uint64
}

// Options tune the checks.
type Options struct {
	// Identity, if set, checks replica_id = ReplicaID(prover, sector, ticket, comm_d, porep_id).
	Identity *Identity
}

type challengeCtx struct {
	k, i   int
	node   uint64
	proof  *c1.ChallengeProof
	dproof *merkle.Proof
	rproof *merkle.Proof
	cx     *merkle.Proof
	drg    []*merkle.Proof
	exp    []*merkle.Proof
}

func (c *challengeCtx) fail(check Check, format string, a ...any) *Error {
	return &Error{Partition: c.k, Challenge: c.i, Node: c.node, Check: check, Detail: fmt.Sprintf(format, a...)}
}

// CheckStructure is the cheap pre-flight validation of a parsed document
// (out.Shape set, as c1.Parse leaves it). It derives the challenges and graph
// parents and checks every index, root and parent list for consistency, but
// hashes no Merkle path, column or label.
func CheckStructure(out *c1.Output, opts Options) error {
	_, err := structure(out, opts)
	return err
}

func structure(out *c1.Output, opts Options) ([]*challengeCtx, error) {
	if out.Shape == nil {
		return nil, &Error{Partition: -1, Challenge: -1, Check: CheckShape, Detail: "document has no resolved shape (parse it with c1.Parse)"}
	}
	if err := out.Validate(); err != nil {
		return nil, &Error{Partition: -1, Challenge: -1, Check: CheckShape, Detail: err.Error()}
	}
	s := out.Shape
	if opts.Identity != nil {
		want := porep.ReplicaID(opts.Identity.ProverID, opts.Identity.SectorID, out.Ticket, out.CommD, s.PoRepID())
		if want != out.ReplicaID {
			return nil, &Error{Partition: -1, Challenge: -1, Check: CheckReplicaID, Detail: fmt.Sprintf("replica_id %s, derivation gives %s", out.ReplicaID, want)}
		}
	}
	g, err := graph.For(s)
	if err != nil {
		return nil, &Error{Partition: -1, Challenge: -1, Check: CheckShape, Detail: err.Error()}
	}
	parents := make([]uint32, g.Degree())
	var all []*challengeCtx
	for k, part := range out.VanillaProofs.Partitions() {
		challenges := porep.Challenges(s, out.ReplicaID, out.Seed, k)
		var commC, commRLast porep.Domain
		for i := range part {
			c := &challengeCtx{k: k, i: i, node: challenges[i], proof: &part[i]}
			if err := c.structure(s, g, out, parents); err != nil {
				return nil, err
			}
			if i == 0 {
				commC, commRLast = c.cx.Root, c.rproof.Root
			} else {
				if c.cx.Root != commC {
					return nil, c.fail(CheckCommCRoot, "tree C root %s differs from challenge 0's %s", c.cx.Root, commC)
				}
				if c.rproof.Root != commRLast {
					return nil, c.fail(CheckCommRLastRoot, "tree R_last root %s differs from challenge 0's %s", c.rproof.Root, commRLast)
				}
			}
			all = append(all, c)
		}
	}
	return all, nil
}

func (c *challengeCtx) structure(s *porep.Shape, g *graph.Graph, out *c1.Output, parents []uint32) error {
	p := c.proof
	var err error
	// Validate already checked that every proof converts.
	if c.dproof, err = p.CommDProofs.Proof(); err != nil {
		return c.fail(CheckShape, "comm_d_proofs: %v", err)
	}
	if c.rproof, err = p.CommRLastProof.Proof(); err != nil {
		return c.fail(CheckShape, "comm_r_last_proof: %v", err)
	}
	if got := c.dproof.PathIndex(porep.TreeShape{Base: 2}); got != c.node {
		return c.fail(CheckChallenge, "comm_d_proofs opens node %d, challenge is node %d", got, c.node)
	}
	if c.dproof.Root != out.CommD {
		return c.fail(CheckCommDRoot, "tree D root %s, comm_d %s", c.dproof.Root, out.CommD)
	}
	if got := c.rproof.PathIndex(s.Tree); got != c.node {
		return c.fail(CheckChallenge, "comm_r_last_proof opens node %d, challenge is node %d", got, c.node)
	}
	rc := &p.ReplicaColumnProofs
	if uint64(rc.CX.Column.Index) != c.node {
		return c.fail(CheckChallenge, "c_x column index %d, challenge is node %d", rc.CX.Column.Index, c.node)
	}
	column := func(name string, cp *c1.ColumnProof, want uint64) (*merkle.Proof, error) {
		mp, err := cp.InclusionProof.Proof()
		if err != nil {
			return nil, c.fail(CheckShape, "%s: %v", name, err)
		}
		if uint64(cp.Column.Index) != want {
			return nil, c.fail(CheckParents, "%s column index %d, graph parent is node %d", name, cp.Column.Index, want)
		}
		if got := mp.PathIndex(s.Tree); got != want {
			return nil, c.fail(CheckColumnIndex, "%s inclusion proof opens node %d, column is node %d", name, got, want)
		}
		return mp, nil
	}
	if c.cx, err = column("c_x", &rc.CX, c.node); err != nil {
		return err
	}
	g.Parents(c.node, parents)
	c.drg = make([]*merkle.Proof, s.BaseDegree)
	for j := range rc.DrgParents {
		if c.drg[j], err = column(fmt.Sprintf("drg_parents[%d]", j), &rc.DrgParents[j], uint64(parents[j])); err != nil {
			return err
		}
	}
	c.exp = make([]*merkle.Proof, s.ExpDegree)
	for j := range rc.ExpParents {
		if c.exp[j], err = column(fmt.Sprintf("exp_parents[%d]", j), &rc.ExpParents[j], uint64(parents[s.BaseDegree+j])); err != nil {
			return err
		}
	}
	for _, mp := range append(append([]*merkle.Proof{}, c.drg...), c.exp...) {
		if mp.Root != c.cx.Root {
			return c.fail(CheckCommCRoot, "a parent column's tree C root %s differs from c_x's %s", mp.Root, c.cx.Root)
		}
	}
	// Labeling proofs: index, node and parents equal the opened columns.
	own := make([]porep.Domain, 0, s.Degree())
	full := make([]porep.Domain, s.LabelParents)
	for l := 1; l <= s.Layers; l++ {
		lp := &p.LabelingProofs[l-1]
		if lp.LayerIndex != uint32(l) || lp.Node != c.node {
			return c.fail(CheckLabelIndex, "labeling_proofs[%d] is for layer %d node %d, want layer %d node %d", l-1, lp.LayerIndex, lp.Node, l, c.node)
		}
		own = own[:0]
		for j := range rc.DrgParents {
			own = append(own, rc.DrgParents[j].Column.Rows[l-1])
		}
		if l > 1 {
			for j := range rc.ExpParents {
				own = append(own, rc.ExpParents[j].Column.Rows[l-2])
			}
		}
		porep.RepeatParents(full, own)
		for j := range full {
			if lp.Parents[j] != full[j] {
				return c.fail(CheckLabelParents, "labeling_proofs[%d].parents[%d] is %s, the opened parent columns give %s", l-1, j, lp.Parents[j], full[j])
			}
		}
	}
	ep := &p.EncodingProof
	if ep.LayerIndex != uint32(s.Layers) || ep.Node != c.node {
		return c.fail(CheckLabelIndex, "encoding_proof is for layer %d node %d, want layer %d node %d", ep.LayerIndex, ep.Node, s.Layers, c.node)
	}
	lastParents := p.LabelingProofs[s.Layers-1].Parents
	for j := range ep.Parents {
		if ep.Parents[j] != lastParents[j] {
			return c.fail(CheckLabelParents, "encoding_proof.parents[%d] differs from the last layer's labeling parents", j)
		}
	}
	return nil
}

// Verify runs CheckStructure and then every hash check, challenges in
// parallel. The error returned is that of the first failing challenge in
// (partition, challenge) order.
func Verify(ctx context.Context, out *c1.Output, opts Options) error {
	all, err := structure(out, opts)
	if err != nil {
		return err
	}
	s := out.Shape
	// comm_r composition, once per partition as verify_all_partitions does.
	for _, c := range all {
		if c.i != 0 {
			continue
		}
		commR, err := merkle.Poseidon{}.HashNode([]porep.Domain{c.cx.Root, c.rproof.Root})
		if err != nil {
			return c.fail(CheckFieldElement, "comm_c or comm_r_last: %v", err)
		}
		if commR != out.CommR {
			return c.fail(CheckCommR, "Poseidon(comm_c %s, comm_r_last %s) = %s, document has %s", c.cx.Root, c.rproof.Root, commR, out.CommR)
		}
	}
	errs := make([]error, len(all))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for idx := range next {
				errs[idx] = all[idx].hashes(s, out)
			}
		})
	}
	for idx := range all {
		if ctx.Err() != nil {
			break
		}
		next <- idx
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *challengeCtx) hashes(s *porep.Shape, out *c1.Output) error {
	p := c.proof
	if err := c.dproof.Verify(merkle.SHA254{}); err != nil {
		return c.fail(CheckCommDPath, "%v", err)
	}
	if err := c.rproof.Verify(merkle.Poseidon{}); err != nil {
		return c.fail(CheckCommRLastPath, "%v", err)
	}
	rc := &p.ReplicaColumnProofs
	check := func(name string, cp *c1.ColumnProof, mp *merkle.Proof) error {
		h, err := merkle.Poseidon{}.HashNode(cp.Column.Rows)
		if err != nil {
			return c.fail(CheckFieldElement, "%s rows: %v", name, err)
		}
		if h != mp.Leaf {
			return c.fail(CheckColumnPath, "%s column hash %s ≠ inclusion proof leaf %s", name, h, mp.Leaf)
		}
		if err := mp.Verify(merkle.Poseidon{}); err != nil {
			return c.fail(CheckColumnPath, "%s: %v", name, err)
		}
		return nil
	}
	if err := check("c_x", &rc.CX, c.cx); err != nil {
		return err
	}
	for j := range rc.DrgParents {
		if err := check(fmt.Sprintf("drg_parents[%d]", j), &rc.DrgParents[j], c.drg[j]); err != nil {
			return err
		}
	}
	for j := range rc.ExpParents {
		if err := check(fmt.Sprintf("exp_parents[%d]", j), &rc.ExpParents[j], c.exp[j]); err != nil {
			return err
		}
	}
	for l := 1; l <= s.Layers; l++ {
		lp := &p.LabelingProofs[l-1]
		got := porep.LabelHash(out.ReplicaID, uint32(l), c.node, lp.Parents)
		if want := rc.CX.Column.Rows[l-1]; got != want {
			return c.fail(CheckLabel, "layer %d label recomputes to %s, column has %s", l, got, want)
		}
	}
	key := porep.LabelHash(out.ReplicaID, p.EncodingProof.LayerIndex, c.node, p.EncodingProof.Parents)
	enc, err := porep.Encode(c.dproof.Leaf, key)
	if err != nil {
		return c.fail(CheckFieldElement, "%v", err)
	}
	if enc != c.rproof.Leaf {
		return c.fail(CheckEncoding, "data %s + key %s = %s, replica node is %s", c.dproof.Leaf, key, enc, c.rproof.Leaf)
	}
	return nil
}
