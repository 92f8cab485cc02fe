package groth16

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Buffers is one set of a circuit's instance buffers: the wire values and
// the A, B, C evaluations, each A, B, C with the circuit's domain as
// capacity (the input rows are appended in place). At 32 GiB a set is
// ~16 GiB. Get one from a BufferPool, fill it, wrap it with
// Circuit.SynthesizedBuffers, and give it back with Synthesized.Release once
// the proof no longer reads the witness.
//
// A set taken from the pool holds whatever its previous use left in it
// (nothing is cleared: that would cost as much as the allocation it saves):
// its user must write every element it hands on.
type Buffers struct {
	// Wires has NumInputs + NumAux elements.
	Wires []fr.Element
	// A, B, C have NumConstraints elements and DomainSize capacity.
	A, B, C []fr.Element
	// WireCodes, ACodes, BCodes, CCodes hold the value codes (CodeOf) of
	// Wires, A, B, C, with the same lengths and capacities; whoever writes
	// a value writes its code (SynthesizedBuffers hands them on as the
	// instance's Codes).
	WireCodes, ACodes, BCodes, CCodes []uint8

	pool    *BufferPool
	out     bool   // taken from the pool and not given back (under pool.mu)
	release func() // the OnAlloc hook's release (nil: none, or the hook failed)
}

// Release gives the set back to its pool; it must not be used afterwards.
// Releasing a set twice is a no-op.
func (b *Buffers) Release() {
	if b != nil && b.pool != nil {
		b.pool.put(b)
	}
}

// BufferPool keeps the instance buffers of one circuit for reuse, so that a
// worker proving partition after partition does not allocate (and zero, and
// later collect) ~16 GiB per partition at 32 GiB.
//
// It bounds memory: at most Limit sets exist at any time, free or in use.
// Get hands out a free set when there is one, allocates one while fewer than
// Limit exist, and otherwise waits until a set is given back (or its context
// ends). A worker sizes it to its slots: each slot holds at most one set at
// a time (from synthesis until the backend has read the witness), so no
// slot ever waits, and the sets stay allocated between partitions. Free sets
// are kept for the pool's life; SetLimit lowers the bound (dropping free sets
// beyond it), Drain drops every free set and Close every set.
//
// An owner may install a hook (OnAlloc) that sees every set the pool
// allocates and gets a release function called when the set is dropped:
// the worker page-locks each set for the GPU's uploads that way.
type BufferPool struct {
	c *Circuit

	mu      sync.Mutex
	limit   int
	free    []*Buffers
	sets    int           // sets alive: free, in use, or being allocated
	changed chan struct{} // closed (and replaced) when a set comes back or the limit changes
	stats   BufferStats
	hook    AllocHook
	closed  bool
}

// AllocHook is called with each set a pool allocates, before the set is
// handed out (so before anything is written into it), without the pool's
// lock held. It returns a release function, called once when the pool drops
// the set (SetLimit, Drain, Close, or a set coming back above a lowered
// limit), or an error: then the pool counts a failure (BufferStats.
// PinFailures) and the set is used as it is. The hook must not keep the
// set past release, nor write into it.
type AllocHook func(set *Buffers) (release func(), err error)

// ErrPoolClosed is Get's error on a closed pool.
var ErrPoolClosed = errors.New("groth16: buffer pool closed")

// BufferStats count what a pool did.
type BufferStats struct {
	Limit     int   // the bound on sets alive
	Sets      int   // sets alive now (free or in use)
	InUse     int   // sets handed out and not given back
	Allocated int64 // sets allocated over the pool's life
	Reused    int64 // Gets served with a set given back before
	Waits     int64 // Gets that had to wait for a set
	SetBytes  int64 // the size of one set
	// Pinned is the sets alive whose OnAlloc hook succeeded (the worker's
	// hook, with the CUDA backend, page-locks them); PinFailures counts the
	// allocations whose hook failed (those sets work without it).
	Pinned      int
	PinFailures int64
}

// NewBufferPool returns an empty pool of c's instance buffers holding at
// most limit sets (at least 1).
func NewBufferPool(c *Circuit, limit int) *BufferPool {
	return &BufferPool{c: c, limit: max(1, limit), changed: make(chan struct{})}
}

// OnAlloc installs hook for the sets allocated from now on (nil removes
// it; sets allocated before keep their release). Set it once, before the
// first Get.
func (p *BufferPool) OnAlloc(hook AllocHook) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hook = hook
}

// Circuit is the circuit whose buffers the pool holds.
func (p *BufferPool) Circuit() *Circuit { return p.c }

// SetBytes is the size of one set of buffers.
func (p *BufferPool) SetBytes() int64 {
	return int64(p.c.NumInputs()+p.c.NumAux()+3*p.c.DomainSize()) * (fr.Bytes + 1) // values and their codes
}

