//go:build !cgo

// Command c2g-bench needs cgo (it loads the CUDA library); this build says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "c2g-bench: built without cgo; rebuild with CGO_ENABLED=1")
	os.Exit(1)
}
