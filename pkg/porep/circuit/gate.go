package circuit

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// solveGate hands out the cores that the head's and the challenges'
// generation and evaluation run on, shared by every synthesis in the
// process: at most limit() at once, and a core that comes free goes to the
// oldest synthesis waiting (the lowest sequence number; arrival order
// within one synthesis).
//
// Without it, s syntheses at once run s × GOMAXPROCS single-threaded units
// on GOMAXPROCS cores: each finishes only when all do, and the GPU waits
// for all of them. With it, the oldest synthesis finishes first, as fast as
// alone, while the cores its last round leaves idle (18 challenges on 16
// cores) go to the next one.
type solveGate struct {
	limit func() int // solves at once (read per grant: GOMAXPROCS may change)

	mu       sync.Mutex
	busy     int
	waiting  waiters
	arrivals uint64
}

// solves is the process's gate, GOMAXPROCS solves at once.
var solves = &solveGate{limit: func() int { return runtime.GOMAXPROCS(0) }}

// synthesisSeq numbers syntheses in the order they start: the gate's
// priority.
var synthesisSeq atomic.Uint64

type waiter struct {
	seq, arrival uint64
	index        int // in the heap
	ready        chan struct{}
	granted      bool
}

// waiters is a min-heap by (seq, arrival).
type waiters []*waiter

func (h waiters) Len() int { return len(h) }
func (h waiters) Less(i, j int) bool {
	if h[i].seq != h[j].seq {
		return h[i].seq < h[j].seq
	}
	return h[i].arrival < h[j].arrival
}
func (h waiters) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waiters) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return w
}

// acquire waits for a core for synthesis seq; ctx's error when ctx ends
// first (then nothing is held). Every nil return is paired with a release.
func (g *solveGate) acquire(ctx context.Context, seq uint64) error {
	g.mu.Lock()
	if len(g.waiting) == 0 && g.busy < g.limit() {
		g.busy++
		g.mu.Unlock()
		return nil
	}
	w := &waiter{seq: seq, arrival: g.arrivals, ready: make(chan struct{})}
	g.arrivals++
	heap.Push(&g.waiting, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.granted { // granted as ctx ended: hand it on
			g.busy--
			g.grantLocked()
		} else {
			heap.Remove(&g.waiting, w.index)
		}
		return ctx.Err()
	}
}

// release gives a core back.
func (g *solveGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	g.grantLocked()
}

// grantLocked hands free cores to the waiters first in line.
func (g *solveGate) grantLocked() {
	for len(g.waiting) > 0 && g.busy < g.limit() {
		w := heap.Pop(&g.waiting).(*waiter)
		w.granted = true
		g.busy++
		close(w.ready)
	}
}
