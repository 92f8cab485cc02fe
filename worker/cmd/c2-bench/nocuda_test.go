//go:build !cgo || c2nocuda

package main

import "testing"

func TestBenchCUDA(t *testing.T) {
	t.Skip("cuda backend test skipped: this build has no CUDA binding (built without cgo or with -tags c2nocuda)")
}
