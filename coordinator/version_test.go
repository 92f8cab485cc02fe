package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/worker/singlenode"
)

// `coordinator version`, -version and --version print one line: the
// module version, the VCS commit and the Go version (pkg/buildinfo); the
// usage lists it.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "-version", "--version"} {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run(context.Background(), []string{arg}, &out, &errb), arg)
		require.Regexp(t, `^coordinator \S+ commit (unknown|[0-9a-f]{40}(\+dirty)?)( \(\S+\))? go\S+ \S+/\S+\n$`, out.String())
		require.Empty(t, errb.String())
	}
	var out, errb bytes.Buffer
	run(context.Background(), []string{"help"}, &out, &errb)
	require.Contains(t, errb.String(), "version")
}

// `coordinator seal` without -shape seals the shape `coordinator run` (the
// single node) serves, so its C1 is accepted there as it is.
func TestSealDefaultsToTheSingleNodesShape(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c1.json")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"seal", "-out", out}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "shape "+singlenode.ShapeDefault+",")
	require.Equal(t, porep.TestShapeDefault, singlenode.ShapeDefault)
}
