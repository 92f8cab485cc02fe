package cli

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// worker -version (or --version, anywhere on the command line) prints the
// build and exits 0 before reading any configuration; -h lists it.
func TestVersion(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	for _, args := range [][]string{{"--version"}, {"-version"}, {"-config", "/nonexistent.yaml", "-version"}} {
		var out bytes.Buffer
		require.Equal(t, 0, Main(args, &out, io.Discard, env), "%q", args)
		require.Regexp(t, `^worker \S+ commit (unknown|[0-9a-f]{40}(\+dirty)?)( \(\S+\))? go\S+ \S+/\S+\n$`, out.String())
	}
	var errb bytes.Buffer
	require.Equal(t, 0, Main([]string{"-h"}, io.Discard, &errb, env))
	require.Contains(t, errb.String(), "-version")
	require.NotEmpty(t, version(), "the registry's version defaults to the build's")
}
