package groth16

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

// garbage fills v up to its capacity with random limbs (not even reduced
// field elements): what a reused buffer may hold.
func garbage(v []fr.Element, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	v = v[:cap(v)]
	for i := range v {
		for j := range v[i] {
			v[i][j] = r.Uint64()
		}
	}
}

// TestBufferPoolBoundsAndReuses: a pool allocates up to its limit, hands
// the same sets out again once they are given back, makes a Get past the
// limit wait until a set comes back (and honour its context), and shrinks
// with SetLimit and Drain; its counters say so.
func TestBufferPoolBoundsAndReuses(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	p := NewBufferPool(f.circuit, 2)
	b1, err := p.Get(ctx)
	require.NoError(t, err)
	require.Len(t, b1.Wires, f.circuit.NumInputs()+f.circuit.NumAux())
	for _, v := range [][]fr.Element{b1.A, b1.B, b1.C} {
		require.Len(t, v, f.circuit.NumConstraints())
		require.Equal(t, f.circuit.DomainSize(), cap(v))
	}
	b2, err := p.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, BufferStats{Limit: 2, Sets: 2, InUse: 2, Allocated: 2, SetBytes: p.SetBytes()}, p.Stats())

	// At the limit a Get waits: until its context ends…
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Get(cctx)
	require.ErrorIs(t, err, context.Canceled)
	// …or a set comes back: b1, the same memory.
	got := make(chan *Buffers)
	go func() {
		b, err := p.Get(ctx)
		if err != nil {
			b = nil
		}
		got <- b
	}()
	for p.Stats().Waits < 2 { // the goroutine's Get is waiting (the counter is bumped before it blocks)
		runtime.Gosched()
	}
	b1.Release()
	b3 := <-got
	require.Same(t, b1, b3)
	require.Same(t, &b1.Wires[0], &b3.Wires[0])
	b1.Release() // b1 is b3: given back once
	b1.Release() // and a second Release of the same set is a no-op
	s := p.Stats()
	require.Equal(t, int64(2), s.Allocated)
	require.Equal(t, int64(1), s.Reused)
	require.Equal(t, int64(2), s.Waits, "the cancelled Get and the one b1 woke")
	require.Equal(t, 1, s.InUse)
	require.Equal(t, 2, s.Sets)

	// Lowering the limit drops a free set at once…
	p.SetLimit(1)
	require.Equal(t, 1, p.Stats().Sets)
	b2.Release() // (within the bound: kept)
	b4, err := p.Get(ctx)
	require.NoError(t, err)
	require.Same(t, b2, b4)
	// …and a set in use beyond it when it comes back.
	p.SetLimit(2)
	b5, err := p.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), p.Stats().Allocated)
	p.SetLimit(1)
	require.Equal(t, 2, p.Stats().Sets, "both in use")
	b4.Release()
	require.Equal(t, 1, p.Stats().Sets)
	b5.Release()
	s = p.Stats()
	require.Equal(t, 1, s.Sets)
	require.Equal(t, 0, s.InUse)
	require.Equal(t, int64(2), s.Reused)
	p.Drain()
	require.Equal(t, 0, p.Stats().Sets)
}

