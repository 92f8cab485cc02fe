//go:build !unix

package cputime

import "time"

// Process returns 0: no process CPU time on this platform.
func Process() time.Duration { return 0 }
