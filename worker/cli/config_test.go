package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func load(t *testing.T, args []string, env map[string]string) (*File, error) {
	t.Helper()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return Load(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, fs)
}

func TestLoadPrecedenceFileEnvFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
nats: nats://file:4222
redis: file:6379
shapes: [32GiB, 64GiB]
params_dir: /params
backend: cuda
devices: [0, 1]
gpu_workers_per_device: 3
interlock: split
vram_budget_bytes: 1000
drain_timeout: 90s
ack_wait: 2m
memory_limit: 100GiB
`), 0o600))

	f, err := load(t, []string{"-config", path}, nil)
	require.NoError(t, err)
	require.Equal(t, "nats://file:4222", f.NATS.URL)
	require.Equal(t, []string{"32GiB", "64GiB"}, f.Shapes)
	require.Equal(t, []int{0, 1}, f.Devices)
	require.Equal(t, 3, f.GPUWorkersPerDevice)
	require.Equal(t, "split", f.Interlock)
	require.EqualValues(t, 1000, f.VRAMBudget)
	require.Equal(t, 90*time.Second, f.DrainTimeout)
	require.Equal(t, 2*time.Minute, f.AckWait)
	require.Equal(t, MetricsListenDefault, f.MetricsListen, "defaults fill what nobody set")
	require.True(t, *f.OTLPInsecure)
	require.Equal(t, "100GiB", f.MemoryLimit)

	// The environment overrides the file; flags override both.
	env := map[string]string{"C2_REDIS_ADDR": "env:6379", "C2_INTERLOCK": "exclusive", "C2_DEVICES": "2", "C2_WORKER_CONFIG": path}
	f, err = load(t, []string{"-interlock", "none", "-shapes", "2KiB", "-trusted-params", "-otlp-insecure=false"}, env)
	require.NoError(t, err)
	require.Equal(t, "nats://file:4222", f.NATS.URL, "file via $C2_WORKER_CONFIG")
	require.Equal(t, "env:6379", f.Redis.Addr)
	require.Equal(t, []int{2}, f.Devices)
	require.Equal(t, "none", f.Interlock)
	require.Equal(t, []string{"2KiB"}, f.Shapes)
	require.True(t, f.TrustedParams, "a bare boolean flag means true")
	require.False(t, *f.OTLPInsecure)
	require.Equal(t, "100GiB", f.MemoryLimit)
	f, err = load(t, []string{"-memory-limit", "off"}, map[string]string{"C2_MEMORY_LIMIT": "64GiB"})
	require.NoError(t, err)
	require.Equal(t, "off", f.MemoryLimit)
	f, err = load(t, nil, map[string]string{"C2_MEMORY_LIMIT": "64GiB"})
	require.NoError(t, err)
	require.Equal(t, "64GiB", f.MemoryLimit)
	f, err = load(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, "auto", f.MemoryLimit, "the default")
}

func TestLoadErrorsNameTheSetting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("interlok: compute\n"), 0o600))
	_, err := load(t, []string{"-config", path}, nil)
	require.ErrorContains(t, err, "interlok")

	_, err = load(t, []string{"-drain-timeout", "soon"}, nil)
	require.ErrorContains(t, err, "-drain-timeout")
	_, err = load(t, nil, map[string]string{"C2_DEVICES": "0,x"})
	require.ErrorContains(t, err, "C2_DEVICES")
	_, err = load(t, []string{"-memory-limit", "lots"}, nil)
	require.ErrorContains(t, err, "-memory-limit")
	_, err = load(t, nil, map[string]string{"C2_MEMORY_LIMIT": "-5GiB"})
	require.ErrorContains(t, err, "C2_MEMORY_LIMIT")
	require.NoError(t, os.WriteFile(path, []byte("memory_limit: plenty\n"), 0o600))
	_, err = load(t, []string{"-config", path}, nil)
	require.ErrorContains(t, err, "memory_limit")
	_, err = load(t, []string{"extra"}, nil)
	require.ErrorContains(t, err, "unexpected arguments")
	_, err = load(t, []string{"-config", filepath.Join(t.TempDir(), "missing.yaml")}, nil)
	require.ErrorContains(t, err, "missing.yaml")
}

// Main refuses a configuration the worker cannot run, with exit code 2 for
// usage errors and 1 for a worker that cannot start.
func TestMainExitCodes(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	require.Equal(t, 2, Main([]string{"-ack-wait", "x"}, io.Discard, io.Discard, env))
	require.Equal(t, 0, Main([]string{"-h"}, io.Discard, io.Discard, env))
	// Nothing listens on port 1: the worker fails to connect and says so.
	// It sets the Go soft memory limit first, and logs it.
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	var out safeBuffer
	require.Equal(t, 1, Main([]string{"-nats", "nats://127.0.0.1:1", "-metrics-listen", "off", "-memory-limit", "3000GiB"}, io.Discard, &out, env))
	require.Contains(t, out.String(), "127.0.0.1:1")
	require.Equal(t, int64(3000)<<30, debug.SetMemoryLimit(-1))
	require.Contains(t, out.String(), "worker: Go soft memory limit 3000.0 GiB")
}

// The example configuration shipped in deploy/config loads (every key is
// known) and says what it claims.
func TestExampleConfigLoads(t *testing.T) {
	f, err := load(t, []string{"-config", "../../deploy/config/worker.yaml"}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"32GiB"}, f.Shapes)
	require.Equal(t, "compute", f.Interlock)
	require.Equal(t, 3, f.GPUWorkersPerDevice)
	require.Equal(t, 2*time.Minute, f.DrainTimeout)
	require.Equal(t, "auto", f.MemoryLimit)
}
