package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
)

// `coordinator run` (make run) ends with exit status 0 when SIGINT (Ctrl-C)
// or SIGTERM stops it: after the demo with -keep, or in the middle of the
// demo; everything it started is stopped first.
func TestRunExitsZeroOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the single node as a process")
	}
	state := t.TempDir()
	for _, tc := range []struct {
		name    string
		sig     syscall.Signal
		keep    bool
		waitFor string // the line after which the signal is sent
		want    string
	}{
		{"keep/SIGINT", syscall.SIGINT, true, "serving until Ctrl-C", "stopping"},
		{"keep/SIGTERM", syscall.SIGTERM, true, "serving until Ctrl-C", "stopping"},
		// The first line comes before anything is started; the demo takes
		// seconds after it.
		{"demo/SIGINT", syscall.SIGINT, false, "c2cluster single node: state in", "interrupted; everything started was stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", "-no-jaeger", "-state-dir", state, "-redis", redisSrv.Addr,
				"-redis-prefix", jobstoretest.Prefix(), "-nats", freeAddr(t), "-listen", freeAddr(t)}
			if tc.keep {
				args = append(args, "-keep")
			}
			b, err := json.Marshal(args)
			require.NoError(t, err)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), envMain+"="+string(b))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			var out strings.Builder
			sc := bufio.NewScanner(stdout)
			signalled := false
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if !signalled && strings.Contains(sc.Text(), tc.waitFor) {
					require.NoError(t, cmd.Process.Signal(tc.sig))
					signalled = true
				}
			}
			err = cmd.Wait()
			require.True(t, signalled, "never saw %q:\n%s\n%s", tc.waitFor, out.String(), stderr.String())
			require.NoError(t, err, "exit status after %v:\n%s\n%s", tc.sig, out.String(), stderr.String())
			require.Contains(t, out.String(), tc.want)
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}
