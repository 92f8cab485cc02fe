package cputime

import (
	"syscall"
	"time"
)

// Supported says whether Thread reads a thread's CPU time here.
const Supported = true

// rusageThread is Linux's RUSAGE_THREAD: the calling thread only.
const rusageThread = 1

// Thread returns the calling OS thread's CPU time, user + system (0 when it
// cannot be read).
func Thread() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
