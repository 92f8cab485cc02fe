// Package connflags lists the NATS and Redis connection settings (beyond
// the server address) as every binary exposes them: one flag and one
// environment variable each, feeding queue.ConnConfig and
// jobstore.DialConfig. The worker also reads them from its YAML file
// (worker/cli), under the flag's name with '_' for '-'.
package connflags

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/secret"
)

// Setting is one connection setting.
type Setting struct {
	// Flag is the flag name (nats-user); the YAML key is the same with
	// '_' (nats_user).
	Flag string
	// Env is the environment variable (C2_NATS_USER).
	Env string
	// Help says what it is.
	Help string
	// Set parses and stores a value.
	Set func(string) error
	// Bool settings may be given as a bare flag.
	Bool bool
}

// Key is the setting's YAML key.
func (s Setting) Key() string { return strings.ReplaceAll(s.Flag, "-", "_") }

func str(p *string) func(string) error { return func(v string) error { *p = v; return nil } }

func list(p *[]string) func(string) error {
	return func(v string) error {
		*p = nil
		for _, s := range secret.SplitList(v) {
			if s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}
}

// NATS are the settings of c beyond its URL.
func NATS(c *queue.ConnConfig) []Setting {
	return []Setting{
		{Flag: "nats-user", Env: "C2_NATS_USER", Help: "NATS user (with -nats-password-file or -nats-password)", Set: str(&c.User)},
		{Flag: "nats-password", Env: "C2_NATS_PASSWORD", Help: "NATS password (prefer -nats-password-file: a flag shows in the process list)", Set: str(&c.Password)},
		{Flag: "nats-password-file", Env: "C2_NATS_PASSWORD_FILE", Help: "file holding the NATS password", Set: str(&c.PasswordFile)},
		{Flag: "nats-token", Env: "C2_NATS_TOKEN", Help: "NATS token (prefer -nats-token-file)", Set: str(&c.Token)},
		{Flag: "nats-token-file", Env: "C2_NATS_TOKEN_FILE", Help: "file holding the NATS token", Set: str(&c.TokenFile)},
		{Flag: "nats-nkey-seed-file", Env: "C2_NATS_NKEY_SEED_FILE", Help: "file holding the NATS user's nkey seed (SU...)", Set: str(&c.NKeySeedFile)},
		{Flag: "nats-creds-file", Env: "C2_NATS_CREDS_FILE", Help: "NATS creds file (user JWT and seed, as nsc writes it)", Set: str(&c.CredsFile)},
		{Flag: "nats-ca-file", Env: "C2_NATS_CA_FILE", Help: "PEM CA certificates that verify the NATS server (turns TLS on; a tls:// URL alone uses the system's roots)", Set: str(&c.CAFile)},
		{Flag: "nats-cert-file", Env: "C2_NATS_CERT_FILE", Help: "client certificate for NATS TLS (with -nats-key-file)", Set: str(&c.CertFile)},
		{Flag: "nats-key-file", Env: "C2_NATS_KEY_FILE", Help: "key of -nats-cert-file", Set: str(&c.KeyFile)},
	}
}

// Redis are the settings of c beyond its address.
func Redis(c *jobstore.DialConfig) []Setting {
	return []Setting{
		{Flag: "redis-user", Env: "C2_REDIS_USER", Help: "Redis ACL user (default: the default user)", Set: str(&c.Username)},
		{Flag: "redis-password", Env: "C2_REDIS_PASSWORD", Help: "Redis password (prefer -redis-password-file: a flag shows in the process list)", Set: str(&c.Password)},
		{Flag: "redis-password-file", Env: "C2_REDIS_PASSWORD_FILE", Help: "file holding the Redis password (requirepass or the ACL user's)", Set: str(&c.PasswordFile)},
		{Flag: "redis-tls", Env: "C2_REDIS_TLS", Help: "TLS to a host:port Redis address (a rediss:// URL turns it on by itself)", Bool: true,
			Set: func(v string) error {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return err
				}
				c.TLS = b
				return nil
			}},
		{Flag: "redis-ca-file", Env: "C2_REDIS_CA_FILE", Help: "PEM CA certificates that verify the Redis server (turns TLS on)", Set: str(&c.CAFile)},
		{Flag: "redis-cert-file", Env: "C2_REDIS_CERT_FILE", Help: "client certificate for Redis TLS (with -redis-key-file)", Set: str(&c.CertFile)},
		{Flag: "redis-key-file", Env: "C2_REDIS_KEY_FILE", Help: "key of -redis-cert-file", Set: str(&c.KeyFile)},
		{Flag: "redis-sentinel-master", Env: "C2_REDIS_SENTINEL_MASTER", Help: "Redis Sentinel master name (with -redis-sentinels; instead of the Redis address)", Set: str(&c.SentinelMaster)},
		{Flag: "redis-sentinels", Env: "C2_REDIS_SENTINELS", Help: "comma-separated Redis Sentinel host:port addresses", Set: list(&c.SentinelAddrs)},
		{Flag: "redis-sentinel-password-file", Env: "C2_REDIS_SENTINEL_PASSWORD_FILE", Help: "file holding the Sentinels' password, when they require one", Set: str(&c.SentinelPasswordFile)},
		{Flag: "redis-cluster", Env: "C2_REDIS_CLUSTER", Help: "comma-separated host:port addresses of Redis Cluster nodes (instead of the Redis address)", Set: list(&c.ClusterAddrs)},
	}
}

// Register defines settings as flags of fs, first applying their
// environment variables (through env, os.LookupEnv when nil), so a flag
// overrides its variable. The coordinator uses it; the worker has its own
// loader (file, then environment, then flags).
func Register(fs *flag.FlagSet, env func(string) (string, bool), settings ...[]Setting) error {
	if env == nil {
		env = os.LookupEnv
	}
	for _, group := range settings {
		for _, s := range group {
			if v, ok := env(s.Env); ok && v != "" {
				if err := s.Set(v); err != nil {
					return fmt.Errorf("$%s: %w", s.Env, err)
				}
			}
			usage := s.Help + " ($" + s.Env + ")"
			if s.Bool {
				fs.BoolFunc(s.Flag, usage, s.Set)
			} else {
				fs.Func(s.Flag, usage, s.Set)
			}
		}
	}
	return nil
}
