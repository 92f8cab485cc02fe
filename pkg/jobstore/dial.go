package jobstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"github.com/c2cluster/c2cluster/pkg/secret"

	"github.com/c2cluster/c2cluster/pkg/tlsfiles"
)

// AddrDefault is the Redis address when none is configured.
const AddrDefault = "127.0.0.1:6379"

// DialConfig is how a cluster process reaches Redis: one server (Addr), a
// master found through Sentinel, or a Redis Cluster; an ACL user and
// password; TLS. Secrets may come from files so they need be in neither
// flags nor the environment. The YAML keys are the worker's configuration
// file's (pkg/connflags names the matching flags and variables).
type DialConfig struct {
	// Addr is one server: host:port, or a URL
	// redis://[user:password@]host:port[/db] (rediss:// for TLS).
	// Default 127.0.0.1:6379 when neither Sentinel nor Cluster is set.
	Addr string `yaml:"redis"`
	// SentinelMaster and SentinelAddrs (host:port each) find the master
	// through Redis Sentinel and follow it on failover.
	SentinelMaster string   `yaml:"redis_sentinel_master"`
	SentinelAddrs  []string `yaml:"redis_sentinels"`
	// SentinelPassword (or SentinelPasswordFile) authenticates to the
	// sentinels when they require it.
	SentinelPassword     string `yaml:"-"`
	SentinelPasswordFile string `yaml:"redis_sentinel_password_file"`
	// ClusterAddrs (host:port each, some of the nodes) reach a Redis
	// Cluster: every key of one job shares a hash slot, so the job store's
	// scripts and transactions run there.
	ClusterAddrs []string `yaml:"redis_cluster"`

	// Username is the ACL user (Redis 6+); empty: "default".
	Username string `yaml:"redis_user"`
	// Password (or PasswordFile, trailing newline ignored) authenticates:
	// requirepass or the ACL user's password.
	Password     string `yaml:"redis_password"`
	PasswordFile string `yaml:"redis_password_file"`

	// TLS turns TLS on for host:port addresses (a rediss:// URL turns it
	// on by itself); CAFile or CertFile turn it on too.
	TLS bool `yaml:"redis_tls"`
	// CAFile holds the PEM certificates that verify the server; empty: the
	// system's roots.
	CAFile string `yaml:"redis_ca_file"`
	// CertFile and KeyFile are a client certificate and key, for servers
	// with tls-auth-clients.
	CertFile string `yaml:"redis_cert_file"`
	KeyFile  string `yaml:"redis_key_file"`
}

// Where names the Redis of c in errors and logs, with no secret.
func (c DialConfig) Where() string {
	switch {
	case len(c.ClusterAddrs) > 0:
		return "cluster " + strings.Join(c.ClusterAddrs, ",")
	case c.SentinelMaster != "":
		return "master " + c.SentinelMaster + " via sentinels " + strings.Join(c.SentinelAddrs, ",")
	case c.Addr == "":
		return AddrDefault
	}
	return secret.RedactURL(c.Addr)
}

// ErrInvalidDialConfig marks settings that do not fit together.
var ErrInvalidDialConfig = errors.New("jobstore: invalid Redis settings")

// Validate checks that the settings fit together, naming the first that
// does not.
func (c DialConfig) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidDialConfig}, a...)...)
	}
	modes := 0
	for _, set := range []bool{c.Addr != "", c.SentinelMaster != "" || len(c.SentinelAddrs) > 0, len(c.ClusterAddrs) > 0} {
		if set {
			modes++
		}
	}
	if modes > 1 {
		return bad("give one of a Redis address, Sentinel (master and sentinels) or Cluster addresses")
	}
	if (c.SentinelMaster == "") != (len(c.SentinelAddrs) == 0) {
		return bad("Sentinel needs both the master name and the sentinel addresses")
	}
	if c.Password != "" && c.PasswordFile != "" {
		return bad("give the Redis password or a password file, not both")
	}
	if c.SentinelPassword != "" && c.SentinelPasswordFile != "" {
		return bad("give the Sentinel password or a password file, not both")
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return bad("a Redis client certificate needs both the certificate and the key file")
	}
	for _, a := range append(append([]string(nil), c.SentinelAddrs...), c.ClusterAddrs...) {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return bad("Sentinel and Cluster addresses are host:port, not %s", secret.RedactURL(a))
		}
	}
	if strings.Contains(c.Addr, "://") {
		u, err := redis.ParseURL(c.Addr)
		if err != nil {
			return bad("Redis URL %s: %v", secret.RedactURL(c.Addr), redactErr(err, c.Addr))
		}
		if u.Password != "" && (c.Password != "" || c.PasswordFile != "") {
			return bad("the Redis URL carries a password and a password is set too")
		}
	} else if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return bad("Redis address %s is neither host:port nor a redis:// or rediss:// URL", secret.RedactURL(c.Addr))
		}
	}
	return nil
}

