package sha254

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// reportCPUPerOp runs body b.N times on one locked OS thread and reports the
// thread's CPU time per operation as "cpu-ns/op", which other processes on a
// loaded machine do not inflate the way they inflate wall time (ns/op).
func reportCPUPerOp(b *testing.B, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		body()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64((threadCPU()-start).Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
