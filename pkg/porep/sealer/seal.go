package sealer

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/graph"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

// MaxInMemoryNodes bounds the sectors Seal accepts (8 MiB = 2^18 nodes needs
// about 0.3 GB; 512 MiB would need ~2 GB of labels and trees).
const MaxInMemoryNodes = 1 << 24

// Identity is what a replica id is derived from, plus the ticket it binds.
type Identity struct {
	ProverID [32]byte
	SectorID uint64
	Ticket   [32]byte
}

// Sector is a sealed sector held in memory. It implements Source.
type Sector struct {
	Shape     *porep.Shape
	Graph     *graph.Graph
	Identity  Identity
	Data      []porep.Domain // unsealed nodes
	Replica   []porep.Domain // sealed nodes
	Labels    Labels
	ReplicaID porep.Domain
	TreeD     *merkle.Tree
	TreeC     *merkle.Tree
	TreeR     *merkle.Tree
	CommD     porep.Domain
	CommC     porep.Domain
	CommRLast porep.Domain
	CommR     porep.Domain
}

// Progress writes "stage" lines with elapsed time to w (nil: silent).
type Progress struct {
	W     io.Writer
	start time.Time
}

func (p *Progress) printf(format string, a ...any) {
	if p == nil || p.W == nil {
		return
	}
	if p.start.IsZero() {
		p.start = time.Now()
	}
	fmt.Fprintf(p.W, "[%8.3fs] "+format+"\n", append([]any{time.Since(p.start).Seconds()}, a...)...)
}

// Seal runs pre-commit for data (len = shape nodes, each node a canonical
// field element, as fr32-padded sector data is).
func Seal(ctx context.Context, s *porep.Shape, data []porep.Domain, id Identity, progress *Progress) (*Sector, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Nodes > MaxInMemoryNodes {
		return nil, fmt.Errorf("sealer: shape %q has %d nodes, more than the in-memory limit %d", s.Name, s.Nodes, MaxInMemoryNodes)
	}
	if uint64(len(data)) != s.Nodes {
		return nil, fmt.Errorf("sealer: %d data nodes, shape %q has %d", len(data), s.Name, s.Nodes)
	}
	for i := range data {
		if _, err := data[i].Element(); err != nil {
			return nil, fmt.Errorf("sealer: data node %d: %w", i, err)
		}
	}
	progress.printf("seal %s: %d nodes, %d layers", s.Name, s.Nodes, s.Layers)
	g, err := graph.For(s)
	if err != nil {
		return nil, err
	}
	progress.printf("graph ready")
	sec := &Sector{Shape: s, Graph: g, Identity: id, Data: data}

	if sec.TreeD, err = merkle.Build(ctx, porep.TreeShape{Base: 2}, data, merkle.SHA254{}); err != nil {
		return nil, fmt.Errorf("sealer: tree D: %w", err)
	}
	sec.CommD = sec.TreeD.Root()
	sec.ReplicaID = porep.ReplicaID(id.ProverID, id.SectorID, id.Ticket, sec.CommD, s.PoRepID())
	progress.printf("tree D: comm_d %s, replica id %s", sec.CommD, sec.ReplicaID)

	sec.Labels, err = ComputeLabels(ctx, s, g, sec.ReplicaID, func(l int) {
		progress.printf("labels: layer %d/%d", l, s.Layers)
	})
	if err != nil {
		return nil, err
	}

	columns, err := columnHashes(ctx, s, sec, s.Nodes, func(i uint64) uint64 { return i })
	if err != nil {
		return nil, fmt.Errorf("sealer: column hashes: %w", err)
	}
	progress.printf("column hashes")
	if sec.TreeC, err = merkle.Build(ctx, s.Tree, columns, merkle.Poseidon{}); err != nil {
		return nil, fmt.Errorf("sealer: tree C: %w", err)
	}
	sec.CommC = sec.TreeC.Root()
	progress.printf("tree C: comm_c %s", sec.CommC)

	last := sec.Labels[s.Layers-1]
	sec.Replica = make([]porep.Domain, s.Nodes)
	for n := range s.Nodes {
		if sec.Replica[n], err = porep.Encode(data[n], last[n]); err != nil {
			return nil, fmt.Errorf("sealer: encode node %d: %w", n, err)
		}
	}
	if sec.TreeR, err = merkle.Build(ctx, s.Tree, sec.Replica, merkle.Poseidon{}); err != nil {
		return nil, fmt.Errorf("sealer: tree R_last: %w", err)
	}
	sec.CommRLast = sec.TreeR.Root()
	if sec.CommR, err = (merkle.Poseidon{}).HashNode([]porep.Domain{sec.CommC, sec.CommRLast}); err != nil {
		return nil, fmt.Errorf("sealer: comm_r: %w", err)
	}
	progress.printf("tree R_last: comm_r_last %s, comm_r %s", sec.CommRLast, sec.CommR)
	return sec, nil
}

// columnHashes returns the tree-C leaves of count nodes, node(i) for i <
// count: Poseidon over the node's label in every layer, hashed on all cores.
func columnHashes(ctx context.Context, s *porep.Shape, src Source, count uint64, node func(i uint64) uint64) ([]porep.Domain, error) {
	out := make([]porep.Domain, count)
	err := parallel(ctx, count, func(lo, hi uint64) error {
		rows := make([]porep.Domain, s.Layers)
		for i := lo; i < hi; i++ {
			n := node(i)
			for l := range rows {
				rows[l] = src.Label(l+1, n)
			}
			h, err := merkle.Poseidon{}.HashNode(rows)
			if err != nil {
				return fmt.Errorf("column %d: %w", n, err)
			}
			out[i] = h
		}
		return nil
	})
	return out, err
}

// parallel runs f over [0, n) split across GOMAXPROCS goroutines.
func parallel(ctx context.Context, n uint64, f func(lo, hi uint64) error) error {
	workers := uint64(runtime.GOMAXPROCS(0))
	chunk := (n + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			continue
		}
		wg.Go(func() {
			if err := ctx.Err(); err != nil {
				errs[w] = err
				return
			}
			errs[w] = f(lo, hi)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Label implements Source.
func (sec *Sector) Label(layer int, node uint64) porep.Domain { return sec.Labels[layer-1][node] }

// DataProof implements Source.
func (sec *Sector) DataProof(node uint64) (*merkle.Proof, error) { return sec.TreeD.Prove(node) }

// ColumnProof implements Source.
func (sec *Sector) ColumnProof(node uint64) (*merkle.Proof, error) { return sec.TreeC.Prove(node) }

// ReplicaProof implements Source.
func (sec *Sector) ReplicaProof(node uint64) (*merkle.Proof, error) { return sec.TreeR.Prove(node) }

// Commitments implements Source.
func (sec *Sector) Commitments() (commD, commR, replicaID porep.Domain) {
	return sec.CommD, sec.CommR, sec.ReplicaID
}
