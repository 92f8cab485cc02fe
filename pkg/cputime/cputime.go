// Package cputime reads the CPU time of the calling OS thread (Linux's
// RUSAGE_THREAD): what one goroutine, locked to its thread, spent, without
// the other goroutines of the process that a process-wide figure would
// include and without what other processes take from a loaded machine,
// which wall time would. Synthesis reports its core-seconds with it; the
// hash benchmarks report cpu-ns/op.
package cputime

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Timer measures the CPU time one goroutine spends between Start and Stop:
// it locks the goroutine to its OS thread and reads that thread's CPU time
// (user + system) at both ends. What it does not see: the Go runtime's
// background GC workers (the assists a goroutine pays are its own time).
type Timer struct {
	t0 time.Duration
	on bool
}

// Start starts a timer where the platform can read a thread's CPU time
// (Supported); elsewhere the timer does nothing.
func Start() Timer {
	if !Supported {
		return Timer{}
	}
	runtime.LockOSThread()
	return Timer{t0: Thread(), on: true}
}

// Stop adds the CPU time since Start to sum (nanoseconds) and unlocks the
// goroutine from its thread.
func (t Timer) Stop(sum *atomic.Int64) {
	if !t.on {
		return
	}
	sum.Add(int64(Thread() - t.t0))
	runtime.UnlockOSThread()
}

// Looper is the part of *testing.B that ReportPerOp uses.
type Looper interface {
	Loop() bool
	ReportMetric(n float64, unit string)
}

// ReportPerOp runs body once per b.Loop() on one locked OS thread and
// reports the thread's CPU time per operation as "cpu-ns/op" (where
// Supported; elsewhere it only runs the loop).
func ReportPerOp(b Looper, body func()) {
	t := Start()
	var sum atomic.Int64
	n := 0
	for b.Loop() {
		body()
		n++
	}
	t.Stop(&sum)
	if t.on && n > 0 {
		b.ReportMetric(float64(sum.Load())/float64(n), "cpu-ns/op")
	}
}
