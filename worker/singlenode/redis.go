package singlenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Redis the single node uses: one found running, or a private
// redis-server child process.
type Redis struct {
	Addr string
	proc *child // the private server; nil for a shared one
}

// pingRedis reports whether a Redis answers PING at addr.
func pingRedis(ctx context.Context, addr string) bool {
	// A plain TCP dial first: when nothing listens (the usual case on a
	// machine without a Redis service) the client would retry its dial and
	// log each failure to the terminal.
	d := net.Dialer{Timeout: 300 * time.Millisecond}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	conn.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return c.Ping(ctx).Err() == nil
}

// EnsureRedis returns a Redis: the one at addr when it answers, else a
// private redis-server started in dir (append-only file on, noeviction) on
// a free loopback port. A private server is stopped by Stop.
func EnsureRedis(ctx context.Context, addr, dir string, progress io.Writer) (*Redis, error) {
	if addr != "" && pingRedis(ctx, addr) {
		fmt.Fprintf(progress, "redis: using the Redis running at %s\n", addr)
		return &Redis{Addr: addr}, nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis: nothing answers at %s and redis-server is not installed (Debian: apt-get install redis-server; `make run` installs it): %w", addr, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port)}
	fmt.Fprintf(progress, "redis: starting a private redis-server on %s (data in %s)\n", r.Addr, dir)
	logPath := filepath.Join(dir, "redis.log")
	r.proc, err = startChild(bin, []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--save", "", "--maxmemory-policy", "noeviction", "--protected-mode", "yes"}, logPath)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !pingRedis(ctx, r.Addr) {
		if exited, err := r.proc.exited(); exited {
			return nil, fmt.Errorf("redis: redis-server exited at start (%v); see %s", err, logPath)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.Stop()
			return nil, errors.New("redis: redis-server did not answer within 15s")
		}
		time.Sleep(50 * time.Millisecond) // poll interval while the server boots
	}
	return r, nil
}

// Stop stops a private server (SIGTERM: it rewrites nothing, the AOF is
// already on disk) and waits for it; a shared one is left alone.
func (r *Redis) Stop() {
	if r != nil {
		r.proc.stop()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portFree reports whether addr can be listened on now.
func portFree(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}