// Get returns a set of buffers: a free one, a new one while fewer than the
// limit exist, or the next one given back. Its contents are unspecified.
// Errors: ctx's error when ctx ends while it waits, ErrPoolClosed after
// Close.
func (p *BufferPool) Get(ctx context.Context) (*Buffers, error) {
	waited := false
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrPoolClosed
		}
		if n := len(p.free); n > 0 {
			b := p.free[n-1]
			p.free[n-1] = nil
			p.free = p.free[:n-1]
			b.out = true
			p.stats.Reused++
			p.stats.InUse++
			p.mu.Unlock()
			return b, nil
		}
		if p.sets < p.limit {
			p.sets++
			p.stats.Allocated++
			p.stats.InUse++
			hook := p.hook
			p.mu.Unlock()
			b := p.alloc()
			if hook != nil {
				p.runHook(hook, b)
			}
			return b, nil
		}
		if !waited {
			waited = true
			p.stats.Waits++
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

func (p *BufferPool) alloc() *Buffers {
	nc, dom := p.c.NumConstraints(), p.c.DomainSize()
	return &Buffers{
		Wires:     make([]fr.Element, p.c.NumInputs()+p.c.NumAux()),
		A:         make([]fr.Element, nc, dom),
		B:         make([]fr.Element, nc, dom),
		C:         make([]fr.Element, nc, dom),
		WireCodes: make([]uint8, p.c.NumInputs()+p.c.NumAux()),
		ACodes:    make([]uint8, nc, dom),
		BCodes:    make([]uint8, nc, dom),
		CCodes:    make([]uint8, nc, dom),
		pool:      p,
		out:       true,
	}
}

// runHook runs hook on a new set (without p.mu) and records the outcome.
func (p *BufferPool) runHook(hook AllocHook, b *Buffers) {
	release, err := hook(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.stats.PinFailures++
		return
	}
	if release != nil {
		b.release = release
		p.stats.Pinned++
	}
}

func (p *BufferPool) put(b *Buffers) {
	var dropped []*Buffers
	defer func() { releaseSets(dropped) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !b.out {
		return
	}
	b.out = false
	p.stats.InUse--
	if p.sets > p.limit || p.closed { // the limit was lowered: let this one go
		dropped = append(dropped, p.drop(b))
	} else {
		p.free = append(p.free, b)
	}
	p.signal()
}

// drop forgets a set that leaves the pool (under p.mu) and returns it for
// releaseSets, to be called once p.mu is released.
func (p *BufferPool) drop(b *Buffers) *Buffers {
	p.sets--
	if b.release != nil {
		p.stats.Pinned--
	}
	return b
}

// dropFree drops free sets until at most keep of them remain (under p.mu).
func (p *BufferPool) dropFree(keep int) []*Buffers {
	var dropped []*Buffers
	for len(p.free) > keep {
		n := len(p.free) - 1
		dropped = append(dropped, p.drop(p.free[n]))
		p.free[n] = nil
		p.free = p.free[:n]
	}
	return dropped
}

// releaseSets calls the hook's release of each dropped set (without p.mu:
// a release may take a while, e.g. unlocking 16 GiB of pages).
func releaseSets(sets []*Buffers) {
	for _, b := range sets {
		if r := b.release; r != nil {
			b.release = nil
			r()
		}
	}
}

// signal wakes every waiting Get (under p.mu).
func (p *BufferPool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// SetLimit changes the bound on sets alive (at least 1). Free sets beyond a
// lowered bound are dropped at once, sets in use when they come back.
func (p *BufferPool) SetLimit(limit int) {
	p.trim(func() int {
		p.limit = max(1, limit)
		return len(p.free) - max(0, p.sets-p.limit)
	})
}

// Drain drops every free set (the memory is collected once nothing else
// references it); sets in use are kept when they come back.
func (p *BufferPool) Drain() { p.trim(func() int { return 0 }) }

// Close drops every free set, and every set in use when it comes back;
// Get fails with ErrPoolClosed from now on (waiting Gets too). Safe to call
// more than once.
func (p *BufferPool) Close() {
	p.trim(func() int {
		p.closed = true
		return 0
	})
}

// trim runs update under p.mu, drops free sets until at most the number it
// returns remain, wakes the waiting Gets, and calls the dropped sets'
// releases once p.mu is released.
func (p *BufferPool) trim(update func() (keep int)) {
	p.mu.Lock()
	dropped := p.dropFree(max(0, update()))
	p.signal()
	p.mu.Unlock()
	releaseSets(dropped)
}

// Stats reports the pool's counters.
func (p *BufferPool) Stats() BufferStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Limit, s.Sets, s.SetBytes = p.limit, p.sets, p.SetBytes()
	return s
}

// SynthesizedBuffers wraps a solution written into b (a set of this
// circuit's pool: every wire and every constraint evaluation written) as
// Synthesized does, and makes the result own b: its Release gives b back.
func (c *Circuit) SynthesizedBuffers(b *Buffers) (*Synthesized, error) {
	if b == nil || b.pool == nil || b.pool.c != c {
		return nil, fmt.Errorf("groth16: buffers of another circuit")
	}
	nc := c.nbConstraints
	s, err := c.Synthesized(b.Wires, b.A[:nc], b.B[:nc], b.C[:nc])
	if err != nil {
		return nil, err
	}
	s.Codes = &ValueCodes{
		A:   withInputRowCodes(b.ACodes[:nc], s.Input, true),
		B:   withInputRowCodes(b.BCodes[:nc], s.Input, false),
		C:   withInputRowCodes(b.CCodes[:nc], s.Input, false),
		Aux: b.WireCodes[c.nbInputs:],
	}
	s.buffers = b
	return s, nil
}

// Release gives the buffers s was built in back to their pool (see
// Circuit.SynthesizedBuffers) and clears s's vectors, so that a use after
// Release fails its shape checks instead of reading another instance. A
// Synthesized that owns no pooled buffers is left as it is. Call it once no
// task reads s any more (groth16.WitnessHolder says when; after Release of
// the task always). Safe to call more than once, and on nil.
func (s *Synthesized) Release() {
	if s == nil || s.buffers == nil {
		return
	}
	b := s.buffers
	s.buffers = nil
	s.A, s.B, s.C, s.Input, s.Aux, s.Codes = nil, nil, nil, nil, nil, nil
	b.Release()
}
