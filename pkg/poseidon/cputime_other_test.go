//go:build !linux

package poseidon

import "testing"

func reportCPUPerOp(b *testing.B, body func()) {
	for b.Loop() {
		body()
	}
}
