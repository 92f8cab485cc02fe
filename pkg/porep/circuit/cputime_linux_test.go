package circuit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/cputime"
)

// TestSynthesizeCPUTime: WithCPUTime reports the CPU time of the
// synthesis's own threads. Alone, that is between half the process's CPU
// time over the call and all of it (the rest: the runtime's background GC
// workers); two syntheses at once each report their own, and together they
// again lie within the process's CPU time over both — where the process's
// time alone would count each partition's work twice.
func TestSynthesizeCPUTime(t *testing.T) {
	const slack = 20 * time.Millisecond // the two clocks' granularity
	c, err := Compile(mustShape(t, solveShape))
	require.NoError(t, err)
	out := parseC1(t, sealedC1(t, solveShape, 70))
	ctx := context.Background()
	s, err := c.Synthesize(ctx, out, 0) // first use: allocations, solver set-up
	require.NoError(t, err)
	s.Release()

	var d time.Duration
	p0 := cputime.Process()
	s, err = c.Synthesize(ctx, out, 0, WithCPUTime(&d))
	p := cputime.Process() - p0
	require.NoError(t, err)
	s.Release()
	t.Logf("alone: synthesis threads %v, process %v", d, p)
	require.Positive(t, d)
	require.LessOrEqual(t, d, p+slack)
	require.GreaterOrEqual(t, d, p/2)

	var ds [2]time.Duration
	var errs [2]error
	var wg sync.WaitGroup
	p0 = cputime.Process()
	for i := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Synthesize(ctx, out, i%out.Shape.Partitions, WithCPUTime(&ds[i]))
			if err == nil {
				r.Release()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	p = cputime.Process() - p0
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	t.Logf("two at once: synthesis threads %v + %v, process %v", ds[0], ds[1], p)
	require.Positive(t, ds[0])
	require.Positive(t, ds[1])
	require.LessOrEqual(t, ds[0]+ds[1], p+2*slack)
	require.GreaterOrEqual(t, ds[0]+ds[1], p/2)

}
