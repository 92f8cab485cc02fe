package circuit

import (
	"runtime"
	"sync/atomic"
	"time"
)

// threadTimer measures the CPU time one goroutine spends between start and
// stop: it locks the goroutine to its OS thread and reads that thread's CPU
// time (user + system) at both ends. Synthesize sums these over the
// goroutines that do its work (WithCPUTime), which stays exact when other
// partitions run in the same process, where the process's own CPU time
// would count theirs too. What it does not see: the Go runtime's
// background GC workers (the assists a goroutine pays are its own time).
type threadTimer struct {
	t0 time.Duration
	on bool
}

// startThreadTimer starts a timer where the platform can read a thread's
// CPU time; elsewhere the timer does nothing.
func startThreadTimer() threadTimer {
	if !threadCPUSupported {
		return threadTimer{}
	}
	runtime.LockOSThread()
	return threadTimer{t0: threadCPU(), on: true}
}

// stop adds the CPU time since start to sum (nanoseconds) and unlocks the
// goroutine from its thread.
func (t threadTimer) stop(sum *atomic.Int64) {
	if !t.on {
		return
	}
	sum.Add(int64(threadCPU() - t.t0))
	runtime.UnlockOSThread()
}
