package circuit

import (
	"syscall"
	"time"
)

const threadCPUSupported = true

// rusageThread is Linux's RUSAGE_THREAD: the calling thread only.
const rusageThread = 1

// threadCPU returns the calling OS thread's CPU time, user + system.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
