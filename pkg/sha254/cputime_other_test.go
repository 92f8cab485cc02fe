//go:build !linux

package sha254

import "testing"

func reportCPUPerOp(b *testing.B, body func()) {
	for b.Loop() {
		body()
	}
}
