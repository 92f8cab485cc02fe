package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// -version answers before the processor starts: no ready line, exit 0.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"-version", "--version"} {
		var out bytes.Buffer
		require.Equal(t, 0, run(context.Background(), []string{arg}, strings.NewReader(""), &out, io.Discard, func(string) string { return "" }))
		require.Regexp(t, `^c2-damocles \S+ commit (unknown|[0-9a-f]{40}(\+dirty)?)( \(\S+\))? go\S+ \S+/\S+\n$`, out.String())
	}
}
