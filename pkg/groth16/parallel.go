package groth16

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// workers returns n if positive, else GOMAXPROCS.
func workers(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// parallelRange runs fn over [0, n) split into chunks of at most chunk items
// on nw goroutines. It stops handing out chunks after the first error or
// when ctx is done, and returns the error of the lowest-numbered failing
// chunk among those that ran, or ctx.Err().
func parallelRange(ctx context.Context, n, chunk, nw int, fn func(start, end int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	if chunk < 1 {
		chunk = 1
	}
	nChunks := (n + chunk - 1) / chunk
	nw = workers(nw)
	if nw > nChunks {
		nw = nChunks
	}
	var (
		next    atomic.Int64
		failed  atomic.Bool
		mu      sync.Mutex
		errIdx  = -1
		firstEr error
		wg      sync.WaitGroup
	)
	for w := 0; w < nw; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= nChunks || failed.Load() {
					return
				}
				if ctx.Err() != nil {
					failed.Store(true)
					return
				}
				start := c * chunk
				end := min(start+chunk, n)
				if err := fn(start, end); err != nil {
					mu.Lock()
					if errIdx < 0 || c < errIdx {
						errIdx, firstEr = c, err
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return firstEr
	}
	return ctx.Err()
}
