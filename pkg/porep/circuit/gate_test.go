package circuit

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// queued is the number of waiters.
func (g *solveGate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// waitQueued waits until the gate has n waiters (a condition, not a time).
func waitQueued(g *solveGate, n int) {
	for g.queued() != n {
		runtime.Gosched()
	}
}

// TestSolveGateOrder: a free core goes to the oldest synthesis waiting,
// then in arrival order within one; at most limit at once.
func TestSolveGateOrder(t *testing.T) {
	ctx := context.Background()
	g := &solveGate{limit: func() int { return 2 }}
	require.NoError(t, g.acquire(ctx, 9))
	require.NoError(t, g.acquire(ctx, 9))
	granted := make(chan uint64, 8)
	wait := func(seq uint64) {
		go func() {
			if g.acquire(ctx, seq) == nil {
				granted <- seq
			}
		}()
	}
	// arrivals: 7, 3, 5, 3 — grants must go 3, 3, 5, 7
	for i, seq := range []uint64{7, 3, 5, 3} {
		wait(seq)
		waitQueued(g, i+1)
	}
	require.Empty(t, granted, "both cores are taken")
	for _, want := range []uint64{3, 3, 5, 7} {
		g.release()
		require.Equal(t, want, <-granted)
	}
	require.Zero(t, g.queued())
	g.release()
	g.release()
	// both free again: two immediate grants, the third waits
	require.NoError(t, g.acquire(ctx, 1))
	require.NoError(t, g.acquire(ctx, 1))
	wait(1)
	waitQueued(g, 1)
	g.release()
	require.Equal(t, uint64(1), <-granted)
	g.release()
	g.release()
	require.Zero(t, g.busy)
}

// TestSolveGateCancel: a waiter whose context ends leaves the queue holding
// nothing, and the cores still go to the others.
func TestSolveGateCancel(t *testing.T) {
	g := &solveGate{limit: func() int { return 1 }}
	require.NoError(t, g.acquire(context.Background(), 5))
	cctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- g.acquire(cctx, 1) }()
	waitQueued(g, 1)
	granted := make(chan struct{})
	go func() {
		if g.acquire(context.Background(), 2) == nil {
			close(granted)
		}
	}()
	waitQueued(g, 2)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	waitQueued(g, 1)
	g.release()
	<-granted
	g.release()
	require.Zero(t, g.busy)
	require.Zero(t, g.queued())
}
