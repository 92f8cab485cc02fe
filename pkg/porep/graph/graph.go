package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"golang.org/x/crypto/blake2b"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Domain-separation tags of storage-proofs-core crypto/mod.rs.
const (
	drSampleDST = "Filecoin_DRSample"
	feistelDST  = "Filecoin_Feistel"
)

// feistelRounds is FEISTEL_ROUNDS.
const feistelRounds = 3

// CacheMaxNodes is the largest sector (in nodes) whose parents For
// precomputes; larger graphs compute parents on demand.
const CacheMaxNodes = 1 << 20

// Graph is the stacked DRG of one shape. It is safe for concurrent use.
type Graph struct {
	nodes      uint64
	baseDegree int
	expDegree  int
	api        porep.APIVersion
	drgSeed    [28]byte
	keys       [4]uint64
	leftMask   uint64
	rightMask  uint64
	halfBits   uint

	cache []uint32 // nodes × (base+exp) when precomputed
}

// Params are the inputs of a graph; Shape supplies them in For.
type Params struct {
	Nodes      uint64
	BaseDegree int
	ExpDegree  int
	PoRepID    [32]byte
	APIVersion porep.APIVersion
}

// New builds a graph without precomputing parents.
func New(p Params) (*Graph, error) {
	if p.Nodes < 2 || p.Nodes > 1<<32 {
		return nil, fmt.Errorf("graph: nodes %d outside 2..2^32", p.Nodes)
	}
	if p.BaseDegree < 2 {
		return nil, fmt.Errorf("graph: base degree %d < 2", p.BaseDegree)
	}
	if p.ExpDegree < 0 {
		return nil, fmt.Errorf("graph: expander degree %d < 0", p.ExpDegree)
	}
	if p.Nodes*uint64(p.BaseDegree-1) > 1<<54 {
		return nil, fmt.Errorf("graph: %d metagraph nodes exceed 2^54", p.Nodes*uint64(p.BaseDegree-1))
	}
	g := &Graph{nodes: p.Nodes, baseDegree: p.BaseDegree, expDegree: p.ExpDegree, api: p.APIVersion}
	seed := domainSeed(drSampleDST, p.PoRepID)
	copy(g.drgSeed[:], seed[:28])
	fseed := domainSeed(feistelDST, p.PoRepID)
	for i := range g.keys {
		g.keys[i] = binary.LittleEndian.Uint64(fseed[8*i:])
	}
	// feistel::precompute(expansion_degree * nodes)
	n := uint64(p.ExpDegree) * p.Nodes
	next, log4 := uint64(4), uint(1)
	for next < n {
		next *= 4
		log4++
	}
	g.leftMask = ((1 << log4) - 1) << log4
	g.rightMask = (1 << log4) - 1
	g.halfBits = log4
	return g, nil
}

