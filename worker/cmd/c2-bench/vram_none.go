//go:build !cgo || c2nocuda

package main

import "errors"

// openVRAMProbe: this build has no CUDA binding (no cgo, or -tags c2nocuda).
func openVRAMProbe(string) (vramProbe, int, error) {
	return nil, 0, errors.New("this binary has no CUDA binding (built without cgo or with -tags c2nocuda)")
}
