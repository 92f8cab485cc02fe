// Package jobstoretest runs a private, real redis-server for tests of
// packages that use pkg/jobstore. The binary must be on PATH (Debian:
// redis-server); nothing is faked.
package jobstoretest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/c2cluster/c2cluster/pkg/testcerts"
)

// Redis is a running redis-server child process.
type Redis struct {
	Addr string
	opts Options
	cmd  *exec.Cmd
	dir  string
	done chan error
}

// Options secure a test server the way a production one is.
type Options struct {
	// Password is the default user's password (requirepass).
	Password string
	// Users are ACL users: name → password, each allowed every key,
	// channel and command.
	Users map[string]string
	// TLS, when set, makes the server speak TLS only (its plain port is
	// off) with TLS.ServerCert; clients are verified against TLS.CAFile
	// when AuthClients is set.
	TLS         *testcerts.Set
	AuthClients bool
}

// Start launches redis-server on a free loopback port with persistence off
// and waits (with a deadline) until it answers PING. Call Stop when done.
func Start() (*Redis, error) { return StartWith(Options{}) }

// StartWith is Start with a password, ACL users or TLS.
func StartWith(o Options) (*Redis, error) {
	return launch(o, func(string, int) ([]string, error) { return nil, nil })
}

// launch starts redis-server with o's arguments and extra's (which may
// write files into the server's folder) on a free port, trying another
// port when one is taken in between.
func launch(o Options, extra func(dir string, port int) ([]string, error)) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("jobstoretest: redis-server not on PATH (apt-get install redis-server): %w", err)
	}
	var last error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "c2-redis-")
		if err != nil {
			return nil, err
		}
		more, err := extra(dir, port)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port), opts: o, dir: dir, done: make(chan error, 1)}
		r.cmd = exec.Command(bin, append(more, append([]string{"--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", dir, "--protected-mode", "yes", "--loglevel", "warning"}, o.args(port)...)...)...)
		if err := r.cmd.Start(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("jobstoretest: start redis-server: %w", err)
		}
		go func() { r.done <- r.cmd.Wait() }()
		if last = r.waitReady(10 * time.Second); last == nil {
			return r, nil
		}
		r.Stop() // port taken in between, or slow start: try another port
	}
	return nil, fmt.Errorf("jobstoretest: redis-server did not become ready: %v", last)
}

// StartSentinel starts a Redis Sentinel that monitors master under name
// (quorum 1), authenticating to it with master's password. Its Addr is the
// sentinel's; Stop it when done.
func StartSentinel(master *Redis, name string) (*Redis, error) {
	return launch(Options{}, func(dir string, port int) ([]string, error) {
		host, mport, _ := net.SplitHostPort(master.Addr)
		conf := fmt.Sprintf("sentinel monitor %s %s %s 1\n", name, host, mport)
		if master.opts.Password != "" {
			conf += fmt.Sprintf("sentinel auth-pass %s %s\n", name, master.opts.Password)
		}
		path := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		return []string{path, "--sentinel"}, nil
	})
}

// StartCluster starts a Redis Cluster of n masters (no replicas), the hash
// slots split evenly, and waits until every node reports cluster_state:ok.
// Stop each node when done.
func StartCluster(n int, o Options) ([]*Redis, error) {
	var nodes []*Redis
	stop := func() {
		for _, r := range nodes {
			r.Stop()
		}
	}
	for i := 0; i < n; i++ {
		r, err := launch(o, func(dir string, port int) ([]string, error) {
			return []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf")}, nil
		})
		if err != nil {
			stop()
			return nil, err
		}
		nodes = append(nodes, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const slots = 16384
	for i, r := range nodes {
		c := redis.NewClient(r.Options())
		err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", i*slots/n, (i+1)*slots/n-1).Err()
		if err == nil && i > 0 {
			host, port, _ := net.SplitHostPort(nodes[0].Addr)
			err = c.Do(ctx, "CLUSTER", "MEET", host, port).Err()
		}
		c.Close()
		if err != nil {
			stop()
			return nil, fmt.Errorf("jobstoretest: cluster setup: %w", err)
		}
	}
	for _, r := range nodes {
		c := redis.NewClient(r.Options())
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				break
			}
			if ctx.Err() != nil {
				c.Close()
				stop()
				return nil, fmt.Errorf("jobstoretest: cluster not ok within 30s: %v %q", err, info)
			}
			time.Sleep(50 * time.Millisecond) // poll interval while the nodes gossip
		}
		c.Close()
	}
	return nodes, nil
}

// args are the server's arguments for o on port.
func (o Options) args(port int) []string {
	var a []string
	if o.TLS != nil {
		a = append(a, "--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cert-file", o.TLS.ServerCert,
			"--tls-key-file", o.TLS.ServerKey, "--tls-ca-cert-file", o.TLS.CAFile, "--tls-auth-clients", map[bool]string{true: "yes", false: "no"}[o.AuthClients])
	} else {
		a = append(a, "--port", strconv.Itoa(port))
	}
	if o.Password != "" {
		a = append(a, "--requirepass", o.Password)
	}
	for name, pw := range o.Users {
		a = append(a, "--user", name, "on", ">"+pw, "~*", "&*", "+@all")
	}
	return a
}

// Options returns go-redis client options of r: its address, the default
// user's password and, for a TLS server, its CA and (AuthClients) the
// client certificate.
func (r *Redis) Options() *redis.Options {
	o := &redis.Options{Addr: r.Addr, Password: r.opts.Password}
	if t := r.opts.TLS; t != nil {
		pool := x509.NewCertPool()
		if b, err := os.ReadFile(t.CAFile); err == nil {
			pool.AppendCertsFromPEM(b)
		}
		o.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		if r.opts.AuthClients {
			if c, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey); err == nil {
				o.TLSConfig.Certificates = []tls.Certificate{c}
			}
		}
	}
	return o
}

func (r *Redis) waitReady(within time.Duration) error {
	o := r.Options()
	o.MaxRetries, o.DialTimeout = -1, 200*time.Millisecond
	c := redis.NewClient(o)
	defer c.Close()
	deadline := time.Now().Add(within)
	for {
		select {
		case err := <-r.done:
			r.done <- err
			return fmt.Errorf("redis-server exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // poll interval while the server boots
	}
}

// Stop kills the server and removes its folder.
func (r *Redis) Stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	os.RemoveAll(r.dir)
}

// Client returns a client of r, closed at t's cleanup.
func (r *Redis) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(r.Options())
	t.Cleanup(func() { c.Close() })
	return c
}

// Prefix returns a fresh key prefix so parallel tests share one server
// without seeing each other's keys.
func Prefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Main is the TestMain of a package whose tests need Redis: it starts a
// private server, hands it to ready (which may prepare more, returning a
// cleanup or an error), runs the tests under goleak's leak check with opts,
// then cleans up, stops the server and exits with the tests' code.
func Main(m *testing.M, ready func(*Redis) (cleanup func(), err error), opts ...goleak.Option) {
	srv, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cleanup, err := ready(srv)
	if err != nil {
		srv.Stop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(runner{m, func() {
		if cleanup != nil {
			cleanup()
		}
		srv.Stop()
	}}, opts...)
}

// runner runs the tests, then after, before goleak looks for leaks.
type runner struct {
	m     *testing.M
	after func()
}

func (r runner) Run() int {
	code := r.m.Run()
	r.after()
	return code
}