// domainSeed is derive_porep_domain_seed: SHA-256(tag ‖ porep_id).
func domainSeed(tag string, porepID [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(tag))
	h.Write(porepID[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

var (
	cacheMu sync.Mutex
	cached  = map[string]*Graph{}
)

// For returns the graph of a shape, built once per shape name and cached for
// the life of the process; small graphs have every node's parents precomputed.
func For(s *porep.Shape) (*Graph, error) {
	key := fmt.Sprintf("%s/%x/%d/%d/%d/%d", s.Name, s.PoRepID(), s.Nodes, s.BaseDegree, s.ExpDegree, s.APIVersion)
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if g, ok := cached[key]; ok {
		return g, nil
	}
	g, err := New(Params{Nodes: s.Nodes, BaseDegree: s.BaseDegree, ExpDegree: s.ExpDegree, PoRepID: s.PoRepID(), APIVersion: s.APIVersion})
	if err != nil {
		return nil, fmt.Errorf("graph for shape %q: %w", s.Name, err)
	}
	if s.Nodes <= CacheMaxNodes {
		g.precompute()
	}
	cached[key] = g
	return g, nil
}

func (g *Graph) precompute() {
	deg := g.Degree()
	cache := make([]uint32, g.nodes*uint64(deg))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	chunk := (g.nodes + uint64(workers) - 1) / uint64(workers)
	for w := range uint64(workers) {
		lo, hi := w*chunk, min((w+1)*chunk, g.nodes)
		if lo >= hi {
			continue
		}
		wg.Go(func() {
			for n := lo; n < hi; n++ {
				g.compute(n, cache[n*uint64(deg):(n+1)*uint64(deg)])
			}
		})
	}
	wg.Wait()
	g.cache = cache
}

// Nodes is the number of nodes.
func (g *Graph) Nodes() uint64 { return g.nodes }

// BaseDegree is the DRG degree.
func (g *Graph) BaseDegree() int { return g.baseDegree }

// ExpDegree is the expander degree.
func (g *Graph) ExpDegree() int { return g.expDegree }

// Degree is BaseDegree + ExpDegree.
func (g *Graph) Degree() int { return g.baseDegree + g.expDegree }

// Parents writes the parents of node into dst (len ≥ Degree): the DRG
// parents first (same layer), then the expander parents (previous layer), the
// order of StackedGraph::parents.
func (g *Graph) Parents(node uint64, dst []uint32) {
	deg := g.Degree()
	if g.cache != nil {
		copy(dst[:deg], g.cache[node*uint64(deg):(node+1)*uint64(deg)])
		return
	}
	g.compute(node, dst[:deg])
}

func (g *Graph) compute(node uint64, dst []uint32) {
	g.BaseParents(node, dst[:g.baseDegree])
	g.ExpParents(node, dst[g.baseDegree:g.baseDegree+g.expDegree])
}

// BaseParents writes the DRG parents of node (BucketGraph::parents).
func (g *Graph) BaseParents(node uint64, dst []uint32) {
	m := g.baseDegree
	if node < 2 {
		for i := range dst[:m] {
			dst[i] = 0
		}
		return
	}
	var seed [32]byte
	copy(seed[:28], g.drgSeed[:])
	binary.LittleEndian.PutUint32(seed[28:], uint32(node))
	rng := newChaCha8(&seed)
	mPrime := uint64(m - 1)
	meta := node * mPrime
	nBuckets := uint64(bits.Len64(meta - 1)) // ceil(log2(meta)), exact for meta ≥ 2
	pred, others := mPrime, dst[:m]
	if g.api != porep.APIVersion1_0 {
		pred, others = 0, dst[1:m]
	}
	for i := range others[:mPrime] {
		bucket := rng.nextU64()%nBuckets + 1
		largest := min(meta, uint64(1)<<bucket)
		smallest := max(2, largest>>1)
		distance := smallest + rng.nextU64()%(largest-smallest+1)
		parent := uint32((meta - distance) / mPrime)
		if uint64(parent) == node {
			parent = uint32(node - 1)
		}
		others[i] = parent
	}
	dst[pred] = uint32(node - 1)
}

// ExpParents writes the expander parents of node (StackedGraph::correspondent).
func (g *Graph) ExpParents(node uint64, dst []uint32) {
	d := uint64(g.expDegree)
	n := g.nodes * d
	for i := range dst[:g.expDegree] {
		t := g.permute(n, node*d+uint64(i))
		if g.api == porep.APIVersion1_0 {
			dst[i] = uint32(t) / uint32(d)
		} else {
			dst[i] = uint32(t / d)
		}
	}
}

func (g *Graph) permute(n, index uint64) uint64 {
	u := g.encode(index)
	for u >= n {
		u = g.encode(u)
	}
	return u
}

func (g *Graph) encode(index uint64) uint64 {
	left := (index & g.leftMask) >> g.halfBits
	right := index & g.rightMask
	for _, key := range g.keys[:feistelRounds] {
		left, right = right, left^g.feistel(right, key)
	}
	return left<<g.halfBits | right
}

// feistel is the round function: BLAKE2b-512 of right ‖ key (both u64
// big-endian), first 8 bytes big-endian, masked.
func (g *Graph) feistel(right, key uint64) uint64 {
	var data [16]byte
	binary.BigEndian.PutUint64(data[0:8], right)
	binary.BigEndian.PutUint64(data[8:16], key)
	h := blake2b.Sum512(data[:])
	return binary.BigEndian.Uint64(h[:8]) & g.rightMask
}
