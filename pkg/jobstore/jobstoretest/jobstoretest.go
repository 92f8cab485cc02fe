// Package jobstoretest runs a private, real redis-server for tests of
// packages that use pkg/jobstore. The binary must be on PATH (Debian:
// redis-server); nothing is faked.
package jobstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// Redis is a running redis-server child process.
type Redis struct {
	Addr string
	cmd  *exec.Cmd
	dir  string
	done chan error
}

// Start launches redis-server on a free loopback port with persistence off
// and waits (with a deadline) until it answers PING. Call Stop when done.
func Start() (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("jobstoretest: redis-server not on PATH (apt-get install redis-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "c2-redis-")
	if err != nil {
		return nil, err
	}
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, done: make(chan error, 1)}
		r.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", dir, "--protected-mode", "yes", "--loglevel", "warning")
		if err := r.cmd.Start(); err != nil {
			return nil, fmt.Errorf("jobstoretest: start redis-server: %w", err)
		}
		go func() { r.done <- r.cmd.Wait() }()
		if err := r.waitReady(10 * time.Second); err == nil {
			return r, nil
		}
		r.Stop() // port taken in between, or slow start: try another port
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("jobstoretest: redis-server did not become ready")
}

func (r *Redis) waitReady(within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
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
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
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