// TestReusedBuffersProveTheSame: an instance built in a pooled set that
// held another instance's values — and keeps garbage past the length of
// A, B, C up to the domain — proves byte for byte what the freshly
// allocated instance proves (the backends read A, B, C up to their length
// only); Release gives the set back and clears the instance.
func TestReusedBuffersProveTheSame(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	rnd := fixedRandomness(5, 6)
	want, _, err := Prove(ctx, f.key, f.w, rnd)
	require.NoError(t, err)

	p := NewBufferPool(f.circuit, 1)
	b, err := p.Get(ctx)
	require.NoError(t, err)
	garbage(b.Wires, 1)
	garbage(b.A, 2)
	garbage(b.B, 3)
	garbage(b.C, 4)
	nIn, nc := f.circuit.NumInputs(), f.circuit.NumConstraints()
	copy(b.Wires, f.w.Input)
	copy(b.Wires[nIn:], f.w.Aux)
	copy(b.A, f.w.A[:nc])
	copy(b.B, f.w.B[:nc])
	copy(b.C, f.w.C[:nc])
	s, err := f.circuit.SynthesizedBuffers(b)
	require.NoError(t, err)
	require.Equal(t, f.w.A, s.A)
	require.NotZero(t, s.A[:cap(s.A)][len(s.A)], "garbage stays past the length")

	task, err := f.key.Prepare(ctx, s, rnd)
	require.NoError(t, err)
	defer task.Release()
	require.True(t, HoldsWitness(task))
	require.NoError(t, task.Upload(ctx))
	require.True(t, HoldsWitness(task), "the CPU backend reads aux in Compute")
	require.NoError(t, task.Compute(ctx))
	require.False(t, HoldsWitness(task), "Compute was the last read")
	s.Release()
	require.Nil(t, s.A)
	require.Nil(t, s.Aux)
	garbage(b.Wires, 9) // the next instance overwrites the set while the task finishes
	garbage(b.A, 10)
	got, err := task.Finish(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NoError(t, gnarkVerify(&f.pk.VK, got, f.public))
	st := p.Stats()
	require.Equal(t, 0, st.InUse)
	require.Equal(t, 1, st.Sets)
	s.Release() // twice is harmless

	other := NewBufferPool(circuitOf(t, groth16test.ChainSystem(10, 1, 2, 3)), 1)
	ob, err := other.Get(ctx)
	require.NoError(t, err)
	_, err = f.circuit.SynthesizedBuffers(ob)
	require.ErrorContains(t, err, "another circuit")
}

// TestBufferPoolAllocHook: the OnAlloc hook runs once per allocated set
// (not for reused ones), its release runs once per dropped set — by
// SetLimit, a set coming back above a lowered limit, Drain and Close — and
// a failing hook only counts: the set is handed out and works.
func TestBufferPoolAllocHook(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	p := NewBufferPool(f.circuit, 3)
	hooked := map[*Buffers]int{}
	released := map[*Buffers]int{}
	fail := false
	p.OnAlloc(func(b *Buffers) (func(), error) {
		hooked[b]++
		require.Len(t, b.Wires, f.circuit.NumInputs()+f.circuit.NumAux())
		if fail {
			return nil, errors.New("no page-locked memory")
		}
		return func() { released[b]++ }, nil
	})
	b1, err := p.Get(ctx)
	require.NoError(t, err)
	b2, err := p.Get(ctx)
	require.NoError(t, err)
	fail = true
	b3, err := p.Get(ctx) // the hook fails: counted, the set is still usable
	require.NoError(t, err)
	fail = false
	require.Equal(t, map[*Buffers]int{b1: 1, b2: 1, b3: 1}, hooked)
	s := p.Stats()
	require.Equal(t, 2, s.Pinned)
	require.Equal(t, int64(1), s.PinFailures)

	b1.Release()
	b1again, err := p.Get(ctx) // reused: no second hook call
	require.NoError(t, err)
	require.Same(t, b1, b1again)
	require.Equal(t, 1, hooked[b1])
	require.Empty(t, released)

	// SetLimit drops the free set (b3, unhooked: nothing to release) …
	b3.Release()
	p.SetLimit(2)
	require.Empty(t, released)
	require.Equal(t, 2, p.Stats().Pinned)
	// … and a set in use above the limit when it comes back.
	p.SetLimit(1)
	b2.Release()
	require.Equal(t, map[*Buffers]int{b2: 1}, released)
	require.Equal(t, 1, p.Stats().Pinned)
	b1.Release() // within the limit: kept, not released
	require.Len(t, released, 1)
	p.Drain()
	require.Equal(t, map[*Buffers]int{b1: 1, b2: 1}, released)
	s = p.Stats()
	require.Equal(t, 0, s.Pinned)
	require.Equal(t, 0, s.Sets)

	// Close: free sets at once, a set in use when it comes back; Get fails.
	p.SetLimit(2)
	b4, err := p.Get(ctx)
	require.NoError(t, err)
	b5, err := p.Get(ctx)
	require.NoError(t, err)
	b5.Release()
	p.Close()
	require.Equal(t, 1, released[b5])
	require.Zero(t, released[b4])
	b4.Release()
	require.Equal(t, 1, released[b4])
	b4.Release()
	p.Close()
	require.Equal(t, 1, released[b4], "released once")
	_, err = p.Get(ctx)
	require.ErrorIs(t, err, ErrPoolClosed)
	s = p.Stats()
	require.Equal(t, 0, s.Sets)
	require.Equal(t, 0, s.Pinned)
	require.Equal(t, int64(5), s.Allocated)
	for b, n := range hooked {
		require.Equal(t, 1, n, "hook once per set")
		if b != b3 {
			require.Equal(t, 1, released[b], "release once per hooked set")
		}
	}
}
