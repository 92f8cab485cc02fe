package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	for _, arg := range []string{"-version", "--version"} {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), []string{"-dir", t.TempDir(), arg}, &out, io.Discard))
		require.Regexp(t, `^c2-params \S+ commit (unknown|[0-9a-f]{40}(\+dirty)?)( \(\S+\))? go\S+ \S+/\S+\n$`, out.String())
	}
}
