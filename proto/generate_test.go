package proto

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedCodeIsFresh regenerates the Go code into a temporary folder
// and requires it to equal the committed files byte for byte.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc not on PATH (apt-get install protobuf-compiler): cannot check generated code freshness")
	}
	out := t.TempDir()
	cmd := exec.Command("./generate.sh")
	cmd.Env = append(os.Environ(), "OUT="+out)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "generate.sh: %s", msg)

	var generated []string
	require.NoError(t, filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, path)
		generated = append(generated, rel)
		return err
	}))
	require.ElementsMatch(t, []string{
		"c2cluster/v1/api.pb.go",
		"c2cluster/v1/task.pb.go",
		"c2cluster/v1/c2clusterv1connect/api.connect.go",
		"cuzk/v1/proving.pb.go",
		"cuzk/v1/proving_grpc.pb.go",
		"cuzk/v1/cuzkv1connect/proving.connect.go",
	}, generated)
	for _, rel := range generated {
		want, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err)
		got, err := os.ReadFile(rel)
		require.NoError(t, err, "generated file %s is not committed; run go generate ./proto/", rel)
		require.True(t, bytes.Equal(want, got), "%s is stale; run go generate ./proto/", rel)
	}
}
