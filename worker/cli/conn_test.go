package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
)

// The NATS and Redis credentials and TLS settings load from the file, the
// environment and flags like every other setting, and settings that do not
// fit together are a usage error.
func TestLoadConnectionSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
nats: tls://nats-1:4222,tls://nats-2:4222
nats_user: c2
nats_password_file: /etc/c2/nats-password
nats_ca_file: /etc/c2/ca.pem
nats_cert_file: /etc/c2/worker.pem
nats_key_file: /etc/c2/worker-key.pem
redis_cluster: [r1:6379, r2:6379]
redis_password_file: /etc/c2/redis-password
redis_tls: true
shapes: [32GiB]
`), 0o600))
	f, err := load(t, []string{"-config", path, "-redis-user", "worker"}, map[string]string{"C2_NATS_CA_FILE": "/run/ca.pem"})
	require.NoError(t, err)
	require.Equal(t, "tls://nats-1:4222,tls://nats-2:4222", f.NATS.URL)
	require.Equal(t, "c2", f.NATS.User)
	require.Equal(t, "/etc/c2/nats-password", f.NATS.PasswordFile)
	require.Equal(t, "/run/ca.pem", f.NATS.CAFile, "the environment overrides the file")
	require.Equal(t, "/etc/c2/worker.pem", f.NATS.CertFile)
	require.Equal(t, []string{"r1:6379", "r2:6379"}, f.Redis.ClusterAddrs)
	require.Empty(t, f.Redis.Addr, "no default address beside Cluster addresses")
	require.True(t, f.Redis.TLS)
	require.Equal(t, "worker", f.Redis.Username)
	require.Equal(t, "/etc/c2/redis-password", f.Redis.PasswordFile)

	_, err = load(t, []string{"-config", path, "-redis", "r0:6379"}, nil)
	require.ErrorContains(t, err, "give one of a Redis address, Sentinel (master and sentinels) or Cluster addresses")
	_, err = load(t, []string{"-nats-token", "t"}, map[string]string{"C2_NATS_USER": "u"})
	require.ErrorContains(t, err, "give one way to authenticate, not user/password and token")
	env := func(string) (string, bool) { return "", false }
	require.Equal(t, 2, Main([]string{"-nats-cert-file", "c.pem"}, io.Discard, io.Discard, env))
}

// A worker that cannot connect says why, naming the server, and neither its
// log nor its error shows a password, whether it came in a URL or a file.
func TestMainKeepsSecretsOut(t *testing.T) {
	const natsPW, redisPW = "nats-pw-3d1f-not-for-logs", "redis-pw-8e2b-not-for-logs"
	env := func(string) (string, bool) { return "", false }
	var out safeBuffer
	require.Equal(t, 1, Main([]string{"-nats", "nats://c2:" + natsPW + "@127.0.0.1:1", "-metrics-listen", "off", "-log-format", "json"}, io.Discard, &out, env))
	require.Contains(t, out.String(), "queue: connect nats://c2:xxxxx@127.0.0.1:1")
	require.NotContains(t, out.String(), natsPW)

	// Real servers: NATS answers, Redis refuses the password.
	nats := queuetest.Server(t)
	r, err := jobstoretest.StartWith(jobstoretest.Options{Password: redisPW})
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	pwFile := filepath.Join(t.TempDir(), "redis-password")
	require.NoError(t, os.WriteFile(pwFile, []byte("x"+redisPW+"\n"), 0o600))
	for _, args := range [][]string{
		{"-redis", "redis://default:x" + redisPW + "@" + r.Addr},
		{"-redis", r.Addr, "-redis-password-file", pwFile},
	} {
		out = safeBuffer{}
		args = append(args, "-nats", nats.URL(), "-metrics-listen", "off", "-shapes", "test")
		require.Equal(t, 1, Main(args, io.Discard, &out, env))
		require.Contains(t, out.String(), "WRONGPASS")
		require.Contains(t, out.String(), "the server refused the credentials")
		require.NotContains(t, out.String(), redisPW)
		require.True(t, strings.Contains(out.String(), "redis "+r.Addr+":") || strings.Contains(out.String(), "redis redis://default:xxxxx@"+r.Addr+":"), out.String())
	}
}
