package cuzk

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/c2cluster/c2cluster/coordinator/server"
)

// The addresses a cuzk daemon listens on by default (cuzk-core's
// DaemonConfig and cuzk-bench): where a Curio node configured for a local
// daemon connects.
const (
	DefaultTCPAddr    = "127.0.0.1:9820"
	DefaultSocketPath = "/run/curio/cuzk.sock"
)

// SocketMode is the permission of the unix socket: the coordinator's user
// and group may connect.
const SocketMode fs.FileMode = 0o660

// NewHTTPServer returns an HTTP server of h that speaks HTTP/1.1 and HTTP/2
// without TLS (gRPC's h2c with prior knowledge, what Curio's grpc-go client
// speaks), on a TCP listener as on a unix socket.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, Protocols: server.Protocols(), ReadHeaderTimeout: 10 * time.Second}
}

// ListenUnix listens on a unix socket at path, creating its folder. A
// socket file that no process answers on any more (left by a crash) is
// removed first; a socket something still listens on, or a file that is
// not a socket, is an error. The socket file is removed when the listener
// closes.
func ListenUnix(path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("cuzk: empty unix socket path")
	}
	switch fi, err := os.Lstat(path); {
	case err == nil && fi.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("cuzk: %s exists and is not a unix socket", path)
	case err == nil:
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("cuzk: unix socket %s is in use by another process", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("cuzk: removing the stale unix socket %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cuzk: unix socket %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cuzk: unix socket folder: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cuzk: listen on unix socket %s: %w", path, err)
	}
	if err := os.Chmod(path, SocketMode); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("cuzk: unix socket %s: %w", path, err)
	}
	return ln, nil
}
