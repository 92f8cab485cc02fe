//go:build cgo

package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBadFlags: arguments c2g-bench cannot use are refused with a message
// naming them, before any library is opened or any work starts (the -lib
// given does not exist, so getting further would fail differently).
func TestBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libc2groth16.so")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-partition-profile", "85-15"}, `-partition-profile "85-15" is not 85-01 or porep`},
		{[]string{"-reps", "0"}, "reps must be at least 1"},
		{[]string{"-partition-slots", "0"}, "-partition-slots 0: want 1 to 8"},
		{[]string{"-partition-slots", "9"}, "-partition-slots 9: want 1 to 8"},
		{[]string{"-dft", "20,28"}, "-dft 2^28: the group DFT takes at most 2^27 points"},
	} {
		err := run(append([]string{"-lib", missing}, c.args...), io.Discard)
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}
	// the known profiles pass the check: the run gets as far as the library
	for _, p := range []string{"porep", "85-01"} {
		err := run([]string{"-lib", missing, "-partition-profile", p}, io.Discard)
		require.ErrorContains(t, err, missing, p)
		require.NotContains(t, err.Error(), "partition-profile", p)
	}
}
