package secret_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/secret"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                          "nats://127.0.0.1:4222",
		"nats://alice:s3cret@10.0.0.1:4222":              "nats://alice:xxxxx@10.0.0.1:4222",
		"tls://s3cret@nats.example:4222":                 "tls://xxxxx@nats.example:4222",
		"nats://a:s3cret@h1:4222, nats://a:s3cret@h2:42": "nats://a:xxxxx@h1:4222,nats://a:xxxxx@h2:42",
		"rediss://default:s3cret@redis:6380/0":           "rediss://default:xxxxx@redis:6380/0",
		"redis://:s3cret@redis:6379":                     "redis://:xxxxx@redis:6379",
		"10.0.0.2:6379":                                  "10.0.0.2:6379",
		"user:s3cret@10.0.0.2:6379":                      "xxxxx@10.0.0.2:6379",
	} {
		require.Equal(t, want, secret.RedactURL(in), in)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(p, []byte("s3cret\r\n"), 0o600))
	got, err := secret.ReadFile("Redis password file", p)
	require.NoError(t, err)
	require.Equal(t, "s3cret", got)
	require.NoError(t, os.WriteFile(p, []byte("\n"), 0o600))
	_, err = secret.ReadFile("Redis password file", p)
	require.ErrorContains(t, err, "Redis password file "+p+" is empty")
	_, err = secret.ReadFile("Redis password file", filepath.Join(dir, "absent"))
	require.ErrorContains(t, err, "Redis password file: open ")
}
