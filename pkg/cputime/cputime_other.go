//go:build !linux

package cputime

import "time"

// Supported says whether Thread reads a thread's CPU time here.
const Supported = false

// Thread returns 0: no per-thread CPU time on this platform.
func Thread() time.Duration { return 0 }
