package connflags_test

import (
	"flag"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/connflags"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
)

// yamlKeys are a struct's YAML keys other than the address and "-".
func yamlKeys(v any, addr string) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := 0; i < t.NumField(); i++ {
		if k := t.Field(i).Tag.Get("yaml"); k != "-" && k != addr {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func keys(t *testing.T, ss []connflags.Setting) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Key())
		require.Equal(t, "C2_"+strings.ToUpper(s.Key()), s.Env, "variable of -%s", s.Flag)
	}
	sort.Strings(out)
	return out
}

// Every YAML key of the connection settings has its flag and variable, and
// the other way round.
func TestSettingsMatchYAMLKeys(t *testing.T) {
	t.Parallel()
	require.Equal(t, yamlKeys(queue.ConnConfig{}, "nats"), keys(t, connflags.NATS(&queue.ConnConfig{})))
	require.Equal(t, yamlKeys(jobstore.DialConfig{}, "redis"), keys(t, connflags.Redis(&jobstore.DialConfig{})))
}

func TestRegisterEnvironmentThenFlags(t *testing.T) {
	t.Parallel()
	var nc queue.ConnConfig
	var dc jobstore.DialConfig
	env := map[string]string{"C2_NATS_USER": "env-user", "C2_NATS_CA_FILE": "/env/ca.pem",
		"C2_REDIS_CLUSTER": "a:1, b:2", "C2_REDIS_TLS": "true", "C2_REDIS_PASSWORD_FILE": "/run/secrets/redis"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	require.NoError(t, connflags.Register(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		connflags.NATS(&nc), connflags.Redis(&dc)))
	require.NoError(t, fs.Parse([]string{"-nats-user", "flag-user", "-redis-tls=false", "-redis-sentinels", "s1:26379,s2:26379"}))
	require.Equal(t, "flag-user", nc.User)
	require.Equal(t, "/env/ca.pem", nc.CAFile)
	require.Equal(t, []string{"a:1", "b:2"}, dc.ClusterAddrs)
	require.Equal(t, []string{"s1:26379", "s2:26379"}, dc.SentinelAddrs)
	require.False(t, dc.TLS)
	require.Equal(t, "/run/secrets/redis", dc.PasswordFile)

	env["C2_REDIS_TLS"] = "maybe"
	err := connflags.Register(flag.NewFlagSet("t", flag.ContinueOnError), func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		connflags.Redis(&jobstore.DialConfig{}))
	require.ErrorContains(t, err, "$C2_REDIS_TLS: ")
}
