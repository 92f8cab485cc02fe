package sealer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
)

// Labels holds the SDR labels of every layer: Labels[l][n] is the label of
// node n in layer l+1.
type Labels [][]porep.Domain

// labeler computes labels one node at a time with reusable buffers.
type labeler struct {
	s       *porep.Shape
	g       *graph.Graph
	rid     porep.Domain
	h       hash.Hash
	parents []uint32
	data    []byte // LabelParents × 32 bytes
}

func newLabeler(s *porep.Shape, g *graph.Graph, replicaID porep.Domain) *labeler {
	return &labeler{
		s: s, g: g, rid: replicaID, h: sha256.New(),
		parents: make([]uint32, g.Degree()),
		data:    make([]byte, s.LabelParents*porep.NodeSize),
	}
}

// label computes the label of node in layer (1-based) from the current
// layer's labels (cur, filled up to node-1) and the previous layer's (prev,
// nil for layer 1), as create_label / create_label_exp.
func (lb *labeler) label(layer int, node uint64, cur, prev []porep.Domain) porep.Domain {
	lb.h.Reset()
	p := porep.LabelPrefix(lb.rid, uint32(layer), node)
	lb.h.Write(p[:])
	if node > 0 {
		lb.g.Parents(node, lb.parents)
		n := lb.s.BaseDegree
		if layer > 1 {
			n = lb.s.Degree()
		}
		for i := range lb.s.LabelParents {
			k := i % n
			var src *porep.Domain
			if k < lb.s.BaseDegree {
				src = &cur[lb.parents[k]]
			} else {
				src = &prev[lb.parents[k]]
			}
			copy(lb.data[i*porep.NodeSize:], src[:])
		}
		lb.h.Write(lb.data)
	}
	var d porep.Domain
	lb.h.Sum(d[:0])
	d.TruncateTo254()
	return d
}

// ComputeLabels runs SDR labeling for all layers of a shape. progress, if not
// nil, is called after each layer.
func ComputeLabels(ctx context.Context, s *porep.Shape, g *graph.Graph, replicaID porep.Domain, progress func(layer int)) (Labels, error) {
	if g.Nodes() != s.Nodes || g.BaseDegree() != s.BaseDegree || g.ExpDegree() != s.ExpDegree {
		return nil, fmt.Errorf("sealer: graph (%d nodes, degrees %d/%d) does not match shape %q", g.Nodes(), g.BaseDegree(), g.ExpDegree(), s.Name)
	}
	lb := newLabeler(s, g, replicaID)
	labels := make(Labels, s.Layers)
	for l := 1; l <= s.Layers; l++ {
		cur := make([]porep.Domain, s.Nodes)
		var prev []porep.Domain
		if l > 1 {
			prev = labels[l-2]
		}
		for n := range s.Nodes {
			if n&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("sealer: labeling layer %d: %w", l, err)
				}
			}
			cur[n] = lb.label(l, n, cur, prev)
		}
		labels[l-1] = cur
		if progress != nil {
			progress(l)
		}
	}
	return labels, nil
}
