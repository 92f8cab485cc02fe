//go:build !linux

package circuit

import "time"

const threadCPUSupported = false

func threadCPU() time.Duration { return 0 }