// redactErr drops anything of raw from err's text (go-redis's URL errors
// may quote parts of it).
func redactErr(err error, raw string) string {
	msg := err.Error()
	if i := strings.Index(raw, "://"); i >= 0 {
		if j := strings.LastIndexByte(raw, '@'); j > i {
			if creds := raw[i+3 : j]; creds != "" {
				msg = strings.ReplaceAll(msg, creds, "xxxxx")
				if _, pw, ok := strings.Cut(creds, ":"); ok && pw != "" {
					msg = strings.ReplaceAll(msg, pw, "xxxxx")
				}
			}
		}
	}
	return msg
}

// tlsConfig returns the TLS settings of c (nil: no TLS), starting from
// base (a rediss:// URL's). With no ServerName the dialled host is
// verified (tls.DialWithDialer), each node's own.
func (c DialConfig) tlsConfig(base *tls.Config) (*tls.Config, error) {
	if base == nil && !c.TLS && c.CAFile == "" && c.CertFile == "" {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		t = base.Clone()
	}
	if c.CAFile != "" {
		pool, err := tlsfiles.CAPool(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("Redis %w", err)
		}
		t.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("Redis client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// Client builds the go-redis client of c (nothing is dialled yet).
func (c DialConfig) Client() (redis.UniversalClient, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	password := c.Password
	if c.PasswordFile != "" {
		s, err := secret.ReadFile("Redis password file", c.PasswordFile)
		if err != nil {
			return nil, err
		}
		password = s
	}
	switch {
	case len(c.ClusterAddrs) > 0:
		t, err := c.tlsConfig(nil)
		if err != nil {
			return nil, err
		}
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.ClusterAddrs, Username: c.Username, Password: password, TLSConfig: t}), nil
	case c.SentinelMaster != "":
		sentinelPassword := c.SentinelPassword
		if c.SentinelPasswordFile != "" {
			s, err := secret.ReadFile("Redis Sentinel password file", c.SentinelPasswordFile)
			if err != nil {
				return nil, err
			}
			sentinelPassword = s
		}
		t, err := c.tlsConfig(nil)
		if err != nil {
			return nil, err
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: c.SentinelMaster, SentinelAddrs: c.SentinelAddrs,
			SentinelPassword: sentinelPassword, Username: c.Username, Password: password, TLSConfig: t}), nil
	}
	addr := c.Addr
	if addr == "" {
		addr = AddrDefault
	}
	opts := &redis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		var err error
		if opts, err = redis.ParseURL(addr); err != nil {
			return nil, fmt.Errorf("Redis URL %s: %s", secret.RedactURL(addr), redactErr(err, addr))
		}
	}
	if c.Username != "" {
		opts.Username = c.Username
	}
	if password != "" {
		opts.Password = password
	}
	t, err := c.tlsConfig(opts.TLSConfig)
	if err != nil {
		return nil, err
	}
	opts.TLSConfig = t
	return redis.NewClient(opts), nil
}

// Dial connects to the Redis of dc with OpenTelemetry client spans, checks
// that it answers (and that the credentials work), and returns a Store on
// it. Close closes the client; the binaries use this, tests build clients
// themselves. Errors name the Redis with no secret.
func Dial(ctx context.Context, dc DialConfig, cfg Config) (*Store, error) {
	rdb, err := dc.Client()
	if err != nil {
		if errors.Is(err, ErrInvalidDialConfig) {
			return nil, err
		}
		return nil, fmt.Errorf("redis %s: %w", dc.Where(), err)
	}
	if err := redisotel.InstrumentTracing(rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis tracing: %w", err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w%s", dc.Where(), err, pingHint(err))
	}
	s, err := New(rdb, cfg)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s.closer = rdb
	return s, nil
}

// pingHint explains the server's terse refusals.
func pingHint(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOAUTH"), strings.Contains(msg, "AUTH"):
		return " (the server refused the credentials: check the Redis user and password or password file)"
	case strings.Contains(msg, "x509:"), strings.Contains(msg, "tls:"):
		return " (TLS: check the Redis CA file, the client certificate and the server's certificate)"
	case strings.Contains(msg, "connection reset by peer"), strings.Contains(msg, "EOF"):
		return " (if the server speaks TLS, use a rediss:// URL or turn Redis TLS on)"
	}
	return ""
}

// Close closes the Redis client that Dial opened; a Store made by New does
// not own its client, and Close leaves it open.
func (s *Store) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}
