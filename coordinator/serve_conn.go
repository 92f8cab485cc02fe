package main

import (
	"flag"
	"log/slog"

	"github.com/c2cluster/c2cluster/pkg/connflags"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
)

// connSettings are serve's NATS and Redis credentials and TLS (flags and
// $C2_NATS_* / $C2_REDIS_* variables, pkg/connflags) beside -nats and
// -redis.
type connSettings struct {
	nats  queue.ConnConfig
	redis jobstore.DialConfig
}

func (c *connSettings) register(fs *flag.FlagSet) error {
	return connflags.Register(fs, nil, connflags.NATS(&c.nats), connflags.Redis(&c.redis))
}

// natsConn is the NATS connection of url: -nats with the credentials, or
// the embedded server's (loopback, none).
func (c *connSettings) natsConn(url string, embedded bool, log *slog.Logger) queue.ConnConfig {
	n := c.nats
	if embedded {
		n = queue.ConnConfig{}
	}
	n.URL, n.Name, n.Logger = url, "c2-coordinator", log
	return n
}

// redisDial is the Redis connection of addr (-redis; empty: the default,
// unless Sentinel or Cluster is set).
func (c *connSettings) redisDial(addr string) jobstore.DialConfig {
	r := c.redis
	r.Addr = addr
	if addr == "" && r.SentinelMaster == "" && len(r.SentinelAddrs) == 0 && len(r.ClusterAddrs) == 0 {
		r.Addr = jobstore.AddrDefault
	}
	return r
}

// check refuses settings that do not fit together, before anything starts.
func (c *connSettings) check(natsURL, redisAddr string) error {
	if err := c.natsConn(natsURL, false, nil).Validate(); err != nil {
		return err
	}
	return c.redisDial(redisAddr).Validate()
}
