//go:build !cgo

// Command c2g-bench needs cgo (it loads the CUDA library); this build says
// so, and answers -version.
package main

import (
	"fmt"
	"os"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
)

func main() {
	if buildinfo.Requested(os.Args[1:]) {
		fmt.Println(buildinfo.Line("c2g-bench"))
		return
	}
	fmt.Fprintln(os.Stderr, "c2g-bench: built without cgo; rebuild with CGO_ENABLED=1")
	os.Exit(1)
}
